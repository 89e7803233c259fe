"""What a person reads: the rollover matrix and the failure report. Pure text."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sandbox.base.timefmt import format_time
from sandbox.judge.evaluate import IsTime, ScenarioResult
from sandbox.run.observations import Observation
from sandbox.run.record import RunRecord
from sandbox.scenario.model import Scenario, is_time_field


@dataclass(frozen=True)
class JudgedRun:
    """A run and, when it completed, its verdicts."""

    record: RunRecord
    result: ScenarioResult | None  # None when the guest did not complete

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed


Cell = tuple[str, str, str]  # phase, flavour, "probe.call"


def _short(value: object, as_time: bool) -> str:
    if as_time and isinstance(value, int) and not isinstance(value, bool):
        return format_time(value)
    return str(value)


CELL_FIELDS = 2  # at a glance: the first expected fields, then "+N"


def cell(observation: Observation, fields: Sequence[str] = (),
         is_time: IsTime = lambda field: field == "seconds") -> str:
    """The errno name, or the first expected fields (dates for time fields);
    with no expectation the seconds seen, else "ok"."""
    if observation.errno is not None:
        return observation.errno
    values = observation.values
    shown = [f for f in fields if f in values] or (["seconds"] if "seconds" in values else [])
    if shown == ["seconds"]:
        return _short(values["seconds"], is_time("seconds"))
    text = " ".join(f"{f}={_short(values[f], is_time(f))}" for f in shown[:CELL_FIELDS]) or "ok"
    return text + (f" +{len(shown) - CELL_FIELDS}" if len(shown) > CELL_FIELDS else "")


def expected_fields(scenario: Scenario, machine: str) -> dict[Cell, list[str]]:
    fields: dict[Cell, list[str]] = {}
    for step in scenario.judged_steps:
        for e in step.expectations_on(machine):
            key = (step.phase, e.flavour, f"{step.probe}.{e.call}")
            if e.field != "errno" and e.field not in fields.setdefault(key, []):
                fields[key].append(e.field)
    return fields


def failed_cells(result: ScenarioResult | None, scenario: Scenario) -> set[Cell]:
    probes = {s.phase: s.probe for s in scenario.judged_steps}
    return {(v.phase, v.flavour, f"{probes.get(v.phase, '?')}.{v.call}")
            for v in (result.failures if result else ())}


def phase_tables(record: RunRecord, scenario: Scenario, result: ScenarioResult | None) -> str:
    """One table per probe phase: rows probe.call, columns flavours; a failed
    expectation is marked with a leading '!'."""
    fields = expected_fields(scenario, record.machine)
    failed = failed_cells(result, scenario)
    tables = []
    for step in scenario.judged_steps:
        phase = step.phase
        seen = [o for o in record.observations if o.phase == phase]
        flavours = list(dict.fromkeys(o.flavour for o in seen))
        rows: dict[str, dict[str, str]] = {}
        for o in seen:
            key = (phase, o.flavour, f"{o.probe}.{o.call}")
            mark = "! " if key in failed else ""
            def is_time(field: str, call: str = o.call) -> bool:
                return is_time_field(step, call, field)
            rows.setdefault(key[2], {})[o.flavour] = mark + cell(o, fields.get(key, ()), is_time)
        body = [[call, *(cells.get(f, "-") for f in flavours)] for call, cells in rows.items()]
        tables.append(f"[{phase}]\n" + render(["call", *flavours], body))
    return "\n\n".join(tables)


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
    head = f"{record.scenario} on {record.machine} ({record.accel}): "
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
