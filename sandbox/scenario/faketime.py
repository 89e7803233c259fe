"""A probe step's `faketime`: run the probe under Debian's libfaketime
(LD_PRELOAD) in its userland, with FAKETIME set, while the kernel's clock
stays where it is. Pure: what the parser checks before boot.

    faketime = "2038-01-19T03:14:30Z"   FAKETIME="@2038-01-19 03:14:30": the
                                        process's clock starts there and runs
    faketime = "+12y" (or "-3d", "+3600s", "+90")
                                        FAKETIME="+12y": an offset from the
                                        kernel's clock (libfaketime's units:
                                        s, m, h, d and y, a year of 365 days)

libfaketime reads other forms too (a frozen "YYYY-MM-DD hh:mm:ss", speed
and interval modifiers); the scenarios use these two, and anything else is
refused here rather than left to libfaketime, which ignores what it cannot
parse and runs the program on the real clock.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.base.timefmt import format_time, parse_time

PACKAGE = "libfaketime"  # the Debian package a userland needs for it
LIBRARY = "/usr/lib/{triplet}/faketime/libfaketime.so.1"  # where Debian's package puts it
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "y": 365 * 86_400}
_OFFSET_RE = re.compile(r"([+-])([0-9]{1,12})([smhdy]?)")
FORMS = '"YYYY-MM-DDTHH:MM:SSZ" (the clock starts there) or an offset such as "+12y", "-3d", "+3600"'


class FakeTimeError(ValueError):
    pass


@dataclass(frozen=True)
class FakeTime:
    text: str  # as the scenario wrote it
    value: str  # the FAKETIME environment variable
    start: int | None = None  # the absolute start, for "@" times
    offset: int | None = None  # seconds, for offsets

    def environment(self, triplet: str, root: str = "") -> dict[str, str]:
        """What the probe runs with, in a userland whose multiarch triplet is
        this (root: where the userland is, for a program run outside it)."""
        return {"LD_PRELOAD": root + LIBRARY.format(triplet=triplet), "FAKETIME": self.value}


def parse_faketime(text: str) -> FakeTime:
    """The scenario's faketime value, or FakeTimeError naming the forms."""
    offset = _OFFSET_RE.fullmatch(text)
    if offset:
        sign, number, unit = offset.groups()
        seconds = int(number) * UNIT_SECONDS[unit or "s"] * (-1 if sign == "-" else 1)
        return FakeTime(text, text, offset=seconds)
    try:
        start = parse_time(text)
    except ValueError:
        raise FakeTimeError(f"unknown faketime {text!r} (expected {FORMS})") from None
    if start < 0:
        raise FakeTimeError(f"{text}: libfaketime starts clocks at 1970 or later")
    return FakeTime(text, "@" + format_time(start).rstrip("Z").replace("T", " "), start=start)
