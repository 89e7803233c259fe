"""UTC times as text and as seconds since the epoch, for any year.

The proleptic Gregorian calendar is computed by hand (days-from-civil), so
dates before 1970, after 2038, after 2106 and past datetime's year 9999 all
work the same way; nothing here depends on the host's time_t.
"""
from __future__ import annotations

import datetime as _dt
import re

ROLLOVER = 2**31
"""First second a signed 32-bit time_t cannot hold: 2038-01-19T03:14:08Z."""
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
UINT32_SPAN = 2**32
"""Added to a wrapped (negative) 32-bit time to get the real time back."""

SECONDS_PER_DAY = 86_400
_DAYS_BEFORE_EPOCH = 719_468  # days from 0000-03-01 to 1970-01-01

_TIME_RE = re.compile(  # ASCII digits only: \d would take fullwidth and other digits too
    r"(?P<year>[+-]?[0-9]{4,6})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})"
    r"T(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})Z"
)
_EXPECTED_FORM = "expected YYYY-MM-DDTHH:MM:SSZ, in UTC"  # in ASCII digits, a year of 4 to 6
SHOWN_CHARS = 40
"""How much of a refused time string an error shows."""


def is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year)."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400
    year_of_era = y - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - _DAYS_BEFORE_EPOCH


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count since 1970-01-01 (any sign)."""
    z = days + _DAYS_BEFORE_EPOCH
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def _check_fields(year: int, month: int, day: int, hour: int, minute: int, second: int) -> None:
    limits = (
        ("month", month, 1, 12),
        ("day", day, 1, days_in_month(year, month) if 1 <= month <= 12 else 31),
        ("hour", hour, 0, 23),
        ("minute", minute, 0, 59),
        ("second", second, 0, 59),
    )
    for name, value, low, high in limits:
        if not low <= value <= high:
            raise ValueError(f"{name} {value} out of range {low}..{high}")


def parse_time(text: str) -> int:
    """Seconds since the epoch of an ISO-8601 UTC time such as 2038-01-19T03:14:08Z."""
    match = _TIME_RE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a time: {_shown(text)} ({_EXPECTED_FORM})")
    parts = {name: int(value) for name, value in match.groupdict().items()}
    try:
        _check_fields(**parts)
    except ValueError as err:
        raise ValueError(f"not a time: {text!r} ({err})") from None
    days = days_from_civil(parts["year"], parts["month"], parts["day"])
    return days * SECONDS_PER_DAY + parts["hour"] * 3600 + parts["minute"] * 60 + parts["second"]


def _shown(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= SHOWN_CHARS else f"{shown[:SHOWN_CHARS]}... ({len(shown)} characters)"


def utc_seconds(value: _dt.datetime) -> int:
    """Seconds of a TOML date-time, which must be UTC (`Z`): a local one
    (no offset) or another offset is refused with ValueError, as a time
    string without `Z` is."""
    offset = value.utcoffset()
    if offset is None:
        raise ValueError(f"{value.isoformat()} is a local date-time (no offset): write it in UTC with a Z")
    if offset:
        raise ValueError(f"{value.isoformat()} is not in UTC: write it in UTC with a Z")
    return seconds_from_datetime(value)


def _format_year(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def format_time(seconds: int) -> str:
    """ISO-8601 UTC text of seconds since the epoch, e.g. -2**31 -> 1901-12-13T20:45:52Z."""
    days, rest = divmod(int(seconds), SECONDS_PER_DAY)
    year, month, day = civil_from_days(days)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{_format_year(year)}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


def seconds_from_datetime(value: _dt.datetime) -> int:
    """Seconds since the epoch of a datetime; a naive one is taken as UTC."""
    days = days_from_civil(value.year, value.month, value.day)
    seconds = days * SECONDS_PER_DAY + value.hour * 3600 + value.minute * 60 + value.second
    offset = value.utcoffset()
    return seconds - int(offset.total_seconds()) if offset is not None else seconds
