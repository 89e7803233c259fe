"""Killed runs lose nothing: boot x86_64 through `just run`,
let the guest wait, send SIGINT, SIGTERM or SIGHUP to `just`, to the Python
process or to the whole process group, and check that no QEMU of the run is
left 2 s later and that run.json (outcome "interrupted") and report.txt are
in the results folder. sandbox/app/reliability.py does the trial; `just
reliability` prints the same matrix as figures (docs/reliability.md).

The just binary itself (behind the npm wrapper that `just` is here and in
CI) ignores SIGINT and SIGHUP while a recipe runs, by design: it expects the
terminal to have sent them to the whole process group. The pinned 1.40.0
does not forward SIGTERM either (it waits for the recipe, then exits 130).
Sent to it alone, the run goes on to its end; that case is checked to keep
its evidence and leave no QEMU behind.
"""
from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Callable

import pytest

from sandbox.app.reliability import SIGNALS, signal_trial
from sandbox.app.reliability_deaths import CASES, death_trial
from sandbox.guest.target import Target

pytestmark = pytest.mark.skipif(shutil.which("just") is None, reason="`just` is not installed")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("target", ["just", "python", "process group"])
def test_a_signal_stops_qemu_at_once_and_the_run_is_recorded(y2038_target: Callable[..., Target], tmp_path: Path,
                                                             target: str, signum: int) -> None:
    y2038_target("x86_64")  # built or reused before the clock starts
    trial = signal_trial(target, signum, tmp_path)
    assert trial.qemu_left == 0 and trial.gone_after is not None and trial.gone_after < 2.0, trial
    assert trial.outcome == "interrupted" and trial.report_kept, trial
    assert trial.exit_code in (128 + signum, -signum), trial


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_the_just_binary_alone(y2038_target: Callable[..., Target], tmp_path: Path, signum: int) -> None:
    y2038_target("x86_64")
    trial = signal_trial("just binary", signum, tmp_path, wait=4)
    # The pinned just (1.40.0) forwards none of the three: it waits for its
    # recipe (and exits 130 on SIGTERM), so the run ends on its own, with its
    # evidence and no QEMU after it. A just that forwards SIGTERM fails here:
    # the README's pin and docs/reliability.md would then be out of date.
    assert trial.report_kept and trial.outcome == "completed", trial
    assert trial.gone_after is not None, trial


# A death is never a verdict (sandbox/app/reliability_deaths.py).
DEATHS_RUN = [(t, s, d) for t, s, d in CASES if d == "run"]
DEATHS_JUDGING = [(t, s, d) for t, s, d in CASES if d == "judging"]


def _case_id(case: object) -> str:
    return signal.Signals(case).name if isinstance(case, int) else str(case)


@pytest.mark.parametrize("target, signum, during", DEATHS_RUN + DEATHS_JUDGING, ids=_case_id)
def test_a_death_is_never_a_verdict(y2038_target: Callable[..., Target], tmp_path: Path,
                                    target: str, signum: int, during: str) -> None:
    """Each fatal signal to the Python doing the work, SIGKILL/SIGTERM/SIGINT
    to `just`, SIGKILL to the parent, while the guest waits or while the run
    is judged: `just run` exits 128 + n, run.json says interrupted or killed,
    `just report` on the folder exits non-zero, no QEMU is left."""
    y2038_target("x86_64")
    death = death_trial(target, signum, tmp_path, during)
    assert death.state in ("interrupted", "killed") and death.report_exit == 3, death
    assert death.qemu_left == 0, death
    if target == "supervisor":  # the parent is the recipe's process: `just` gives its own 1 (docs/reliability.md)
        assert death.state == "interrupted", death  # the child saw it gone (its lifeline)
        return
    assert death.exit_code == 128 + signum and not death.false_pass, death
