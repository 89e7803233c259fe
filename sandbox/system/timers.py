"""When each timer of a system ran, from what a rehearsal saw (pure).

    timer_runs(observed) -> {timer: TimerRuns}

A timer's runs are gathered from every place that shows one, since after
the rollover some of them fall silent (Debian 12's journald dies, its
manager stops answering):

- `systemctl show`'s LastTriggerUSec of the timer, before and after the night;
- the journal: PID 1's "Starting"/"Started"/"Finished" lines of the unit it
  triggers (`<name>.timer` triggers `<name>.service`, systemd's default);
- our periodic job's ticks (`/var/log/y2038-tick`, PERIODIC_JOBS of facts.py):
  the line each run of `y2038-tick.timer` wrote.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.base.timefmt import format_time, parse_time
from sandbox.system import observe
from sandbox.system.facts import PERIODIC_JOBS, Observed

SHOWN_TIME = re.compile(r"(?P<date>\d{4}-\d\d-\d\d) (?P<clock>\d\d:\d\d:\d\d)")
"""`systemctl show`'s timestamps ("Tue 2038-01-19 03:15:00 UTC"); the commands run with TZ=UTC0."""
RUN_LINE = re.compile(r"^(?:Starting|Started|Finished) ")


@dataclass(frozen=True)
class TimerRuns:
    timer: str
    runs: tuple[int, ...]  # guest seconds, ascending, each run once
    sources: tuple[str, ...]  # where runs were seen: "show", "journal", "ticks"

    def first_after(self, moment: int) -> int | None:
        return next((t for t in self.runs if t >= moment), None)

    def describe(self, moment: int) -> str:
        after = self.first_after(moment)
        if after is not None:
            later = sum(1 for t in self.runs if t >= moment)
            return f"ran after it: first {format_time(after)}, {later} run(s) seen ({', '.join(self.sources)})"
        last = f", last {format_time(self.runs[-1])}" if self.runs else ""
        return f"no run seen after it ({len(self.runs)} before{last}; {', '.join(self.sources) or 'no source'})"


def shown_time(value: str) -> int | None:
    """A `systemctl show` timestamp as seconds; None for "n/a", "" or 0."""
    match = SHOWN_TIME.search(value or "")
    return parse_time(f"{match['date']}T{match['clock']}Z") if match else None


def service_of(timer: str) -> str:
    return timer.removesuffix(".timer") + ".service"


def timer_names(observed: Observed) -> set[str]:
    """Every timer the run saw: in `systemctl show` or in a look's states."""
    found = set(observe.unit_blocks(observed.units_before)) | set(observe.unit_blocks(observed.units_after))
    for look in observed.timeline:
        found |= set(observe.unit_states(str(look.get("states", ""))))
    return {name for name in found if name.endswith(".timer")}


def timer_runs(observed: Observed) -> dict[str, TimerRuns]:
    names = timer_names(observed) | {unit for _, unit in PERIODIC_JOBS if unit.endswith(".timer")}
    blocks = (observe.unit_blocks(observed.units_before), observe.unit_blocks(observed.units_after))
    ticks = observe.ticks(observed.ticks)
    found = {}
    for timer in sorted(names):
        shown = [shown_time(block.get(timer, {}).get("LastTriggerUSec", "")) for block in blocks]
        service = service_of(timer)
        seen = {
            "show": [t for t in shown if t is not None],
            "journal": [e.usec // 1_000_000 for e in observed.journal
                        if e.unit == service and RUN_LINE.match(e.message)],
            "ticks": [t for who, unit in PERIODIC_JOBS if unit == timer for t in ticks.get(who, [])],
        }
        runs = _one_per_minute(sorted({t for times in seen.values() for t in times}))
        found[timer] = TimerRuns(timer, tuple(runs), tuple(source for source, times in seen.items() if times))
    return found


def _one_per_minute(times: list[int]) -> list[int]:
    """One run per minute: a run's "Starting", "Started" and tick are seconds apart."""
    kept: list[int] = []
    for t in times:
        if not kept or t - kept[-1] >= 30:
            kept.append(t)
    return kept
