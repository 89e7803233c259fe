"""Progress of long work as one line: done of expected, and an estimate of
the time left (pure: the caller passes the clock in).

A kernel build counts kbuild's steps against the previous build's count; a
pytest session counts scenarios against the collected total. On a terminal
the line is redrawn in place; in a CI log a line is printed every `every`
percent, so the log shows progress without one line per step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

WIDTH = 100
REDRAW_SECONDS = 0.25  # at most four redraws a second on a terminal
COUNT_EVERY = 200  # steps between lines in a log when no count is expected


def clock(seconds: float) -> str:
    """Whole seconds as 42s, 3m05s or 1h02m."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def seconds_left(done: int, expected: int | None, elapsed: float) -> float | None:
    """At the pace so far, the time to reach `expected`; None before the
    first step, without an expected count, or once past it."""
    if not expected or done <= 0 or done >= expected:
        return None
    return elapsed / done * (expected - done)


def line(label: str, done: int, expected: int | None, elapsed: float,
         unit: str = "steps", width: int = WIDTH) -> str:
    """`label: 812/1170 steps (69%), 2m10s, about 58s left`, cut to width
    (the label gives way first, the figures never)."""
    if expected and done <= expected:
        figures = f"{done}/{expected} {unit} ({100 * done // expected}%), {clock(elapsed)}"
        left = seconds_left(done, expected, elapsed)
        if left is not None:
            figures += f", about {clock(left)} left"
    elif expected:
        figures = f"{done} {unit} (the last run had {expected}), {clock(elapsed)}"
    else:
        figures = f"{done} {unit}, {clock(elapsed)} (no earlier count to compare)"
    room = width - len(figures) - 2
    if len(label) > room:
        label = label[:max(0, room - 1)] + "…"
    return f"{label}: {figures}"[:width]


@dataclass
class Meter:
    """When to show the line: on a terminal at most every REDRAW_SECONDS, in
    a log at each `every` percent (or every COUNT_EVERY steps when nothing
    is expected)."""
    label: str
    expected: int | None
    start: float
    tty: bool
    every: int = 10
    unit: str = "steps"
    width: int = WIDTH
    done: int = 0
    _shown_at: float = field(default=float("-inf"), repr=False)
    _shown_mark: int = field(default=0, repr=False)
    _shown_done: int = field(default=0, repr=False)

    def _mark(self, done: int) -> int:
        if self.expected:
            return min(100, 100 * done // self.expected) // self.every
        return done // COUNT_EVERY

    def tick(self, now: float, steps: int = 1) -> str | None:
        """Count steps; the line to show now, or None."""
        self.done += steps
        if self.tty:
            if now - self._shown_at < REDRAW_SECONDS:
                return None
        elif self._mark(self.done) <= self._shown_mark:
            return None
        self._shown_at, self._shown_mark, self._shown_done = now, self._mark(self.done), self.done
        return line(self.label, self.done, self.expected, now - self.start, self.unit, self.width)

    def final(self, now: float) -> str | None:
        """The closing line; None in a log whose last line already said done of expected."""
        if not self.tty and self.expected and self._shown_done == self.done:
            return None
        return line(self.label, self.done, self.expected or self.done, now - self.start, self.unit,
                    self.width)
