"""Under time warp a scenario run twice observes the same values, but for
the fields it marks as varying (sandbox/judge/repeat.py, docs/time-warp.md):
the day across the rollover, twice on x86_64, compared field by field."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from sandbox.app.jobs import run_and_judge
from sandbox.base import paths
from sandbox.guest.target import Target
from sandbox.judge.repeat import differences
from sandbox.scenario import suite

DAY = paths.SCENARIOS / "timers" / "day-across-rollover.toml"


def test_a_warped_day_observes_the_same_twice(y2038_target: Callable[..., Target], y2038_evidence: Path) -> None:
    (scenario,) = suite.load_all([DAY])
    assert scenario.warp and scenario.varying, "the scenario must run under warp and say what varies"
    runs = []
    for attempt in ("first", "second"):
        judged = run_and_judge(y2038_target("x86_64"), scenario, y2038_evidence / attempt)
        assert judged.passed, f"{attempt} run: {judged.record.outcome} {judged.record.detail}"
        runs.append(judged.record.observations)
    first, second = runs
    assert len(first) > 100
    found = differences(first, second, scenario.varying)
    assert not found, "\n".join(map(str, found))
    # and the varying fields did vary: the comparison is not vacuous
    assert differences(first, second), "two runs matched to the nanosecond: is `varying` still needed?"
