"""Matchers: the forms an expectation takes, one small class each.

A bare value means "equals" (a time string is turned into seconds); a table
with one key picks a matcher from MATCHERS ({ between = [lo, hi] }, ...);
the `errno` field takes an errno name or "none". Builders raise MatcherError,
to which the parser adds the file and key.
"""
from __future__ import annotations

import datetime as _dt
import errno as _errno
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from sandbox.base.fields import is_number, type_name
from sandbox.scenario import patterns
from sandbox.scenario.guards import expected_time, finite
from sandbox.base.timefmt import ROLLOVER, UINT32_SPAN, format_time, parse_time, utc_seconds

Value = int | float | str
"""A value a probe reports for a field."""
Number = int | float

ERRNO_NONE = "none"
_TIME_SHAPE_RE = re.compile(r"[+-]?\d{4,}-\d")  # any digits: a time in fullwidth digits is refused as a time
_ERRNO_NAMES = frozenset(_errno.errorcode.values())
_ERRNO_NUMBERED_RE = re.compile(r"E\d+")  # what a probe prints for an errno glibc cannot name

class Matcher(Protocol):
    def matches(self, observed: Value | None) -> bool: ...

    def describe(self) -> str: ...


def _render(value: Value, as_time: bool) -> str:
    if as_time and isinstance(value, int):
        return format_time(value)
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Equals:
    """A bare value: the field equals it (a time string was turned into seconds)."""

    value: Value
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) == is_number(self.value) and observed == self.value

    def describe(self) -> str:
        return f"= {_render(self.value, self.as_time)}"


@dataclass(frozen=True)
class ErrnoIs:
    """The call failed with this errno; None: the call succeeded."""

    name: str | None

    def matches(self, observed: Value | None) -> bool:
        return observed == self.name

    def describe(self) -> str:
        return "no errno (call succeeded)" if self.name is None else f"errno {self.name}"


@dataclass(frozen=True)
class Between:
    """lo <= value <= hi."""

    lo: Number
    hi: Number
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and self.lo <= observed <= self.hi

    def describe(self) -> str:
        return f"in [{_render(self.lo, self.as_time)}, {_render(self.hi, self.as_time)}]"


@dataclass(frozen=True)
class Outside:
    """A number, but not in [lo, hi]: a reading that is wrong, whatever it is
    (an old program's garbage after the rollover)."""

    lo: Number
    hi: Number
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and not self.lo <= observed <= self.hi

    def describe(self) -> str:
        return f"a number outside [{_render(self.lo, self.as_time)}, {_render(self.hi, self.as_time)}]"


@dataclass(frozen=True)
class Wrapped:
    """A negative signed 32-bit value whose real time (value + 2**32) is in [lo, hi]."""

    lo: int
    hi: int

    def matches(self, observed: Value | None) -> bool:
        if not isinstance(observed, int) or isinstance(observed, bool):
            return False
        return -ROLLOVER <= observed < 0 and self.lo <= observed + UINT32_SPAN <= self.hi

    def describe(self) -> str:
        return f"wrapped into [{format_time(self.lo)}, {format_time(self.hi)}]"


@dataclass(frozen=True)
class Clamped:
    """The value was clamped (by a filesystem or the kernel) to exactly this limit."""

    limit: Number
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and observed == self.limit

    def describe(self) -> str:
        return f"clamped at {_render(self.limit, self.as_time)}"


@dataclass(frozen=True)
class Elapsed:
    """A duration in seconds within [lo, hi]."""

    lo: float
    hi: float

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and self.lo <= observed <= self.hi

    def describe(self) -> str:
        return f"elapsed in [{self.lo} s, {self.hi} s]"


@dataclass(frozen=True)
class Matches:
    """Text in which the regular expression (Python's re syntax) finds a
    match, within patterns.MATCH_SECONDS (else PatternTimeout)."""

    pattern: str

    def matches(self, observed: Value | None) -> bool:
        return isinstance(observed, str) and patterns.search(self.pattern, observed) is not None

    def describe(self) -> str:
        return f"matches /{self.pattern}/"


