"""System-call instructions in a file's executable bytes: a program that
makes its own system calls (a static binary's C library, Go, klibc, inline
assembly) passes times the symbol lists never see, so it needs the runtime
audit.

    scan(machine, code) -> {"int 0x80": 12, ...}     byte patterns, fast
    confirm(machine, path, sites) -> {...}           x86: objdump's count

First a byte pattern over the executable sections. On ARM the instructions
are aligned words and half-words, so a match is an instruction (or, rarely,
a literal among the code). On x86 a pattern also sits inside longer
instructions: seen here, 1 to 5 false "int 0x80" in most of Debian 12's
amd64 programs. So an x86 file with a match is disassembled (binutils'
objdump -d, a linear sweep) and its instructions counted instead; only a
few files per userland get that far.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[bytes]
    align: int  # a match counts only at an offset that is a multiple of this
    # when set, a match counts only if this also matches within `window`
    # bytes before it, at the same alignment (ARM: the syscall number put in r7)
    before: re.Pattern[bytes] | None = None
    window: int = 0


def _pattern(name: str, regex: bytes, align: int = 1, before: bytes | None = None, window: int = 0) -> Pattern:
    return Pattern(name, re.compile(regex, re.DOTALL), align,
                   re.compile(before, re.DOTALL) if before else None, window)


INT80 = _pattern("int 0x80", rb"\xcd\x80")
X86_SYSCALL = _pattern("syscall", rb"\x0f\x05")
SYSENTER = _pattern("sysenter", rb"\x0f\x34")
# glibc's own i386 way into the kernel: call *%gs:0x10 (_dl_sysinfo, the vDSO)
GS_SYSINFO = _pattern("call *%gs:0x10", rb"\x65\xff\x15\x10\x00\x00\x00")
# EABI (what armhf runs; the old ABI's swi 0x9xxxxx does not run there):
# svc 0, in ARM mode (condition "always") and in Thumb, counted only where
# the system-call number is put in r7 shortly before it. Without that test,
# tables of half-words among Thumb code (a switch's offsets) read as
# "svc 0": seen here in Debian 12's ptx and libpcre2.
# ARM: mov r7, #imm (e3a070xx); mov r7, rN (e1a0700N); ldr r7, [...] (e59f7xxx)
ARM_R7 = rb".[\x70-\x7f]\xa0\xe3|.\x70\xa0\xe1|.[\x70-\x7f]\x9f\xe5"
# Thumb: movs r7, #imm8 (27xx); mov r7, rN (46xx, Rd=7); mov.w/movw r7, #imm
# (f04f 07xx / f24x 07xx); ldr r7, [pc, #imm] (4fxx)
THUMB_R7 = rb".\x27|[\x07\x0f\x17\x1f\x27\x2f\x37\x3f\x47\x4f\x57\x5f\x67\x6f\x77\x7f]\x46|[\x4f\x40-\x4f]\xf0.\x07|[\x40-\x4f]\xf2.\x07|.\x4f"
ARM_SVC = _pattern("svc 0 (arm)", rb"\x00\x00\x00\xef", 4, ARM_R7, 16)
THUMB_SVC = _pattern("svc 0 (thumb)", rb"\x00\xdf", 2, THUMB_R7, 16)

PATTERNS: dict[str, tuple[Pattern, ...]] = {
    # no `syscall` on i386: Linux offers it to 32-bit programs only on AMD
    # CPUs, through the vDSO; as bytes it mostly sits inside other instructions
    "i386": (INT80, SYSENTER, GS_SYSINFO),
    "x86_64": (X86_SYSCALL, INT80, SYSENTER),  # int 0x80 from 64-bit code takes the 32-bit ABI
    "armhf": (ARM_SVC, THUMB_SVC),
}


def _preceded(pattern: Pattern, code: bytes, at: int) -> bool:
    if pattern.before is None:
        return True
    start = max(0, at - pattern.window)
    start += (at - start) % pattern.align
    return any(pattern.before.match(code, pos, at) for pos in range(start, at, pattern.align))


def _count(pattern: Pattern, code: bytes) -> int:
    return sum(1 for m in pattern.regex.finditer(code)
               if m.start() % pattern.align == 0 and _preceded(pattern, code, m.start()))


def scan(machine: str, code: tuple[bytes, ...]) -> dict[str, int]:
    """Sites per instruction, only those found, in the table's order."""
    counts = {p.name: sum(_count(p, part) for part in code) for p in PATTERNS[machine]}
    return {name: n for name, n in counts.items() if n}


# objdump -d's mnemonics, for the x86 patterns (name -> regex over its lines)
X86_MNEMONICS = {
    INT80.name: re.compile(r"\tint\s+\$0x80\b"),
    X86_SYSCALL.name: re.compile(r"\tsyscall\b"),
    SYSENTER.name: re.compile(r"\tsysenter\b"),
    GS_SYSINFO.name: re.compile(r"\tcall\s+\*%gs:0x10\b"),
}
DISASSEMBLED = ("i386", "x86_64")


def confirm(machine: str, path: Path, sites: dict[str, int]) -> dict[str, int]:
    """The x86 sites objdump finds as instructions (the byte counts as they
    are elsewhere, or when there is no objdump)."""
    objdump = shutil.which("objdump")
    if not sites or machine not in DISASSEMBLED or objdump is None:
        return sites
    listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(path)], capture_output=True, text=True,
                             check=False).stdout
    wanted = {name: X86_MNEMONICS[name] for name in (p.name for p in PATTERNS[machine])}
    counts = {name: len(regex.findall(listing)) for name, regex in wanted.items()}
    return {name: n for name, n in counts.items() if n}


def time32_capable(machine: str, sites: dict[str, int]) -> bool:
    """Whether those sites can reach the kernel's 32-bit time calls: every
    one on a 32-bit machine; on x86_64 only int 0x80 (the i386 ABI)."""
    return bool(sites) and (machine != "x86_64" or INT80.name in sites)
