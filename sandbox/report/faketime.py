"""libfaketime against the real clock, from a run's evidence: each call of
each probe step run under `faketime` beside the same step run after the
kernel's clock was really set there (its twin: same probe, userland,
flavours and arguments, no faketime). Pure.

    pairs(scenario) -> [Pair]                  the faked steps and their twins
    compare(pair, observations) -> [Cell]      one verdict per call and flavour
    markdown(runs) -> str                      the table of docs/clock-sources.md

A verdict (VERDICTS) says whether a program under libfaketime saw what it
would see on a clock really there: the same time (within SAME_SECONDS, as
the two runs are minutes apart), the same errno, a wait as long.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sandbox.base.timefmt import format_time
from sandbox.report.cells import step_clocks
from sandbox.report.probe_reference import replace_between
from sandbox.run.observations import Observation, Value
from sandbox.scenario.model import ProbeStep, Scenario

SAME, NOT_FAKED, HANGS, WRONG = "same", "not faked", "hangs", "wrong"
VERDICTS: dict[str, str] = {
    SAME: "what the real clock gives: the same time (within 10 min), errno or wait",
    NOT_FAKED: "the kernel's own clock (the present, or its 32-bit wrap) showed through: libfaketime did not "
               "reach the call",
    HANGS: "a wait that never ended (killed 5 s after its deadline) where the real clock's ended on time",
    WRONG: "another time, errno or wait than the real clock's",
}
SAME_SECONDS = 600  # the faked and the real run of a call are minutes apart
WAIT_SLACK = 1.5  # seconds two waits may differ by and still be the same
NOT_TIMES = ("woke", "tv_sec", "sent")  # a wait's instruments and a setter's input: not what it reads


@dataclass(frozen=True)
class Pair:
    faked: ProbeStep
    real: ProbeStep
    present: int  # the kernel's clock when the faked step ran (the RTC or the last clock step)


@dataclass(frozen=True)
class Cell:
    probe: str
    call: str
    flavour: str
    verdict: str  # one of VERDICTS
    faked: str  # what the faked run saw, in short
    real: str  # what the real clock gave


def pairs(scenario: Scenario) -> list[Pair]:
    """Each step run under faketime with the first later step that runs the
    same probe, userland, flavours and arguments without it (dynamically: a
    static build answers the real clock as the dynamic one does)."""
    clocks, found = step_clocks(scenario), []
    steps = scenario.probe_steps
    for faked in steps:
        if faked.faketime is None:
            continue
        twin = next((s for s in steps if s.index > faked.index and s.faketime is None and not s.static
                     and s.probe == faked.probe
                     and s.userland == faked.userland and s.flavours == faked.flavours and s.args == faked.args),
                    None)
        if twin is not None:
            found.append(Pair(faked, twin, clocks[faked.index]))
    return found


def _main_time(step: ProbeStep, o: Observation) -> int | None:
    """The first time the call reads (not a wait's instruments)."""
    for name, value in o.values.items():
        if name not in NOT_TIMES and step.info is not None and step.info.is_time(o.call, name) \
                and isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _number(value: Value | None) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def show(step: ProbeStep, o: Observation | None) -> str:
    """An observation in a few words: its errno or outcome, the time it read, how long it waited."""
    if o is None:
        return "-"
    outcome = o.values.get("outcome")
    if isinstance(outcome, str):
        return "never woke" if outcome.startswith("killed") else outcome
    words = [o.errno] if o.errno else []
    seconds = _main_time(step, o)
    if seconds is not None:
        words.append(format_time(seconds).replace("T", " ")[:16])
    elapsed = _number(o.values.get("elapsed"))
    if elapsed is not None:
        words.append(f"{abs(elapsed):.0f} s")  # never "-0 s" (a wait of -0.0001 s)
    return " ".join(words) or "ok"


def verdict(pair: Pair, faked: Observation, real: Observation | None) -> str:
    if real is None:
        return WRONG
    if isinstance(faked.values.get("outcome"), str) != isinstance(real.values.get("outcome"), str):
        return HANGS if isinstance(faked.values.get("outcome"), str) else WRONG
    if faked.errno != real.errno:
        return WRONG
    seen, truth = _main_time(pair.faked, faked), _main_time(pair.real, real)
    if seen is not None and truth is not None and abs(seen - truth) > SAME_SECONDS:
        return NOT_FAKED if _near(seen, pair.present) else WRONG
    waited, should = _number(faked.values.get("elapsed")), _number(real.values.get("elapsed"))
    if waited is not None and should is not None and abs(waited - should) > WAIT_SLACK:
        return WRONG
    return SAME


def _near(seen: int, present: int) -> bool:
    """seen is the kernel's present, or what 32 bits keep of it (1901 for 2038)."""
    offset = (seen - present) % 2**32
    return min(offset, 2**32 - offset) <= SAME_SECONDS


def compare(pair: Pair, observations: Sequence[Observation]) -> list[Cell]:
    """A cell per call and flavour the faked step printed, in the order printed."""
    def seen(phase: str) -> dict[tuple[str, str], Observation]:
        return {(o.call, o.flavour): o for o in observations if o.phase == phase}
    faked, real = seen(pair.faked.phase), seen(pair.real.phase)
    return [Cell(pair.faked.probe, call, flavour, verdict(pair, o, real.get((call, flavour))),
                 show(pair.faked, o), show(pair.real, real.get((call, flavour))))
            for (call, flavour), o in faked.items()
            if _about_time(pair.faked, o) or _about_time(pair.real, real.get((call, flavour)))]


def _about_time(step: ProbeStep, o: Observation | None) -> bool:
    """A call that reads a time, waits or failed (not shmget's "ok")."""
    return o is not None and (o.errno is not None or _main_time(step, o) is not None
                              or any(k in o.values for k in ("elapsed", "outcome")))


@dataclass(frozen=True)
class Run:
    """One run of a faketime scenario on one machine, as the table needs it."""

    machine: str
    scenario: Scenario
    observations: tuple[Observation, ...]
    packages: Mapping[str, str]  # userland -> its libfaketime and libc6 versions, in short


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return ""
    if cell.verdict == SAME:
        return "same"
    return f"**{cell.verdict}**: {cell.faked} (real: {cell.real})".replace("|", "\\|")


def markdown(runs: Sequence[Run]) -> str:
    """Per machine and userland, a row per probe call and a column per
    flavour (and its static build): what libfaketime made of the call
    against the real clock."""
    grouped: dict[tuple[str, str, str], dict[tuple[str, str], dict[str, Cell]]] = {}
    packages: dict[tuple[str, str, str], str] = {}
    for run in runs:
        for pair in pairs(run.scenario):
            faketime = pair.faked.faketime.value if pair.faked.faketime else ""
            key = (run.machine, str(pair.faked.userland), faketime)
            packages[key] = run.packages.get(key[1], "")
            for cell in compare(pair, run.observations):
                column = f"{cell.flavour}{' static' if pair.faked.static else ''}"
                grouped.setdefault(key, {}).setdefault((cell.probe, cell.call), {})[column] = cell
    sections = [_section(key, packages[key], rows) for key, rows in grouped.items()]
    legend = "\n".join(f"- **{v}**: {text}" for v, text in VERDICTS.items())
    return legend + "\n\n" + "\n\n".join(sections) + "\n"


def _section(key: tuple[str, str, str], packages: str, rows: dict[tuple[str, str], dict[str, Cell]]) -> str:
    """One machine, userland and FAKETIME: a row per call, a column per flavour."""
    machine, userland, faketime = key
    columns = list(dict.fromkeys(c for row in rows.values() for c in row))
    lines = [f"#### {machine}: {userland}, FAKETIME=`{faketime}`", "", packages, "",
             "| call | " + " | ".join(f"`{c}`" for c in columns) + " |", "|---|" + "---|" * len(columns)]
    for (probe, call), row in rows.items():
        lines.append(f"| {probe}.{call} | " + " | ".join(_cell_text(row.get(c)) for c in columns) + " |")
    counts = {v: sum(1 for row in rows.values() for c in row.values() if c.verdict == v) for v in VERDICTS}
    return "\n".join(lines + ["", "Cells: " + ", ".join(f"{v} {n}" for v, n in counts.items()) + "."])


BEGIN, END = "<!-- faketime-table: begin (sandbox faketime-doc) -->", "<!-- faketime-table: end -->"


def replace_table(doc: str, table: str) -> str:
    """The doc with the text between its BEGIN and END markers replaced."""
    return replace_between(doc, BEGIN, END, table)
