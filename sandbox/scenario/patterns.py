"""Regular expressions a scenario gives (`matches`, `time-pattern`): checked
at validation, matched under a time limit.

A pattern is Python's `re` syntax. Before anything boots it must be at most
MAX_PATTERN_CHARS long, nest its groups at most MAX_GROUP_DEPTH deep and
repeat at most MAX_REPEAT times in a bound (`a{4294967296}` would make `re`
raise OverflowError, 5,000 nested groups RecursionError). Then it is
matched with the `regex` module (Debian's python3-regex, the same syntax),
whose `timeout` stops a match that backtracks without end (`^(0|00)+x` on
60 zeros): PatternTimeout, which the judge turns into a failed verdict.
"""
from __future__ import annotations

import re

import regex  # type: ignore[import]  # python3-regex ships no type stubs

MAX_PATTERN_CHARS = 1000
MAX_GROUP_DEPTH = 16
MAX_REPEAT = 1000
MATCH_SECONDS = 1.0
"""The longest one match may take; ours take microseconds."""
FLAGS = regex.M | regex.V0  # V0: the syntax of Python's re

_BOUND_RE = re.compile(r"\{(\d*),?(\d*)\}")


class PatternError(ValueError):
    """The pattern is refused; the caller adds the file and key."""


class PatternTimeout(Exception):
    """A match ran past its time limit."""


def _scan(pattern: str) -> None:
    """Group depth and repetition bounds, read outside escapes and classes
    without compiling (compiling is what overflows)."""
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 2 if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]" else 1
            continue
        elif char == "(":
            depth += 1
            if depth > MAX_GROUP_DEPTH:
                raise PatternError(f"groups nested more than {MAX_GROUP_DEPTH} deep")
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "{":
            bound = _BOUND_RE.match(pattern, i)
            if bound and any(len(n) > 4 or (n and int(n) > MAX_REPEAT) for n in bound.groups()):
                raise PatternError(f"a repetition bound past {MAX_REPEAT} ({bound.group()[:20]})")
        i += 1


def check(pattern: str) -> str:
    """The pattern, or PatternError saying why it is refused."""
    if not pattern:
        raise PatternError("expected a regular expression (a non-empty string)")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"{len(pattern)} characters, more than {MAX_PATTERN_CHARS}")
    _scan(pattern)
    try:
        re.compile(pattern, re.M)
        regex.compile(pattern, FLAGS)
    except (re.error, regex.error, OverflowError, RecursionError, ValueError) as err:
        raise PatternError(f"not a regular expression: {err}") from None
    return pattern


def search(pattern: str, text: str, seconds: float | None = None) -> regex.Match[str] | None:
    """The first match of a checked pattern in text, within `seconds`
    (MATCH_SECONDS). concurrent: the match lets go of the GIL, so the main
    thread's signal handler runs while a worker thread judges (without it a
    match that backtracks held every thread for its whole second)."""
    seconds = MATCH_SECONDS if seconds is None else seconds
    try:
        return regex.search(pattern, text, FLAGS, timeout=max(seconds, 0.001), concurrent=True)
    except TimeoutError:
        raise PatternTimeout(f"/{pattern[:40]}/ ran past its limit of {seconds:g} s") from None
