"""System-call instructions in a file's executable bytes: a program that
makes its own system calls (a static binary's C library, Go, klibc, inline
assembly) passes times the symbol lists never see, so it needs the runtime
audit.

    scan(machine, code) -> {"int 0x80": 12, ...}

A byte pattern, not a disassembler: on ARM the instructions are aligned
words and half-words, so a match is an instruction (or a literal in the
code, rarely); on x86 a pattern can also sit inside a longer instruction,
so a large program may show a site or two that is not one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[bytes]
    align: int  # a match counts only at an offset that is a multiple of this


def _pattern(name: str, regex: bytes, align: int = 1) -> Pattern:
    return Pattern(name, re.compile(regex, re.DOTALL), align)


INT80 = _pattern("int 0x80", rb"\xcd\x80")
X86_SYSCALL = _pattern("syscall", rb"\x0f\x05")
SYSENTER = _pattern("sysenter", rb"\x0f\x34")
# glibc's own i386 way into the kernel: call *%gs:0x10 (_dl_sysinfo, the vDSO)
GS_SYSINFO = _pattern("call *%gs:0x10", rb"\x65\xff\x15\x10\x00\x00\x00")
# EABI (what armhf runs; the old ABI's swi 0x9xxxxx does not run there):
# svc 0, in ARM mode (condition "always") and in Thumb
ARM_SVC = _pattern("svc 0 (arm)", rb"\x00\x00\x00\xef", 4)
THUMB_SVC = _pattern("svc 0 (thumb)", rb"\x00\xdf", 2)

PATTERNS: dict[str, tuple[Pattern, ...]] = {
    # no `syscall` on i386: Linux offers it to 32-bit programs only on AMD
    # CPUs, through the vDSO; as bytes it mostly sits inside other instructions
    "i386": (INT80, SYSENTER, GS_SYSINFO),
    "x86_64": (X86_SYSCALL, INT80, SYSENTER),  # int 0x80 from 64-bit code takes the 32-bit ABI
    "armhf": (ARM_SVC, THUMB_SVC),
}


def _count(pattern: Pattern, code: bytes) -> int:
    return sum(1 for m in pattern.regex.finditer(code) if m.start() % pattern.align == 0)


def scan(machine: str, code: tuple[bytes, ...]) -> dict[str, int]:
    """Sites per instruction, only those found, in the table's order."""
    counts = {p.name: sum(_count(p, part) for part in code) for p in PATTERNS[machine]}
    return {name: n for name, n in counts.items() if n}


def time32_capable(machine: str, sites: dict[str, int]) -> bool:
    """Whether those sites can reach the kernel's 32-bit time calls: every
    one on a 32-bit machine; on x86_64 only int 0x80 (the i386 ABI)."""
    return bool(sites) and (machine != "x86_64" or INT80.name in sites)
