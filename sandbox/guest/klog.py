"""Kernel log classification: a table of failure patterns, as LAVA keeps.

Only kernel output counts: a line with a printk timestamp ("[    1.234567] ")
that is not the kernel echoing its own command line ("Command line:",
"Kernel command line:", "Unknown kernel command line parameters ..."), so
that words a scenario adds with `kernel-args`, or anything the guest's init
prints, are never taken for a panic.

A panic or an oops ends a run (FATAL: the console is watched while it runs,
sandbox/guest/qemu.py); every other finding fails a completed run unless the
scenario expects it (`expect-kernel`, sandbox/scenario/model.py KERNEL_FINDINGS).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

# (kind, pattern) — kinds in order of severity; the first match of a line wins.
FAILURE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("panic", r"Kernel panic - not syncing"),
        ("oops", r"\bOops\b|general protection fault|Unable to handle kernel"),
        ("kasan", r"BUG: KASAN: |\bKASAN: \S+ in range"),
        ("ubsan", r"\bUBSAN: \S+"),
        ("bug", r"\bBUG: |kernel BUG at"),
        ("warning", r"WARNING: CPU: \d+ PID: \d+ at"),
        ("hung-task", r"INFO: task \S+ blocked for more than \d+ seconds"),
        ("rcu-stall", r"rcu: INFO: \S+ detected stalls"),
    )
)
FATAL = frozenset({"panic", "oops"})
"""Findings that end a run at once: the guest cannot be trusted after them."""
KINDS = tuple(kind for kind, _ in FAILURE_PATTERNS)

_TIMESTAMP = re.compile(r"\[\s*\d+\.\d+\] ?")
_ECHOES = ("Command line:", "Kernel command line:", "Unknown kernel command line parameters")


@dataclass(frozen=True)
class Finding:
    kind: str
    line_number: int
    line: str
    log: str = "console.log"  # the evidence file the line number refers to

    def __str__(self) -> str:
        return f"{self.kind} at {self.log} line {self.line_number}: {self.line}"


def kernel_message(line: str) -> str | None:
    """The message of a line of kernel output (after its printk timestamp),
    or None for anything else: init's lines, the command line's echo."""
    stamp = _TIMESTAMP.search(line)
    if stamp is None:
        return None
    message = line[stamp.end():]
    return None if message.startswith(_ECHOES) else message


def classify_line(line: str) -> str | None:
    """The kind of failure a line of kernel output reports, or None."""
    message = kernel_message(line)
    if message is None:
        return None
    return next((kind for kind, pattern in FAILURE_PATTERNS if pattern.search(message)), None)


def scan(lines: Iterable[str], log: str = "console.log") -> list[Finding]:
    """Every line of kernel output that matches a failure pattern."""
    findings = []
    for number, line in enumerate(lines, 1):
        kind = classify_line(line)
        if kind is not None:
            findings.append(Finding(kind, number, line.rstrip(), log))
    return findings


def scan_logs(console: Iterable[str], dmesg: Iterable[str], dmesg_log: str = "kernel.log") -> list[Finding]:
    """The findings of the console, then those of dmesg that the console did
    not show (a message below the console's log level)."""
    found = scan(console)
    seen = {_message_text(f.line) for f in found}
    return found + [f for f in scan(dmesg, dmesg_log) if _message_text(f.line) not in seen]


def _message_text(line: str) -> str:
    stamp = _TIMESTAMP.search(line)
    return line[stamp.start():].strip() if stamp else line.strip()


def panicked(findings: Iterable[Finding]) -> bool:
    return any(f.kind == "panic" for f in findings)


def fatal(findings: Iterable[Finding]) -> Finding | None:
    """The finding that ended the run: the first panic, else the first oops."""
    findings = list(findings)
    return next((f for kind in ("panic", "oops") for f in findings if f.kind == kind), None)


def kernel_lines(console: Iterable[str]) -> list[str]:
    """The kernel's own messages in a console log (printk timestamps)."""
    return [line for line in console if _TIMESTAMP.match(line)]
