"""Horizons: the dates at which 32-bit time ends in one way or another,
each program run at every one, and the first at which it broke (pure).

    horizon_moments(extra)              the reference, the ladder, then the user's --at
    first_broken(static, runs, timeout) (label of the first horizon it broke at, or "",
                                         {label: verdict at that horizon})

Each horizon's run is judged against the reference run alone, with the
runtime verdict's own rules (sandbox/audit/runtime/verdict.py RULES), so a
program that broke at 2038 and again at 2106 gives 2038, and one that only
fails on 2100's leap day gives that.
"""
from __future__ import annotations

from sandbox.audit.runtime.plan import Moment
from sandbox.audit.runtime.verdict import BROKE, Runs, RunFacts, runtime_verdict
from sandbox.base.errors import SandboxError

REFERENCE = Moment("reference", "2036-01-01T00:00:00Z")
"""Before every horizon: the run the others are compared with."""
LADDER: tuple[tuple[Moment, str], ...] = (
    (Moment("ntp2036", "2036-02-07T06:28:16Z"), "NTP era 0 ends: a 32-bit NTP timestamp wraps"),
    (Moment("y2038", "2038-01-19T03:14:08Z"), "signed 32-bit time_t overflows"),
    (Moment("y2038_day", "2038-01-20T03:14:08Z"), "a day later: cached values and daily jobs"),
    (Moment("x509_2050", "2050-01-01T00:00:00Z"), "X.509 switches from UTCTime to GeneralizedTime"),
    (Moment("leap2100", "2100-03-01T00:00:00Z"), "the first century year that is not a leap year"),
    (Moment("u32_2106", "2106-02-07T06:28:16Z"), "unsigned 32-bit time overflows"),
)
LABELS = tuple(m.label for m, _ in LADDER)


def horizon_moments(extra: tuple[Moment, ...] = ()) -> tuple[Moment, ...]:
    """The reference first, the ladder, then the user's own (--at), in that order."""
    taken = {REFERENCE.label, *LABELS}
    clash = [m.label for m in extra if m.label in taken]
    if clash:
        raise SandboxError(f"--at {clash[0]}: a horizon's own label (taken: {', '.join(sorted(taken))})")
    return (REFERENCE, *(m for m, _ in LADDER), *extra)


def first_broken(static: str, runs: tuple[RunFacts, ...], timeout: float) -> tuple[str, dict[str, str]]:
    """The first horizon whose run broke against the reference run, and
    each horizon's verdict ("" and {} when the program did not run)."""
    if len(runs) < 2:
        return "", {}
    reference = runs[0]
    verdicts = {run.label: runtime_verdict(Runs(static, (reference, run), timeout))[0] for run in runs[1:]}
    first = next((label for label, verdict in verdicts.items() if verdict == BROKE), "")
    return first, verdicts
