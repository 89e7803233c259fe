"""A system scenario's expectations against what its rehearsal saw (pure).

    evaluate(scenario, verdicts, observed) -> (Check, ...)

- a unit: its verdict (sandbox/system/verdict.py) is the one expected, and
  the line that decided it (the verdict's reason) matches `line`;
- the journal: a pattern found, or not, in the system's log (log_lines);
- a timer: a run seen at or after the rollover, or none (sandbox/system/timers.py).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sandbox.scenario import patterns
from sandbox.system.facts import CONSOLE_WHO, Observed
from sandbox.system.phases import ROLLOVER
from sandbox.system.scenario import JournalExpectation, SystemScenario, TimerExpectation, UnitExpectation
from sandbox.system.timers import TimerRuns, timer_runs
from sandbox.system.verdict import UnitVerdict


@dataclass(frozen=True)
class Check:
    what: str  # "unit cron.service", "journal must /.../", "timer y2038-tick.timer"
    expected: str
    observed: str
    passed: bool

    def line(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        return f"{mark} {self.what}: expected {self.expected}; observed {self.observed}"


PRINTK = re.compile(r"^\[\s*\d+\.\d+\] ")
OURS = re.compile(r"^(?:Y2038-|@@Y2038)")  # our /init's and agent's own console lines


def log_lines(observed: Observed) -> list[str]:
    """The system's log: each journal entry as `identifier[pid]: message`,
    each line of /var/log/syslog as rsyslog wrote it, each process's own
    line on the kernel console (a daemon whose journal is gone writes to
    /dev/kmsg) as `identifier[pid]: message`, and what the system wrote
    straight to the console (PID 1's last words before a panic)."""
    found = [entry.line() for entry in observed.journal]
    found += observed.syslog.splitlines()
    for raw in observed.kernel_log.splitlines():
        line = raw.strip()
        match = CONSOLE_WHO.match(line)
        if match:
            found.append(f"{match['ident']}[{match['pid']}]: {match['message']}")
        elif line and not PRINTK.match(line) and not OURS.match(line):
            found.append(line)
    return found


def _unit(want: UnitExpectation, verdicts: dict[str, UnitVerdict]) -> Check:
    what = f"unit {want.unit}"
    expected = want.verdict + (f" /{want.line}/" if want.line else "")
    got = verdicts.get(want.unit)
    if got is None:
        return Check(what, expected, "no row for it in the unit table", False)
    observed = f"{got.verdict}: {got.reason}"
    if got.verdict != want.verdict:
        return Check(what, expected, observed, False)
    try:
        matched = not want.line or patterns.search(want.line, got.reason) is not None
    except patterns.PatternTimeout as err:
        return Check(what, expected, str(err), False)
    return Check(what, expected, observed, matched)


def _journal(want: JournalExpectation, lines: Sequence[str], text: str) -> Check:
    what = f"journal {'must' if want.present else 'must-not'} /{want.pattern}/"
    try:
        match = patterns.search(want.pattern, text)
    except patterns.PatternTimeout as err:
        return Check(what, "a match" if want.present else "no match", str(err), False)
    if match is None:
        return Check(what, "a match" if want.present else "no match", f"no match in {len(lines)} lines",
                     not want.present)
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    shown = text[start:end if end >= 0 else len(text)]
    return Check(what, "a match" if want.present else "no match", f"matched: {shown[:200]}", want.present)


def _timer(want: TimerExpectation, runs: dict[str, TimerRuns]) -> Check:
    what = f"timer {want.timer}"
    expected = "a run after the rollover" if want.ran_after_rollover else "no run after the rollover"
    seen = runs.get(want.timer)
    if seen is None:
        return Check(what, expected, "no such timer in the run", False)
    ran = seen.first_after(ROLLOVER) is not None
    return Check(what, expected, seen.describe(ROLLOVER), ran == want.ran_after_rollover)


def outcome_check(scenario: SystemScenario, outcome: str, failure: str) -> Check:
    observed = outcome + (f": {failure}" if failure else "")
    return Check("outcome", scenario.outcome, observed, outcome == scenario.outcome)


def evaluate(scenario: SystemScenario, verdicts: Sequence[UnitVerdict], observed: Observed) -> tuple[Check, ...]:
    by_unit = {v.unit: v for v in verdicts}
    lines = log_lines(observed)
    text = "\n".join(lines)
    runs = timer_runs(observed) if scenario.timers else {}
    return (tuple(_unit(u, by_unit) for u in scenario.units)
            + tuple(_journal(j, lines, text) for j in scenario.journal)
            + tuple(_timer(t, runs) for t in scenario.timers))
