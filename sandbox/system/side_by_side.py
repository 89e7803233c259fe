"""Systems side by side (pure): a row a unit that ran in at least one of
them, a column a system's verdict, then what broke in each with the line
that decided; within 100 columns (`just demo system`)."""
from __future__ import annotations

from collections.abc import Sequence

from sandbox.system.lines import WIDTH, cut, summary
from sandbox.system.verdict import UnitVerdict

UNIT_WIDTH = 34
SYSTEM_WIDTH = 16
QUIET = "not-exercised"  # a unit no system exercised has no row


def table(systems: Sequence[tuple[str, Sequence[UnitVerdict]]]) -> list[str]:
    by_system = [(name, {v.unit: v for v in verdicts}) for name, verdicts in systems]
    units = sorted({unit for _, verdicts in by_system for unit, v in verdicts.items() if v.verdict != QUIET})
    header = "unit".ljust(UNIT_WIDTH) + "".join(" " + cut(name, SYSTEM_WIDTH).ljust(SYSTEM_WIDTH)
                                                for name, _ in by_system)
    lines = [header.rstrip(), "-" * min(len(header), WIDTH)]
    for unit in units:
        cells = [verdicts[unit].verdict if unit in verdicts else "-" for _, verdicts in by_system]
        lines.append((cut(unit, UNIT_WIDTH).ljust(UNIT_WIDTH)
                      + "".join(" " + cell.ljust(SYSTEM_WIDTH) for cell in cells)).rstrip())
    return lines


def broke(systems: Sequence[tuple[str, Sequence[UnitVerdict]]]) -> list[str]:
    """Each system's summary, then its broken units with the deciding line."""
    lines = []
    for name, verdicts in systems:
        lines.append(summary(name, verdicts))
        lines += [cut(f"  broke {v.unit}: {v.reason}", WIDTH) for v in verdicts if v.verdict == "broke"]
    return lines
