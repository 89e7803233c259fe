"""The static verdict of one file, from its facts alone (pure).

    static_verdict(evidence) -> (verdict, reason)

The rules are a table read top down; the first that holds decides.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

TIME64 = "time64"  # 64-bit time_t: the 64-bit ABI, or only the __*_time64 names
TIME32 = "time32"  # binds the 32-bit time_t interfaces
MIXED = "mixed"  # binds both: parts built each way
NO_TIME_USE = "no-time-use"  # dynamic, binds no time interface, makes no system call itself
NEEDS_RUNTIME = "unknown-needs-runtime"  # its own system calls, and no symbol decides
VERDICTS = (TIME32, MIXED, NEEDS_RUNTIME, TIME64, NO_TIME_USE)
"""Worst first: the order the summary counts them in."""


@dataclass(frozen=True)
class Evidence:
    bits: int
    static: bool
    time32: tuple[str, ...]  # time32 names bound
    time64: tuple[str, ...]  # time64 redirects bound
    syscall_sites: dict[str, int]  # system-call instructions in its own code
    time32_capable: bool  # whether those, or syscall(), can reach the kernel's 32-bit time calls
    libc: str  # sandbox/audit/elf.py LIBC_MARKS


T = TypeVar("T")
Rule = tuple[Callable[[Evidence], bool], str, Callable[[Evidence], str]]
OWN_CALLS = ("klibc", "go")
"""Libraries and runtimes that call the kernel themselves, with no symbol a
program binds for it: their programs' time calls are invisible here."""

RULES: tuple[Rule, ...] = (
    (lambda e: e.bits == 64 and not e.time32_capable, TIME64,
     lambda e: "64-bit ABI: time_t is 64-bit"),
    (lambda e: bool(e.time32 and e.time64), MIXED,
     lambda e: f"{len(e.time32)} time32 and {len(e.time64)} time64 names"),
    (lambda e: bool(e.time32), TIME32,
     lambda e: f"{len(e.time32)} time32 name(s)"),
    (lambda e: e.time32_capable, NEEDS_RUNTIME,
     lambda e: "makes its own system calls" + (" (static: symbols cannot tell)" if e.static else "")),
    (lambda e: e.libc in OWN_CALLS, NEEDS_RUNTIME,
     lambda e: f"{e.libc}: calls the kernel itself"),
    (lambda e: e.static, NEEDS_RUNTIME,
     lambda e: "static, no system-call instruction found: its calls are unknown"),
    (lambda e: bool(e.time64), TIME64,
     lambda e: f"{len(e.time64)} time64 name(s), no time32 one"),
    (lambda e: True, NO_TIME_USE,
     lambda e: "binds no time interface"),
)


def first_rule(rules: tuple[tuple[Callable[[T], bool], str, Callable[[T], str]], ...], facts: T) -> tuple[str, str]:
    """(verdict, reason) of the first rule that holds: a table's last rule always does."""
    for holds, verdict, reason in rules:
        if holds(facts):
            return verdict, reason(facts)
    raise AssertionError("the last rule always holds")


def static_verdict(evidence: Evidence) -> tuple[str, str]:
    return first_rule(RULES, evidence)
