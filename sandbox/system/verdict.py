"""A verdict per unit, from its facts across the rollover (pure).

    UnitFacts   what was seen of one unit: its state before and after, its
                restarts, its journal and syslog lines that say something went
                wrong, the series kernel's time32 calls and truncations of its
                processes (mapped by cgroup), a periodic job's missed runs
    judge(facts) -> UnitVerdict(verdict, reason): the first of RULES that holds

Verdicts: ok, broke (with the line that decided), calls-time32 (nothing
broke, but its processes use the 32-bit time calls the series kernel
counted), not-exercised (never active in the span: nothing to judge).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

VERDICTS = ("ok", "broke", "calls-time32", "not-exercised")

ERROR_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(text)) for name, text in (
    ("EOVERFLOW", r"EOVERFLOW|Value too large"),
    ("EINVAL", r"Invalid argument|EINVAL"),
    ("year 1901", r"\b1901\b"),
    ("year 1970", r"\b1970-01-01|\bJan +1 .*1970\b|\bThu 1970-01-01"),
    ("assertion", r"[Aa]ssertion .*failed|Assertion '"),
    ("crash", r"Caught <[A-Z]+>|core dumped|code=dumped|Freezing execution|status=6/ABRT|signal=ABRT"),
    ("failed", r"[Ff]ailed with result|Main process exited, code=(?:killed|dumped)"),
))
"""A journal or syslog line that says something went wrong, and the name of
what it says: read from the rollover on (lines of the baseline are noise
of the machine, not of the rollover)."""


def error_kind(message: str) -> str:
    """The name of the first ERROR_PATTERNS the line matches, else ""."""
    for name, pattern in ERROR_PATTERNS:
        if pattern.search(message):
            return name
    return ""


@dataclass(frozen=True)
class UnitFacts:
    unit: str
    before: str = ""  # "active/running"; "" unknown
    after: str = ""  # "" unknown (the manager did not answer)
    result: str = ""  # systemd's Result= after ("success", "exit-code", "core-dump"...)
    restarts: int = 0  # NRestarts gained across the span
    errors: tuple[str, ...] = ()  # "<kind>: <line>", from the rollover on
    time32_calls: int = 0  # by its processes, as the series kernel counted them
    truncations: tuple[str, ...] = ()  # the kernel's truncation reports for its processes
    missed: str = ""  # a periodic job's runs that did not come ("no run after 03:14")
    active_in_span: bool = True  # active, or triggered, at some point of the span


@dataclass(frozen=True)
class UnitVerdict:
    unit: str
    verdict: str
    reason: str


Rule = tuple[str, Callable[[UnitFacts], str]]


def _failed(f: UnitFacts) -> str:
    if not f.after.startswith("failed"):
        return ""
    first = f" ({f.errors[0]})" if f.errors else ""
    return f"failed, result {f.result or '?'}{first}"


def _restarted(f: UnitFacts) -> str:
    return f"restarted {f.restarts} time(s)" + (f" ({f.errors[0]})" if f.errors else "") if f.restarts else ""


RULES: tuple[Rule, ...] = (
    ("broke", _failed),
    ("broke", _restarted),
    ("broke", lambda f: f.missed),
    ("broke", lambda f: f.errors[0] if f.errors else ""),
    ("broke", lambda f: f"the kernel truncated a time: {f.truncations[0]}" if f.truncations else ""),
    ("not-exercised", lambda f: "never active in the span" if not f.active_in_span else ""),
    ("calls-time32", lambda f: f"{f.time32_calls} time32 call(s), nothing broke" if f.time32_calls else ""),
    ("ok", lambda f: f"{f.before or '?'} -> {f.after or '?'}"),
)
"""(verdict, reason or ""): the first rule whose reason is not empty decides."""


def judge(facts: UnitFacts) -> UnitVerdict:
    for verdict, rule in RULES:
        reason = rule(facts)
        if reason:
            return UnitVerdict(facts.unit, verdict, reason)
    raise AssertionError("the last rule always holds")
