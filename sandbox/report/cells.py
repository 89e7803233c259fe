"""The rollover matrix as data: per judged step, calls x flavours, each cell
the observations of one call in one flavour, the verdicts on it, and what
happened, in one word (KINDS). Shared by the terminal tables (report.text)
and the page (report.html). Pure.

What happened is read from the values, not from the verdicts: a cell is
"wrapped" when it shows a negative 32-bit time or a time 2**32 s away from
another flavour's, whether or not the scenario expected it; the verdicts say
separately whether that was what the scenario expected.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set as AbstractSet
from dataclasses import dataclass

from sandbox.base.fields import is_int, is_number
from sandbox.base.timefmt import INT32_MAX, INT32_MIN, UINT32_SPAN, format_time
from sandbox.judge.evaluate import Verdict
from sandbox.run.observations import Observation, Value
from sandbox.scenario.matchers import Clamped
from sandbox.scenario.model import ERRNO_FIELD, Scenario

RIGHT, WRAPPED, WRONG, ERROR, CLAMPED, EARLY = "right", "wrapped", "wrong", "error", "clamped", "early"
KINDS: dict[str, str] = {
    RIGHT: "a value that fits, or a wait that lasted as asked",
    WRAPPED: "a 32-bit time that wrapped (to 1901, or 2**32 s off)",
    WRONG: "a time far from the other flavours' that is no 32-bit wrap",
    ERROR: "the call failed with an errno (EOVERFLOW, EINVAL, ENOSYS, ...), or the program did",
    CLAMPED: "a time held at a limit (a filesystem's, or INT32_MAX)",
    EARLY: "a wait that ended well before its time",
}
"""What happened in a cell, in one word each, in the order the legends show them."""
WAIT_ENDINGS = frozenset({"ETIMEDOUT", "EAGAIN"})
"""The errno a wait ends with when its time passes: not a failure."""
EARLY_FRACTION = 0.5  # a wait that lasted less than this part of the others' is early
EARLY_MIN_SECONDS = 1.0  # waits shorter than this are not judged early or not
WRONG_SECONDS = 86_400  # a time this far from every other flavour's is wrong
STATUS_FIELD, STATUS_OK = "status", "ok"  # a real program's (sandbox/run/observations.py)


@dataclass(frozen=True)
class Cell:
    step: int
    phase: str
    probe: str
    call: str
    flavour: str
    observations: tuple[Observation, ...]
    verdicts: tuple[Verdict, ...]
    kind: str  # one of KINDS; "" when nothing was observed
    time_fields: frozenset[str]
    expected_fields: tuple[str, ...]  # the fields the scenario checks here (errno last if checked)

    @property
    def failed(self) -> bool:
        return any(not v.passed for v in self.verdicts)

    @property
    def checked(self) -> bool:
        return bool(self.verdicts)

    @property
    def observed(self) -> bool:
        return bool(self.observations)

    @property
    def errno(self) -> str | None:
        return next((o.errno for o in self.observations if o.errno is not None), None)

    def value_text(self, name: str, value: Value, compact: bool = False) -> str:
        return show_value(value, name in self.time_fields, compact)


@dataclass(frozen=True)
class Phase:
    """One judged step: its calls (rows) and flavours (columns), in the order seen."""

    step: int
    phase: str
    probe: str
    calls: tuple[str, ...]
    flavours: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]  # (call, flavour)

    def cell(self, call: str, flavour: str) -> Cell | None:
        return self.cells.get((call, flavour))

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.cells.values())


COMPACT_TEXT = 100  # characters of a text of many lines that a compact table shows


def show_value(value: Value, as_time: bool, compact: bool = False) -> str:
    """A value as the tables show it: a time as ISO UTC ("2038-01-19T03:14:07Z",
    or "2038-01-19 03:14:07" when compact), a float rounded to 2 places; a
    text of many lines (a log), when compact, as its last line: the latest event."""
    if compact and isinstance(value, str) and "\n" in value:
        last = next((line.strip() for line in reversed(value.splitlines()) if line.strip()), "")
        return last if len(last) <= COMPACT_TEXT else last[:COMPACT_TEXT - 1] + "…"
    if as_time and isinstance(value, int) and not isinstance(value, bool):
        text = format_time(value)
        return text.replace("T", " ").rstrip("Z") if compact else text
    if isinstance(value, float):
        return (f"{value:.2f}".rstrip("0").rstrip(".") or "0").replace("-0", "0", 1) \
            if value == value and abs(value) >= 0.005 else ("0" if value == value else str(value))
    return str(value)


def judged_steps(scenario: Scenario) -> tuple:
    """The steps whose observations are judged (probe steps, and run steps where
    the model has them)."""
    steps = getattr(scenario, "judged_steps", None)
    return tuple(steps) if steps is not None else scenario.probe_steps


def _time_fields(step: object, call: str, observations: Iterable[Observation]) -> frozenset[str]:
    info = getattr(step, "info", None)
    names = {name for o in observations for name in o.values}
    return frozenset(n for n in names if info is not None and info.is_time(call, n))


def _wrapped(observation: Observation, peers: Sequence[Observation], times: frozenset[str]) -> bool:
    for name in times:
        value = observation.values.get(name)
        if not is_int(value):
            continue
        if INT32_MIN <= value < 0:
            return True
        others = [p.values.get(name) for p in peers if p.errno is None or name in p.values]
        if any(is_int(v) and v > value and (v - value) % UINT32_SPAN == 0 for v in others):
            return True
    return False


def _clamped(observation: Observation, peers: Sequence[Observation], times: frozenset[str],
             clamp_fields: AbstractSet[str]) -> bool:
    values = observation.values
    for name in clamp_fields:
        if name in values:
            return True
    sent, stored = values.get("sent"), values.get("seconds")
    if is_int(sent) and is_int(stored) and stored < sent:
        return True  # the filesystem kept less than the program sent
    for name in times:
        value = values.get(name)
        others = [p.values.get(name) for p in peers]
        if value == INT32_MAX and any(is_int(v) and v > INT32_MAX for v in others):
            return True
    return False


def _wrong(observation: Observation, peers: Sequence[Observation], times: frozenset[str],
           clock: int | None) -> bool:
    """A time far from what the other flavours read, when they agree among
    themselves and with the clock the scenario set (`clock`: the last rtc,
    set-clock, hwclock or reset-clock before; without one, two or more agree)."""
    for name in times:
        value = observation.values.get(name)
        others = [v for p in peers if is_int(v := p.values.get(name))]
        if not is_int(value) or not others or max(others) - min(others) > WRONG_SECONDS:
            continue
        if not all(abs(value - v) > WRONG_SECONDS for v in others):
            continue
        if clock is not None:
            if all(abs(v - clock) <= WRONG_SECONDS for v in others):
                return True
        elif len(others) >= 2:
            return True
    return False


def _early(observation: Observation, peers: Sequence[Observation]) -> bool:
    elapsed = observation.values.get("elapsed")
    if not isinstance(elapsed, (int, float)) or observation.errno not in (None, *WAIT_ENDINGS):
        return False
    candidates = [p.values.get("elapsed") for p in peers] + [observation.values.get("delay")]
    lengths = [v for v in candidates if is_number(v)]
    reference = max(lengths, default=0.0)
    return reference >= EARLY_MIN_SECONDS and elapsed < EARLY_FRACTION * reference


def classify(observation: Observation, peers: Sequence[Observation], times: frozenset[str],
             clamp_fields: AbstractSet[str] = frozenset(), clock: int | None = None) -> str:
    """What happened to one call: peers are the same call's observations in the
    other flavours of the phase (a wrap is 2**32 s off theirs, an early wait
    much shorter than theirs)."""
    if observation.errno is not None and observation.errno not in WAIT_ENDINGS:
        return ERROR
    if observation.values.get(STATUS_FIELD, STATUS_OK) != STATUS_OK:
        return ERROR
    if _early(observation, peers):
        return EARLY
    if _wrapped(observation, peers, times):
        return WRAPPED
    if _clamped(observation, peers, times, clamp_fields):
        return CLAMPED
    if _wrong(observation, peers, times, clock):
        return WRONG
    return RIGHT


SEVERITY = (ERROR, EARLY, WRAPPED, WRONG, CLAMPED, RIGHT)
"""When a call was observed more than once, the cell shows the worst."""


def step_clocks(scenario: Scenario) -> dict[int, int]:
    """Per step index, the last time the scenario put the clock at before it ran:
    the RTC at boot, a set-clock or hwclock step, the step's own reset-clock."""
    clocks: dict[int, int] = {}
    clock: int = scenario.rtc
    for step in scenario.steps:
        for attribute in ("time", "reset_clock"):  # SetClockStep / HwclockStep, ProbeStep
            value = getattr(step, attribute, None)
            if is_int(value) and step.kind in ("set-clock", "hwclock", "probe"):
                clock = value
        clocks[step.index] = clock
    return clocks


