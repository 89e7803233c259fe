"""Visible progress for long steps, on stderr so stdout stays for results."""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator


def say(message: str) -> None:
    print(f"==> {message}", file=sys.stderr, flush=True)


@contextmanager
def step(message: str) -> Iterator[None]:
    """Announce a step and report how long it took."""
    say(f"{message} ...")
    start = time.monotonic()
    yield
    say(f"{message}: done in {time.monotonic() - start:.1f}s")
