"""What a person reads: the rollover matrix and the failure report. Pure text."""
from __future__ import annotations

from collections.abc import Sequence

from sandbox.judge.evaluate import ScenarioResult
from sandbox.judge.judged import JudgedRun
from sandbox.report.cells import RIGHT, Cell as CellView, Phase, headline, matrix
from sandbox.run.record import RunRecord
from sandbox.scenario.model import Scenario


WIDTH = 100
"""The terminal tables fit this many columns."""
KIND_MARKS = {RIGHT: ""}  # the long tables name what happened, except when it is right


def phase_tables(record: RunRecord, scenario: Scenario, result: ScenarioResult | None,
                 width: int = WIDTH) -> str:
    """One table per judged step, "[phase] probe" above it: rows calls, columns
    flavours, every checked field shown; a failed expectation is marked with a
    leading '!'. A table wider than `width` is printed long instead: one row per
    call and flavour (one "all" row when every flavour saw the same), with what
    happened (wrapped, error, clamped, early) and the fields wrapped to fit."""
    verdicts = result.verdicts if result else ()
    tables = []
    for phase in matrix(scenario, record.machine, record.observations, verdicts):
        title = f"[{phase.phase}] {phase.probe}"
        wide = _wide_table(phase)
        fits = max(len(line) for line in wide.splitlines()) <= width
        tables.append(title + "\n" + (wide if fits else _long_table(phase, width)))
    return "\n\n".join(tables)


def _mark(cell: CellView | None) -> str:
    return "! " if cell is not None and cell.failed else ""


def _wide_table(phase: Phase) -> str:
    body = [[call, *(_mark(c) + (headline(c, compact=True) if c else "-")
                     for c in (phase.cell(call, f) for f in phase.flavours))]
            for call in phase.calls]
    return render(["call", *phase.flavours], body)


def _wrap_tokens(tokens: list[str], width: int) -> list[str]:
    """Tokens joined by spaces into lines of at most `width` (a longer token is cut)."""
    lines: list[str] = []
    line = ""
    for token in tokens:
        while len(token) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(token[:width])
            token = token[width:]
        if line and len(line) + 1 + len(token) > width:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    return lines + ([line] if line else []) or [""]


def _what(cell: CellView | None) -> tuple[str, list[str]]:
    """(mark and kind, the value tokens) of a cell for the long table."""
    if cell is None or not cell.observed:
        return _mark(cell) + ("no observation" if cell is not None else ""), ["-"]
    tokens = headline(cell, compact=True).split(" ") if cell.errno else [
        f"{f}={v}" for f, v in _shown_fields(cell)]
    return _mark(cell) + KIND_MARKS.get(cell.kind, cell.kind), tokens or ["ok"]


def _shown_fields(cell: CellView) -> list[tuple[str, str]]:
    values = cell.observations[0].values
    names = [f for f in cell.expected_fields if f in values] or (["seconds"] if "seconds" in values else [])
    return [(f, cell.value_text(f, values[f], compact=True)) for f in names]


def _long_table(phase: Phase, width: int) -> str:
    rows: list[tuple[str, str, str, list[str]]] = []
    for call in phase.calls:
        whats = [_what(phase.cell(call, f)) for f in phase.flavours]
        if len(phase.flavours) > 1 and all(w == whats[0] for w in whats):
            rows.append((call, "all", *whats[0]))
        else:
            rows += [(call, f, *w) for f, w in zip(phase.flavours, whats)]
    call_w = max(len("call"), *(len(r[0]) for r in rows))
    flavour_w = max(len("flavour"), *(len(r[1]) for r in rows))
    kind_w = max(len("what"), *(len(r[2]) for r in rows))
    text_w = max(20, width - call_w - flavour_w - kind_w - 6)
    head = ["call".ljust(call_w), "flavour".ljust(flavour_w), "what".ljust(kind_w), "value"]
    lines = ["  ".join(head), "  ".join("-" * w for w in (call_w, flavour_w, kind_w, len("value")))]
    previous = ""
    for call, flavour, kind, tokens in rows:
        shown_call = call if call != previous else ""
        previous = call
        for n, text in enumerate(_wrap_tokens(tokens, text_w)):
            cols = [shown_call, flavour, kind] if n == 0 else ["", "", ""]
            lines.append("  ".join([cols[0].ljust(call_w), cols[1].ljust(flavour_w),
                                    cols[2].ljust(kind_w), text]).rstrip())
    return "\n".join(lines)


def render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in (header, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def evidence_lines(record: RunRecord) -> list[str]:
    e = record.evidence
    return [f"  console log: {e / 'console.log'}", f"  kernel log:  {e / 'kernel.log'}",
            f"  agent log:   {e / 'agent.log'}", f"  observations: {e / 'observations.jsonl'}"]


def failure_report(record: RunRecord, result: ScenarioResult | None) -> str:
    """Why a run failed: the guest's fate, or expected against observed per flavour."""
    head = f"{record.scenario} on {record.machine} ({record.accel}{', time warp' if record.warp else ''}): "
    if not record.completed:
        lines = [head + f"{record.outcome}: {record.detail}"]
        lines += [f"  kernel: {f}" for f in record.findings]
    else:
        assert result is not None
        kernel = result.kernel_failures
        lines = [head + f"{len(result.failures)} expectation(s) failed"
                 + (f", {len(kernel)} kernel log finding(s)" if kernel else "")]
        lines += [f"  kernel log: {k}" for k in kernel]
        shells = {(c.command.step, c.command.flavour): c.command.shell for c in record.commands}
        for v in result.failures:
            lines.append(f"  step {v.step} [{v.phase}] {v.flavour} {v.call}.{v.field}: "
                         f"expected {v.expected}, observed {v.observed}")
            lines.append(f"      guest command: {shells.get((v.step, v.flavour), '?')}")
    return "\n".join(lines + evidence_lines(record))


def summary(runs: Sequence[JudgedRun]) -> str:
    """One line per run: the scenario, the machine, the outcome, the verdicts."""
    rows = []
    for c in runs:
        verdicts = c.result.verdicts if c.result else ()
        passed = sum(v.passed for v in verdicts)
        state = "PASSED" if c.passed else ("FAILED" if c.record.completed else c.record.outcome.upper())
        rows.append([c.record.scenario, c.record.machine, state,
                     f"{passed}/{len(verdicts)}", f"{c.record.boot_seconds:.1f}s"])
    return render(["scenario", "machine", "result", "expectations", "boot"], rows)
