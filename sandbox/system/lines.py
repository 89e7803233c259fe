"""What a person reads of a system rehearsal (pure): the unit table within 100
columns, its summary, and the JSON the evidence folder keeps."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sandbox.system.verdict import VERDICTS, UnitFacts, UnitVerdict

WIDTH = 100
COLUMNS = (("unit", 28), ("before", 17), ("after", 17), ("verdict", 13))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def table(facts: Sequence[UnitFacts], verdicts: Sequence[UnitVerdict]) -> list[str]:
    """A line a unit: its state before and after the night, its verdict, and
    what decided it (cut to fit 100 columns)."""
    used = sum(width + 1 for _, width in COLUMNS)
    header = " ".join(name.ljust(width) for name, width in COLUMNS) + " why"
    lines = [header, "-" * min(len(header) + 20, WIDTH)]
    for fact, verdict in zip(facts, verdicts):
        cells = (fact.unit, fact.before or "?", fact.after or "?", verdict.verdict)
        row = " ".join(_cut(cell, width).ljust(width) for cell, (_, width) in zip(cells, COLUMNS))
        lines.append(row + " " + _cut(verdict.reason, WIDTH - used))
    return lines


def summary(name: str, verdicts: Sequence[UnitVerdict]) -> str:
    counts = Counter(v.verdict for v in verdicts)
    return f"{name}: {len(verdicts)} units: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


def as_json(facts: Sequence[UnitFacts], verdicts: Sequence[UnitVerdict]) -> list[dict[str, object]]:
    return [{"unit": f.unit, "verdict": v.verdict, "reason": v.reason, "before": f.before, "after": f.after,
             "result": f.result, "restarts": f.restarts, "errors": list(f.errors), "time32_calls": f.time32_calls,
             "truncations": list(f.truncations), "missed": f.missed, "active_in_span": f.active_in_span}
            for f, v in zip(facts, verdicts)]
