"""Recording mode (sandbox/report/recording.py): a scenario without
expectations, filled from what a captured run observed, validates and
passes against that run; steps that already have expectations are left
alone."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from replay_guest import BASE, ReplayGuest, captured, prepared

from sandbox.base.errors import InputError
from sandbox.guest.qemu import BootRequest
from sandbox.judge.evaluate import evaluate
from sandbox.report.recording import TODO, record
from sandbox.run.record import RunRecord
from sandbox.run.runner import run_scenario
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario

BARE = """\
title = "clock reads across the 2038 rollover, to be recorded"
rtc = "2038-01-19T03:13:50Z"

[[step]]
phase = "before"
probe = "clock"

# the step
[[step]]
set-clock = "2038-01-19T03:14:30Z"

# this comment leads into the "after" step and stays with it
[[step]]
phase = "after"
probe = "clock"
"""


def load(tmp_path: Path, text: str, name: str = "bare.toml", recording: bool = True) -> Scenario:
    """recording: a file to record, which has no expectations yet (`just record` loads it so)."""
    path = tmp_path / "scenarios" / "clock" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return suite.load(path, recording=recording)


def replayed(tmp_path: Path, scenario: Scenario) -> RunRecord:
    transcript, console = captured("normal")
    boot = BASE

    def start(request: BootRequest) -> ReplayGuest:
        return ReplayGuest(request, transcript, console)
    return run_scenario(scenario, prepared(scenario, tmp_path / "evidence", boot), start)


def test_a_recorded_scenario_passes_against_the_run_it_came_from(tmp_path: Path) -> None:
    bare = load(tmp_path, BARE)
    run = replayed(tmp_path, bare)
    assert run.completed and evaluate(bare, "x86_64", run.observations).verdicts == ()
    text = record(BARE, bare, run.observations, "2026-12-03 on x86_64")
    recorded = load(tmp_path, text, "recorded.toml", recording=False)  # a test now: it judges something
    result = evaluate(recorded, "x86_64", run.observations)
    # seconds of 3 calls x 4 flavours before, and after but for time32-libc's 3 errnos
    assert len(result.verdicts) == 12 + 9 + 3
    assert result.passed
    assert "# left out, may vary: nsec" in text  # a clock's nanoseconds are not a constant
    # each flavour's group is marked for the author, in both probe steps
    assert text.count(TODO.format(where="2026-12-03 on x86_64")) == 8
    # the wrap is a wrapped window, glibc's refusal an errno, a 64-bit time a window
    # (a wrapped window starts at the rollover at the earliest)
    assert re.search(r'^time = \{ seconds = \{ wrapped = \["2038-01-19T03:14:08Z", "2038-01-19T03:15:30Z"\]', text, re.M)
    assert 'time = { errno = "EOVERFLOW" }' in text
    assert re.search(r'^time = \{ seconds = \{ between = \["2038-01-19T03:13:30Z", "2038-01-19T03:15:30Z"\] \} \}',
                     text, re.M)


def test_comments_and_other_steps_stay_where_they_were(tmp_path: Path) -> None:
    bare = load(tmp_path, BARE)
    text = record(BARE, bare, replayed(tmp_path, bare).observations, "now")
    recorded = ("[step.expect", "time", "gettimeofday", "clock_gettime", "# TODO")
    kept = [line for line in text.splitlines() if not line.startswith(recorded)]
    assert [line for line in kept if line] == [line for line in BARE.splitlines() if line]
    lead = text.index("# this comment leads into")
    assert text.index("[[step]]", lead) - lead < 80  # still right above its step


def test_a_step_with_expectations_is_not_touched(tmp_path: Path) -> None:
    text = BARE + '[step.expect.time64.time]\nseconds = { between = ["2038-01-19T03:14:30Z", "2038-01-19T03:16:30Z"] }\n'
    scenario = load(tmp_path, text)
    recorded = record(text, scenario, replayed(tmp_path, scenario).observations, "now")
    assert recorded.count("# TODO") == 4  # the "before" step only
    assert recorded.endswith(text.split("# this comment")[1])


def test_a_file_whose_steps_cannot_be_found_is_refused(tmp_path: Path) -> None:
    text = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\nstep = [{ phase = "p", probe = "clock" }]\n'
    scenario = load(tmp_path, text)
    with pytest.raises(InputError, match="recording needs one \\[\\[step\\]\\] header per step"):
        record(text, scenario, (), "now")
