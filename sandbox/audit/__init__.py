"""Rehearse your own binaries: which of them break in 2038. The static audit
(no boot): inputs (ELF files, trees, .debs, userland packages) expanded,
each ELF file read, its time symbols and system-call instructions found, a
verdict per file. The runtime audit, which boots, is to join it."""
