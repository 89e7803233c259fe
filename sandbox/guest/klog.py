"""Kernel console classification: a table of failure patterns, as LAVA keeps."""
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
        ("bug", r"\bBUG: |kernel BUG at"),
        ("warning", r"WARNING: CPU: \d+ PID: \d+ at|------------\[ cut here \]"),
        ("hung-task", r"INFO: task \S+ blocked for more than \d+ seconds"),
        ("rcu-stall", r"rcu: INFO: \S+ detected stalls"),
    )
)
FATAL = frozenset({"panic"})


@dataclass(frozen=True)
class Finding:
    kind: str
    line_number: int
    line: str

    def __str__(self) -> str:
        return f"{self.kind} at line {self.line_number}: {self.line}"


def scan(lines: Iterable[str]) -> list[Finding]:
    """Every line that matches a failure pattern."""
    findings = []
    for number, line in enumerate(lines, 1):
        for kind, pattern in FAILURE_PATTERNS:
            if pattern.search(line):
                findings.append(Finding(kind, number, line.rstrip()))
                break
    return findings


def panicked(findings: Iterable[Finding]) -> bool:
    return any(f.kind in FATAL for f in findings)


_KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")


def kernel_lines(console: Iterable[str]) -> list[str]:
    """The kernel's own messages in a console log (printk timestamps)."""
    return [line for line in console if _KERNEL_LINE.match(line)]
