"""Visible progress for long steps, on stderr so stdout stays for results."""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from sandbox.base.errors import shown
from sandbox.base.meter import WIDTH, Meter

PREFIX = "==> "


def say(message: str) -> None:
    """One progress line; a name in it (a file's, a scenario's) is printed escaped and cut."""
    print(f"{PREFIX}{shown(message)}", file=sys.stderr, flush=True)


@contextmanager
def step(message: str) -> Iterator[None]:
    """Announce a step and report how long it took."""
    say(f"{message} ...")
    start = time.monotonic()
    yield
    say(f"{message}: done in {time.monotonic() - start:.1f}s")


@contextmanager
def metered(label: str, expected: int | None, unit: str = "steps",
            every: int = 10) -> Iterator[Callable[[int], None]]:
    """Yield tick(steps): a line redrawn in place on a terminal, a line every
    `every` percent in a log; the final count when the block ends."""
    tty = sys.stderr.isatty()
    meter = Meter(label, expected, time.monotonic(), tty, every, unit, WIDTH - len(PREFIX))

    def show(text: str) -> None:
        text = PREFIX + text
        print(f"\r{text}\x1b[K" if tty else text, end="" if tty else "\n", file=sys.stderr, flush=True)

    def tick(steps: int = 1) -> None:
        text = meter.tick(time.monotonic(), steps)
        if text is not None:
            show(text)
    try:
        yield tick
    finally:
        text = meter.final(time.monotonic())
        if text is not None:
            show(text)
        if tty:
            print(file=sys.stderr, flush=True)
