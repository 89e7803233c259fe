"""One deadline passed down through nested waits (as labgrid does)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Deadline:
    seconds: float
    start: float = field(default_factory=time.monotonic)

    @property
    def at(self) -> float:
        return self.start + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def within(self, seconds: float) -> "Deadline":
        """A shorter deadline for one wait, never past this one."""
        return Deadline(min(seconds, self.remaining()))
