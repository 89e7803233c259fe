"""What a person reads of a system rehearsal (pure): the unit table within 100
columns, its summary, and the JSON the evidence folder keeps."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sandbox.system.verdict import VERDICTS, UnitFacts, UnitVerdict

WIDTH = 100
COLUMNS = (("unit", 26), ("before", 14), ("after", 14), ("verdict", 13))


def cut(text: str, width: int) -> str:
    """The text within `width` columns, an ellipsis where it was cut."""
    return text if len(text) <= width else text[:width - 1] + "…"


def table(facts: Sequence[UnitFacts], verdicts: Sequence[UnitVerdict]) -> list[str]:
    """A line a unit: its state before and after the night, its verdict, and
    what decided it (cut to fit 100 columns)."""
    used = sum(width + 1 for _, width in COLUMNS)
    header = " ".join(name.ljust(width) for name, width in COLUMNS) + " why"
    lines = [header, "-" * min(len(header) + 20, WIDTH)]
    for fact, verdict in zip(facts, verdicts):
        cells = (fact.unit, fact.before or "?", fact.after or "?", verdict.verdict)
        row = " ".join(cut(cell, width).ljust(width) for cell, (_, width) in zip(cells, COLUMNS))
        lines.append(row + " " + cut(verdict.reason, WIDTH - used))
    return lines


def summary(name: str, verdicts: Sequence[UnitVerdict]) -> str:
    counts = Counter(v.verdict for v in verdicts)
    return f"{name}: {len(verdicts)} units: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


def as_json(facts: Sequence[UnitFacts], verdicts: Sequence[UnitVerdict]) -> list[dict[str, object]]:
    return [{"unit": f.unit, "verdict": v.verdict, "reason": v.reason, "before": f.before, "after": f.after,
             "result": f.result, "restarts": f.restarts, "errors": list(f.errors), "time32_calls": f.time32_calls,
             "truncations": list(f.truncations), "missed": f.missed, "active_in_span": f.active_in_span}
            for f, v in zip(facts, verdicts)]


STATE_COLOURS = (("failed", "#f4a6a6"), ("activating", "#f7e3a1"), ("deactivating", "#f7e3a1"),
                 ("active", "#bfe6bf"), ("inactive", "#e6e6e6"))
VERDICT_COLOURS = {"broke": "#f4a6a6", "calls-time32": "#f7e3a1", "ok": "#bfe6bf", "not-exercised": "#e6e6e6"}


def _colour(state: str) -> str:
    return next((colour for prefix, colour in STATE_COLOURS if state.startswith(prefix)), "#ffffff")


def timeline_html(name: str, verdicts: Sequence[UnitVerdict], marks: Sequence[tuple[str, dict[str, str]]]) -> str:
    """A self-contained page: a row a unit, a column a look at the night
    (its guest time), each cell the unit's state then; the verdict and its
    reason last. A look whose states could not be read (the manager did not
    answer) is an empty column."""
    from html import escape
    head = "".join(f"<th>{escape(time[11:16])}</th>" for time, _ in marks)
    rows = []
    for verdict in verdicts:
        cells = "".join(f'<td style="background:{_colour(states.get(verdict.unit, ""))}">'
                        f"{escape(states.get(verdict.unit, ''))}</td>" for _, states in marks)
        rows.append(f"<tr><td>{escape(verdict.unit)}</td>{cells}"
                    f'<td style="background:{VERDICT_COLOURS.get(verdict.verdict, "#fff")}">{verdict.verdict}</td>'
                    f"<td>{escape(verdict.reason)}</td></tr>")
    return ("<!doctype html><meta charset=utf-8><title>" + escape(name) + "</title>"
            "<style>body{font:13px sans-serif}td,th{border:1px solid #ccc;padding:2px 4px}"
            "table{border-collapse:collapse}</style>"
            f"<h1>{escape(name)}: the units across the rollover</h1>"
            f"<table><tr><th>unit</th>{head}<th>verdict</th><th>why</th></tr>{''.join(rows)}</table>\n")
