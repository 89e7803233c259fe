"""From what a system rehearsal saw to each unit's facts (pure: texts in,
UnitFacts out; sandbox/system/verdict.py judges them)."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sandbox.audit.runtime.facts import time32_truncations
from sandbox.base.timefmt import format_time
from sandbox.system import observe
from sandbox.system.verdict import UnitFacts, error_kind

TABLE_KINDS = (".service", ".timer", ".socket", ".scope")  # what the table shows; mounts, devices... do not run code
WRAPPED_BEFORE = 946684800  # 2000-01-01: a stamp before it is a wrapped or reset clock, not the baseline's past
PERIODIC_JOBS = (("cron", "cron.service"), ("timer", "y2038-tick.timer"))  # (tick writer, the unit that runs it)
MISSED_ALLOWED = 2  # minutes without a tick a busy boot may lose
CONSOLE_WHO = re.compile(r"^\[\s*[\d.]+\] (?P<ident>[^\[: ]+)\[(?P<pid>\d+)\]: (?P<message>.*)$")
"""A process's own line on the kernel console ("systemd-journald[83]: Assertion ..."): what a
crashing systemd daemon writes to /dev/kmsg when its journal is gone."""
SYSLOG_WHO = re.compile(r"^\S+(?: +\S+){2} \S+ (?P<ident>[^\[: ]+)\[(?P<pid>\d+)\]: (?P<message>.*)$")
MANAGER_PID = 1
NAMED_UNIT = re.compile(r"^(?P<unit>[A-Za-z0-9:_.\\@-]+\.(?:service|timer|socket|scope|mount|path|target|slice)): ")
"""PID 1 speaking of one of its units ("systemd[1]: chrony.service: Failed with result ..."): the
journal files it under that unit (UNIT=); on the console and in syslog only these words say so."""


@dataclass(frozen=True)
class Observed:
    """Everything the boot wrote down, as text (sandbox/system/boot.py)."""

    start: int  # guest seconds at the baseline
    end: int
    units_before: str
    units_after: str
    timeline: Sequence[Mapping[str, object]] = ()
    journal: Sequence[observe.JournalEntry] = ()
    syslog: str = ""
    kernel_log: str = ""
    ticks: str = ""
    extra_errors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # unit -> lines found elsewhere
    night_end: int = 0  # with a step to a later horizon: the night's end, and
    step_at: int = 0  # the horizon stepped to (0: no step)

    def spans(self) -> tuple[tuple[int, int], ...]:
        """The guest times the clock ran through: the night, and after a
        step the span from the horizon to the end."""
        if self.step_at:
            return (self.start, self.night_end), (self.step_at, self.end)
        return ((self.start, self.end),)


def _state(block: Mapping[str, str] | None) -> str:
    return f"{block.get('ActiveState', '?')}/{block.get('SubState', '?')}" if block else ""


def pid_units(timeline: Sequence[Mapping[str, object]]) -> dict[int, str]:
    """Each process seen at any look, with the unit its cgroup names."""
    found = {}
    for look in timeline:
        for process in observe.processes(str(look.get("processes", ""))):
            if process.unit:
                found[process.pid] = process.unit
    return found


def time32_by_unit(timeline: Sequence[Mapping[str, object]]) -> dict[str, int]:
    """The time32 calls of each unit's processes, each process counted at its
    last look (a process's count only grows)."""
    last: dict[int, observe.Process] = {}
    for look in timeline:
        for process in observe.processes(str(look.get("processes", ""))):
            last[process.pid] = process
    totals: dict[str, int] = {}
    for process in last.values():
        if process.unit:
            totals[process.unit] = totals.get(process.unit, 0) + process.time32_syscalls
    return totals


def in_span(usec: int, start: int) -> bool:
    seconds = usec // 1_000_000
    return seconds >= start or seconds < WRAPPED_BEFORE


def errors_by_unit(observed: Observed, pids: Mapping[int, str]) -> dict[str, list[str]]:
    """Journal lines (by their unit) and syslog lines (by their process's
    unit) from the baseline on that say something went wrong."""
    found: dict[str, list[str]] = {}
    for entry in observed.journal:
        kind = error_kind(entry.message)
        unit = entry.unit or pids.get(entry.pid, "")
        if kind and unit and in_span(entry.usec, observed.start):
            found.setdefault(unit, []).append(f"{kind}: {entry.line()}")
    for line in observed.syslog.splitlines():
        match = SYSLOG_WHO.match(line)
        kind = error_kind(line)
        if match and kind and int(match["pid"]) in pids:
            text = f"{kind}: {match['ident']}[{match['pid']}]: {match['message']}"
            unit = line_unit(int(match["pid"]), match["message"], pids)
            if text not in found.get(unit, []):
                found.setdefault(unit, []).append(text)
    for line in observed.kernel_log.splitlines():
        match = CONSOLE_WHO.match(line.strip())
        kind = error_kind(line) if match else ""
        if match and kind and int(match["pid"]) in pids:
            text = f"{kind}: {match['ident']}[{match['pid']}]: {match['message']}"
            unit = line_unit(int(match["pid"]), match["message"], pids)
            if text not in found.get(unit, []):
                found.setdefault(unit, []).append(text)
    for unit, lines in observed.extra_errors.items():
        found.setdefault(unit, []).extend(lines)
    return found


def line_unit(pid: int, message: str, pids: Mapping[int, str]) -> str:
    """The unit a process's line is about: PID 1's line naming a unit is that
    unit's, any other line its process's (by cgroup)."""
    named = NAMED_UNIT.match(message) if pid == MANAGER_PID else None
    return named["unit"] if named else pids[pid]


def missed_in(times: Sequence[int], start: int, end: int) -> str:
    """A once-a-minute job's minutes without a run, from its first run in
    the span to its end; "" when at most MISSED_ALLOWED are missing."""
    runs = sorted(t for t in times if start <= t <= end)
    if not runs:
        return f"no run between {format_time(start)} and {format_time(end)}"
    minutes = {t // 60 for t in runs}
    expected = range(runs[0] // 60, (end - 60) // 60)
    missing = [m for m in expected if m not in minutes]
    if len(missing) <= MISSED_ALLOWED:
        return ""
    return (f"missed {len(missing)} of {len(expected)} minutes, first {format_time(missing[0] * 60)},"
            f" last run {format_time(runs[-1])}")


def missed_runs(times: Sequence[int], spans: Sequence[tuple[int, int]]) -> str:
    """missed_in for each span the clock ran through (the night, then the
    span after a step), the first that missed; a step's says so."""
    for number, (start, end) in enumerate(spans):
        missed = missed_in(times, start, end)
        if missed:
            return missed if number == 0 else f"after the step to {format_time(start)}: {missed}"
    return ""


def unit_facts(observed: Observed) -> list[UnitFacts]:
    before = observe.unit_blocks(observed.units_before)
    after = observe.unit_blocks(observed.units_after)
    pids = pid_units(observed.timeline)
    errors = errors_by_unit(observed, pids)
    time32 = time32_by_unit(observed.timeline)
    truncations: dict[str, list[str]] = {}
    for cut in time32_truncations(observed.kernel_log):
        unit = pids.get(cut.tgid, "")
        if unit and cut.describe() not in truncations.get(unit, []):
            truncations.setdefault(unit, []).append(cut.describe())
    ticks = observe.ticks(observed.ticks)
    missed = {unit: missed_runs(ticks.get(who, []), observed.spans()) for who, unit in PERIODIC_JOBS}
    seen_states: dict[str, set[str]] = {}
    for look in observed.timeline:
        for unit, state in observe.unit_states(str(look.get("states", ""))).items():
            seen_states.setdefault(unit, set()).add(state)
    looks = [observe.unit_states(str(look.get("states", ""))) for look in observed.timeline]
    answered = [states for states in looks if states]
    first_look, last_look = (answered[0], answered[-1]) if answered else ({}, {})
    named = set(before) | set(after) | set(first_look) | set(last_look)
    names = sorted(u for u in named if u.endswith(TABLE_KINDS)
                   and (before.get(u) or after.get(u) or {}).get("LoadState") != "not-found")
    facts = []
    for unit in names:
        b, a = before.get(unit), after.get(unit)
        states = {_state(b), _state(a), *seen_states.get(unit, set())}
        # `systemctl show` unanswered: the first and the last look that answered stand for it
        state_before = _state(b) or first_look.get(unit, "")
        state_after = _state(a) or (last_look.get(unit, "") if looks and looks[-1] else "")
        active = any(s.startswith(("active", "activating", "deactivating", "reloading", "failed")) for s in states)
        triggered = bool(a and a.get("LastTriggerUSec", "n/a") not in ("", "n/a", "0")
                         and a.get("LastTriggerUSec") != (b or {}).get("LastTriggerUSec"))
        facts.append(UnitFacts(
            unit, state_before, state_after, (a or {}).get("Result", ""),
            max(_int((a or {}).get("NRestarts")) - _int((b or {}).get("NRestarts")), 0),
            tuple(errors.get(unit, ())), time32.get(unit, 0), tuple(truncations.get(unit, ())),
            missed.get(unit, "") if unit in missed else "", active or triggered or bool(errors.get(unit))))
    known = {who for who, _ in PERIODIC_JOBS}
    for who in sorted(set(ticks) - known):  # another init's periodic job (an inittab line): no unit but itself
        facts.append(UnitFacts(f"{who} (periodic job)", missed=missed_runs(ticks[who], observed.spans())))
    return facts


CLOCK_POLICY = re.compile(r"[Rr]esetting clock|System time (?:is further ahead|before build time)|"
                          r"clock-valid-range|Time has been changed")
"""What systemd says when it moves the clock at boot (a clock far past its
build time, clock-valid-range-usec-max, is reset) or sees it jump."""


def clock_findings(console: str, journal: Sequence[observe.JournalEntry]) -> list[str]:
    """The system's own lines about its clock: a finding of the system, not a
    verdict of a unit."""
    found = [e.line() for e in journal if CLOCK_POLICY.search(e.message)]
    found += [line.strip() for line in console.splitlines()
              if CLOCK_POLICY.search(line) and not any(line.strip().endswith(f) for f in found)]
    return list(dict.fromkeys(found))


def _int(text: str | None) -> int:
    return int(text) if text and text.isdigit() else 0
