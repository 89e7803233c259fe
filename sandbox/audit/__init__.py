"""Rehearse your own binaries: which of them break in 2038. The static audit
(no boot): inputs (ELF files, trees, .debs, userland packages) expanded,
each ELF file read, its time symbols and system-call instructions found, a
verdict per file. The runtime audit (runtime*.py) boots each machine once,
runs every program across the rollover and joins a runtime verdict to each
file's record."""
