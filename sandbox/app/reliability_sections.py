"""The sections `just reliability` adds per subject (issue 44): each one a
module of its own that measures its cases and renders one table.

    Section(title, rows, ...)          one subject's measured cases
    Tally                              host writes, tracebacks, hangs, false passes
    measure_all(sections, folder, boot) every section's table and the sum of their tallies

The list of sections is sandbox/app/reliability.py's SECTIONS, one line each.

A subject's `measure(folder, boot)` tries its cases in `folder` (a fresh
temporary folder of its own) and returns its Section; `boot` is False under
`--no-boot`, and a subject that needs a guest then returns what it could try
without one. The totals line sums every section's Tally: the goal is 0 of each.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Tally:
    host_writes: int = 0  # files changed outside the results and cache folders
    tracebacks: int = 0  # a Python traceback instead of a one-line error
    hangs: int = 0  # no answer within the case's bound
    false_passes: int = 0  # exit 0 (or a verdict) where the input should have been refused or judged

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.host_writes + other.host_writes, self.tracebacks + other.tracebacks,
                     self.hangs + other.hangs, self.false_passes + other.false_passes)

    def line(self) -> str:
        return (f"host writes: {self.host_writes}, tracebacks: {self.tracebacks}, hangs: {self.hangs}, "
                f"false passes: {self.false_passes}")


@dataclass(frozen=True)
class Section:
    title: str  # "Hostile images", without the "###"
    header: list[str]
    rows: list[list[str]]
    tally: Tally = field(default_factory=Tally)
    note: str = ""  # one paragraph under the heading, optional

    def markdown(self) -> str:
        cells = [self.header, ["---"] * len(self.header),
                 *[[c.replace("|", "\\|").replace("\n", " ") for c in row] for row in self.rows]]
        table = "\n".join("| " + " | ".join(row) + " |" for row in cells)
        note = f"{self.note}\n\n" if self.note else ""
        return f"\n### {self.title}: {len(self.rows)} cases, {self.tally.line()}\n\n{note}{table}\n"


Measure = Callable[[Path, bool], Section]


def measure_all(sections: list[tuple[str, Measure]], folder: Path, boot: bool) -> tuple[str, Tally]:
    """Every section's markdown, and the sum of their tallies."""
    out, total = [], Tally()
    for name, measure in sections:
        section = measure(folder / name, boot)
        out.append(section.markdown())
        total = total + section.tally
    return "".join(out), total
