"""What a person reads: the rollover matrix and the failure report. Pure text."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from .evaluate import ScenarioResult
from .observations import Observation
from .runner import RunRecord
from .timefmt import format_time


def cell(observation: Observation) -> str:
    """The date seen (seconds field) or the errno name."""
    if observation.errno is not None:
        return observation.errno
    seconds = observation.values.get("seconds")
    if isinstance(seconds, int):
        return format_time(seconds)
    return ", ".join(f"{k}={v}" for k, v in observation.values.items())


def matrix(observations: Iterable[Observation], phases: Sequence[str]) -> list[list[str]]:
    """Rows (probe, call, flavour) by columns (phases), first-seen order."""
    table: dict[tuple[str, str, str], dict[str, str]] = {}
    for o in observations:
        if o.phase in phases:
            table.setdefault((o.probe, o.call, o.flavour), {})[o.phase] = cell(o)
    return [[probe, call, flavour, *(cells.get(p, "-") for p in phases)]
            for (probe, call, flavour), cells in table.items()]


def render(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in (header, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rollover_table(record: RunRecord, phases: Sequence[str]) -> str:
    rows = matrix(record.observations, phases)
    return render(["probe", "call", "flavour", *phases], rows)


def evidence_lines(record: RunRecord) -> list[str]:
    e = record.evidence
    return [f"  console log: {e / 'console.log'}", f"  kernel log:  {e / 'kernel.log'}",
            f"  agent log:   {e / 'agent.log'}", f"  observations: {e / 'observations.jsonl'}"]


def failure_report(record: RunRecord, result: ScenarioResult | None) -> str:
    """Why a run failed: the guest's fate, or expected against observed per flavour."""
    head = f"{record.scenario} on {record.machine} ({record.accel}): "
    if not record.completed:
        lines = [head + f"{record.outcome}: {record.detail}"]
        lines += [f"  kernel: {f}" for f in record.findings]
    else:
        assert result is not None
        lines = [head + f"{len(result.failures)} expectation(s) failed"]
        shells = {(c.command.step, c.command.flavour): c.command.shell for c in record.commands}
        for v in result.failures:
            lines.append(f"  step {v.step} [{v.phase}] {v.flavour} {v.call}.{v.field}: "
                         f"expected {v.expected}, observed {v.observed}")
            lines.append(f"      guest command: {shells.get((v.step, v.flavour), '?')}")
    return "\n".join(lines + evidence_lines(record))
