"""The command line's exit codes, as LAVA separates them: 0 passed, 1
expectations failed, 2 bad input or a build problem, 3 the guest panicked,
oopsed, hung or lost its agent, or the harness itself failed (infrastructure,
not the scenario), 4 a step that must succeed (a clock move, a sysctl, a
mount) failed in a healthy guest; 128 + n a signal n stopped it (130 SIGINT,
143 SIGTERM, 129 SIGHUP, 131 SIGQUIT, 138 SIGUSR1: sandbox/app/signals.py), the
run recorded as interrupted, or killed it outright (137 SIGKILL, set by the
parent of sandbox/app/supervisor.py), the run read back as killed."""
from __future__ import annotations

from sandbox.judge.judged import JudgedRun
from sandbox.run.record import STEP_FAILED

EXIT_PASSED, EXIT_FAILED, EXIT_ERROR, EXIT_INFRA, EXIT_STEP = 0, 1, 2, 3, 4


def exit_code(runs: list[JudgedRun]) -> int:
    """The worst of the runs: infrastructure, then a failed step, then an expectation."""
    if any(r.record.infrastructure_failed for r in runs):
        return EXIT_INFRA
    if any(r.record.outcome == STEP_FAILED for r in runs):
        return EXIT_STEP
    return EXIT_PASSED if all(r.passed for r in runs) else EXIT_FAILED