def matrix(scenario: Scenario, machine: str, observations: Iterable[Observation],
           verdicts: Iterable[Verdict] = ()) -> list[Phase]:
    """The matrix of every judged step of `scenario` on `machine`."""
    seen = [o for o in observations if o.machine == machine or not machine]
    by_verdict: dict[tuple[str, str, str], list[Verdict]] = {}
    for v in verdicts:
        by_verdict.setdefault((v.phase, v.flavour, v.call), []).append(v)
    phases = []
    clocks = step_clocks(scenario)
    for step in judged_steps(scenario):
        here = [o for o in seen if o.phase == step.phase]
        expectations = step.expectations_on(machine) if machine in scenario.machines else ()
        flavours = list(dict.fromkeys(o.flavour for o in here))
        calls = list(dict.fromkeys(o.call for o in here))
        available = scenario.machines.get(machine, ())
        for e in expectations:  # expected but never observed: still a row and a column
            if e.call not in calls:
                calls.append(e.call)
            if e.flavour not in flavours and e.flavour in available:
                flavours.append(e.flavour)
        cells: dict[tuple[str, str], Cell] = {}
        for call in calls:
            of_call = [o for o in here if o.call == call]
            times = _time_fields(step, call, of_call)
            for flavour in flavours:
                mine = tuple(o for o in of_call if o.flavour == flavour)
                peers = [o for o in of_call if o.flavour != flavour]
                wanted = [e for e in expectations if e.call == call and e.flavour == flavour]
                clamp = {e.field for e in wanted if isinstance(e.matcher, Clamped)}
                kinds = {classify(o, peers, times, clamp, clocks.get(step.index)) for o in mine}
                kind = next((k for k in SEVERITY if k in kinds), "")
                fields = [e.field for e in wanted if e.field != ERRNO_FIELD]
                fields = list(dict.fromkeys(fields)) + ([ERRNO_FIELD] if any(
                    e.field == ERRNO_FIELD for e in wanted) else [])
                verdict_list = tuple(by_verdict.get((step.phase, flavour, call), ()))
                if mine or verdict_list:
                    cells[call, flavour] = Cell(step.index, step.phase, step.probe, call, flavour, mine,
                                                verdict_list, kind, times, tuple(fields))
        phases.append(Phase(step.index, step.phase, step.probe, tuple(calls), tuple(flavours), cells))
    return phases


