"""What `just bench` prints: a figure, its goal and the ratio to it (pure).

Figures are measured, never asserted: a goal says what the project aims
for, and the ratio says how far a run was from it (value / goal: under 1
meets an upper bound, over 1 meets a lower one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str
    value: float  # NaN: not measured in this run (the note says how to)
    unit: str
    note: str = ""
    goal: float | None = None
    at_least: bool = False  # the goal is a lower bound (a speed-up), not an upper one

    @property
    def measured(self) -> bool:
        return not math.isnan(self.value)

    @property
    def ratio(self) -> float | None:
        return self.value / self.goal if self.goal and self.measured else None

    @property
    def met(self) -> bool | None:
        ratio = self.ratio
        return None if ratio is None else (ratio >= 1 if self.at_least else ratio <= 1)

    def goal_text(self) -> str:
        if self.goal is None:
            return ""
        return f"{'>=' if self.at_least else '<='} {self.goal:g} {self.unit}"

    def verdict_text(self) -> str:
        if self.ratio is None:
            return ""
        return f"x{self.ratio:.2f} {'met' if self.met else 'MISSED'}"


def render(figures: list[Figure]) -> str:
    """A line per figure: name, value, goal, ratio and verdict, note."""
    width = max(len(f.name) for f in figures)
    goal_width = max((len(f.goal_text()) for f in figures), default=0)
    lines = []
    for f in figures:
        value = f"{f.value:9.2f}" if f.measured else f"{'-':>9}"
        goal = f"  {f.goal_text().ljust(goal_width)}  {f.verdict_text():<13}" if goal_width else ""
        lines.append(f"{f.name.ljust(width)}  {value} {f.unit:<4}{goal} {f.note}".rstrip())
    return "\n".join(lines)