class MatcherError(ValueError):
    """A matcher's argument is wrong; the parser adds file and key."""


def _instant(raw: object) -> tuple[Number, bool]:
    """A number, or a time (string or TOML date-time) as seconds; and whether it was a time."""
    if is_number(raw):
        if not finite(raw):
            raise MatcherError(f"{raw!r} is not a finite number")
        return raw, False
    if isinstance(raw, (_dt.datetime, str)):
        try:
            seconds = utc_seconds(raw) if isinstance(raw, _dt.datetime) else parse_time(raw)
        except ValueError as err:
            raise MatcherError(str(err)) from None
        refused = expected_time(seconds)
        if refused:
            raise MatcherError(refused)
        return seconds, True
    raise MatcherError(f"expected a number or a time string, got {type_name(raw)}")


def _pair(raw: object, what: str = "a number or a time") -> tuple[object, object]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise MatcherError(f"expected [lo, hi] (two items, each {what})")
    return raw[0], raw[1]


def _ordered(lo: Number, hi: Number, as_time: bool) -> None:
    if lo > hi:
        raise MatcherError(f"lo {_render(lo, as_time)} is greater than hi {_render(hi, as_time)}")


def _between(raw: object) -> Between:
    (lo, lo_time), (hi, hi_time) = (_instant(item) for item in _pair(raw))
    as_time = lo_time or hi_time
    _ordered(lo, hi, as_time)
    return Between(lo, hi, as_time)


def _outside(raw: object) -> Outside:
    window = _between(raw)
    return Outside(window.lo, window.hi, window.as_time)


def _wrapped(raw: object) -> Wrapped:
    lo, hi = (_instant(item)[0] for item in _pair(raw))
    if not all(isinstance(bound, int) for bound in (lo, hi)):
        raise MatcherError("wrapped bounds are whole seconds")
    _ordered(lo, hi, True)
    first, last = ROLLOVER, UINT32_SPAN - 1
    if lo < first or hi > last:
        raise MatcherError(
            f"a wrapped 32-bit time lies in [{format_time(first)}, {format_time(last)}]"
        )
    return Wrapped(int(lo), int(hi))


def _clamped(raw: object) -> Clamped:
    limit, as_time = _instant(raw)
    return Clamped(limit, as_time)


def _elapsed(raw: object) -> Elapsed:
    lo, hi = _pair(raw, "a number of seconds")
    if not (finite(lo) and finite(hi)):
        raise MatcherError("expected [lo, hi] in seconds (numbers)")
    if lo < 0:
        raise MatcherError(f"a duration cannot be negative: {lo}")
    _ordered(lo, hi, False)
    return Elapsed(float(lo), float(hi))


def _matches(raw: object) -> Matches:
    if not isinstance(raw, str):
        raise MatcherError("expected a regular expression (a non-empty string)")
    try:
        return Matches(patterns.check(raw))
    except patterns.PatternError as err:
        raise MatcherError(str(err)) from None


MATCHERS: Mapping[str, Callable[[object], Matcher]] = MappingProxyType(
    {
        "between": _between,
        "matches": _matches,
        "outside": _outside,
        "clamped": _clamped,
        "elapsed": _elapsed,
        "wrapped": _wrapped,
    }
)


def errno_matcher(raw: object) -> ErrnoIs:
    if not isinstance(raw, str):
        raise MatcherError(f"expected an errno name such as 'EOVERFLOW', or '{ERRNO_NONE}'")
    if raw == ERRNO_NONE:
        return ErrnoIs(None)
    if raw not in _ERRNO_NAMES and not _ERRNO_NUMBERED_RE.fullmatch(raw):
        raise MatcherError(f"unknown errno name '{raw}'")
    return ErrnoIs(raw)


def bare_matcher(raw: object) -> Equals:
    """A bare value: a plain string, or a number or time (as seconds)."""
    if isinstance(raw, str) and not _TIME_SHAPE_RE.match(raw):
        return Equals(raw)
    value, as_time = _instant(raw)
    return Equals(value, as_time)