def headline(cell: Cell, compact: bool = False, limit: int | None = None) -> str:
    """A cell at a glance: the errno (and how long a wait took), or the fields
    the scenario checks (a lone `seconds` as its bare value), else `seconds`,
    else "ok"; "-" when nothing was observed. `limit`: at most so many fields,
    then "+N"."""
    if not cell.observations:
        return "-"
    first = cell.observations[0]
    values = first.values
    if first.errno is not None:
        elapsed = values.get("elapsed")
        waited = first.errno in WAIT_ENDINGS and is_number(elapsed)
        return first.errno + (f" {show_value(elapsed, False)}s" if waited and elapsed is not None else "")
    shown = [f for f in cell.expected_fields if f in values] or (["seconds"] if "seconds" in values else [])
    if shown == ["seconds"]:
        return cell.value_text("seconds", values["seconds"], compact)
    kept = shown if limit is None else shown[:limit]
    text = " ".join(f"{f}={cell.value_text(f, values[f], compact)}" for f in kept) or "ok"
    return text + (f" +{len(shown) - len(kept)}" if len(kept) < len(shown) else "")


def all_fields(cell: Cell, compact: bool = False) -> list[tuple[str, str]]:
    """Every field of the cell's (first) observation, errno first, as text."""
    if not cell.observations:
        return []
    first = cell.observations[0]
    fields = [(ERRNO_FIELD, first.errno)] if first.errno is not None else []
    return fields + [(name, cell.value_text(name, value, compact)) for name, value in first.values.items()]
