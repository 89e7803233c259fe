"""Two results folders of the same scenarios compared, run by run: what a
scenario observed on one kernel tree and not on the other.

    python3 -m sandbox tree-diff RESULTS_6_1 RESULTS_6_12

For each <scenario>/<machine> folder present in both: the verdicts (every
expectation's passed, by step, phase, flavour, call and field) and the
observations field by field (sandbox/judge/repeat.py's differences), less
what differs from run to run on one kernel as well:

- NOISE: fractions of a second (nsec, usec), chronyd's measured step and
  its text (log, tracking, sources);
- a time in seconds (any integer field, epoch-sized) within TIME_SLACK_S
  of the other: two runs started a second apart read the clock a second
  apart; a wrap (2^32 s) or a clamp (decades) is far outside it;
- a measured duration (a float: a wait's elapsed or delay, a timer's
  remaining value) within FLOAT_SLACK_S of the other: a timer read just
  before or after a whole second (2.999962 against 2.001098 in two 6.1 runs);
- of a real program (a run step) only how it ended (exit, status), and of
  chronyd (an ntp-sync step) what it did (PROBE_FIELDS): a 32-bit program
  past 2038 prints what its stack held (Debian 12 armhf sqlite3 read
  1934-04-19 in one 6.1 run and 1978-02-13 in the next), and chronyc's
  report holds its measured offsets;
- a small integer time (a faked clock's seconds, -2 then -1) within
  TIME_SLACK_S, in the fields named in CLOCK_FIELDS.

Pure but for reading the folders (runs_in, main).
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base import evidence_read as read
from sandbox.judge.repeat import Difference, differences
from sandbox.run.observations import Observation

NOISE: frozenset[str] = frozenset({
    "nsec", "usec", "step", "log", "tracking", "sources",
})
"""Fields that differ between two runs of one kernel (sub-second parts,
host timing, chronyd's text with its times)."""
PROBE_FIELDS: Mapping[str, frozenset[str]] = {
    "run": frozenset({"exit", "status"}),
    "ntp": frozenset({"result", "leap", "stratum", "reference"}),
}
"""The only fields compared of these probes' observations."""
CLOCK_FIELDS: frozenset[str] = frozenset({"seconds", "tv_sec", "woke", "time", "clock"})
TIME_SLACK_S = 5
FLOAT_SLACK_S = 1.5
EPOCH_SIZED = 10**8  # an integer above this (1973) is taken for a time in seconds


@dataclass(frozen=True)
class RunPair:
    run: str  # "<scenario slug>/<machine>"
    observations: int  # compared, in the first folder
    expectations: int  # verdicts compared
    verdicts: tuple[str, ...]  # expectations passed in one folder and not the other
    differences: tuple[Difference, ...]  # observations that differ beyond the noise


def _is_time(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > EPOCH_SIZED


def matters(difference: Difference) -> bool:
    """Whether a field difference is more than two runs of one kernel show."""
    first, second, probe = difference.first, difference.second, difference.key[3]
    if difference.field in NOISE or (probe in PROBE_FIELDS and difference.field not in PROBE_FIELDS[probe]):
        return False
    if difference.field in CLOCK_FIELDS and isinstance(first, int) and isinstance(second, int):
        return abs(first - second) > TIME_SLACK_S
    if _is_time(first) and _is_time(second):
        return abs(int(first) - int(second)) > TIME_SLACK_S  # type: ignore[call-overload]  # _is_time: both int-like
    if isinstance(first, float) and isinstance(second, float):
        return abs(first - second) > FLOAT_SLACK_S
    return True


def verdict_changes(first: Sequence[Mapping[str, object]], second: Sequence[Mapping[str, object]]) -> tuple[str, ...]:
    """Expectations (step, phase, flavour, call, field) whose `passed` differs,
    or that only one side judged."""
    def table(rows: Sequence[Mapping[str, object]]) -> dict[str, object]:
        return {" ".join(str(r.get(k)) for k in ("step", "phase", "flavour", "call", "field")): r.get("passed")
                for r in rows}
    one, two = table(first), table(second)
    return tuple(f"{key}: {one.get(key, 'not judged')} then {two.get(key, 'not judged')}"
                 for key in list(one) + [k for k in two if k not in one] if one.get(key) != two.get(key))


def compare_run(run: str, first: Sequence[Observation], second: Sequence[Observation],
                verdicts: tuple[Sequence[Mapping[str, object]], Sequence[Mapping[str, object]]]) -> RunPair:
    kept = tuple(d for d in differences(first, second) if matters(d))
    return RunPair(run, len(first), len(verdicts[0]), verdict_changes(*verdicts), kept)


def _observations(path: Path) -> list[Observation]:
    """Through the bounded reader (sandbox/base/evidence_read.py): a link, a FIFO, NaN is one line."""
    text = read.read_text(path.parent, path.name) or ""
    return [Observation.from_record(read.loads(line, str(path), f"line {n}"))
            for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _verdicts(path: Path) -> list[Mapping[str, object]]:
    found = read.read_json(path.parent, path.name)
    return found if isinstance(found, list) else []


def runs_in(folder: Path) -> dict[str, Path]:
    """'<slug>/<machine>' -> its evidence folder, for every run of a results folder."""
    return {f"{p.parent.parent.name}/{p.parent.name}": p.parent for p in sorted(folder.glob(f"*/*/{files.RUN}"))}


def compare_folders(first: Path, second: Path) -> tuple[list[RunPair], list[str]]:
    """The runs both folders hold, compared; and the runs only one holds."""
    one, two = runs_in(first), runs_in(second)
    pairs = [compare_run(run, _observations(one[run] / files.OBSERVATIONS),
                         _observations(two[run] / files.OBSERVATIONS),
                         (_verdicts(one[run] / files.VERDICTS), _verdicts(two[run] / files.VERDICTS)))
             for run in one if run in two]
    alone = sorted(set(one) ^ set(two))
    return pairs, alone


def report(pairs: list[RunPair], alone: list[str]) -> str:
    lines = []
    for pair in pairs:
        if pair.verdicts or pair.differences:
            lines.append(f"{pair.run}: {len(pair.verdicts)} verdict(s), {len(pair.differences)} observation(s) differ")
            lines += [f"  verdict {text}" for text in pair.verdicts]
            lines += [f"  {d}" for d in pair.differences]
    same = sum(1 for p in pairs if not p.verdicts and not p.differences)
    lines.append(f"{len(pairs)} runs compared ({sum(p.observations for p in pairs)} observations, "
                 f"{sum(p.expectations for p in pairs)} expectations): {same} the same, "
                 f"{len(pairs) - same} different; in one folder only: {', '.join(alone) or 'none'}")
    return "\n".join(lines)


if __name__ == "__main__":  # as `python3 -m sandbox tree-diff RESULTS_A RESULTS_B`
    from sandbox.app.cli import main
    sys.exit(main(["tree-diff", *sys.argv[1:]]))
