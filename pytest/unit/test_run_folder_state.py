"""A run's folder says at every moment what it is (sandbox/base/evidence.py):
`running` with its process from the start, its outcome at the end; a run
killed outright reads as `killed`, and damaged evidence is named with its
reason, never shown as a clean page or a silent `UNKNOWN`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from captured_results import MACHINE, build_results, fake_target
from replay_guest import ReplayGuest, captured

from sandbox.app import verbs
from sandbox.app.jobs import run_and_judge
from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest
from sandbox.report.evidence import default_reader, read_results, read_run
from sandbox.report.html import REPORT_FILE, write_report
from sandbox.scenario import suite

ROLLOVER_RUN = "clock-rollover/x86_64"
KILLED_RUN = "clock-killed/x86_64"


def killed_run(results: Path) -> Path:
    """A run whose process marked it running, then died by SIGKILL."""
    folder = results / KILLED_RUN
    code = ("import os, signal, sys; from pathlib import Path; from sandbox.base.evidence import Evidence; "
            "Evidence(Path(sys.argv[1])).mark_running('clock/rollover', 'x86_64'); "
            "os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", code, str(folder)], env={**os.environ, "PYTHONPATH": str(REPO)},
                          check=False, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    return folder


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    folder, _ = build_results(tmp_path, failing=False)
    return folder


def test_a_run_says_running_while_it_runs_then_its_outcome(tmp_path: Path) -> None:
    scenario = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
    transcript, console = captured("normal")
    evidence = tmp_path / "results" / "s" / scenario.slug / MACHINE
    seen: list[dict[str, object]] = []

    def start(request: BootRequest) -> ReplayGuest:
        seen.append(json.loads((request.evidence / files.RUN).read_text()))  # as the guest boots
        return ReplayGuest(request, transcript, console)

    judged = run_and_judge(fake_target(), scenario, evidence, start)
    assert seen[0]["state"] == files.RUNNING and seen[0]["pid"] == os.getpid()
    assert files.state_of(seen[0]) == files.RUNNING  # this process lives: not killed
    final = json.loads((evidence / files.RUN).read_text())
    assert final["outcome"] == judged.record.outcome == "completed" and "state" not in final


def test_a_killed_run_is_reported_killed_and_report_exits_non_zero(results: Path) -> None:
    killed = killed_run(results)
    run = read_run(killed, default_reader())
    assert run.outcome == files.KILLED and run.state == "KILLED" and not run.passed
    stats = write_report(results)
    assert len(stats.unsound) == 1 and "killed" in stats.unsound[0] and "clock/rollover" in stats.unsound[0]
    page = (results / REPORT_FILE).read_text()
    assert "every run completed" not in page and "killed" in page
    assert verbs.cmd_report(type("Args", (), {"folder": str(results)})()) == 3


def test_a_clean_folder_still_reports_clean(results: Path) -> None:
    stats = write_report(results)
    assert stats.unsound == () and "every run completed" in (results / REPORT_FILE).read_text()
    assert verbs.cmd_report(type("Args", (), {"folder": str(results)})()) == 0


@pytest.mark.parametrize("content, reason", [
    (b"", "run.json is empty"),
    (b"\0" * 512, "run.json holds only NUL bytes (512)"),
    (b'{"scenario": "clock/rollover", "machine": "x86_64", "outc', "run.json is not whole JSON: it ends early"),
])
def test_damaged_run_json_is_named_with_its_reason(results: Path, content: bytes, reason: str) -> None:
    (results / ROLLOVER_RUN / files.RUN).write_bytes(content)
    (run,) = [r for r in read_results(results, default_reader()).runs if r.folder == results / ROLLOVER_RUN]
    assert run.damage and run.damage[0].startswith(reason) and not run.passed
    stats = write_report(results)
    assert any(reason in line for line in stats.unsound)
    assert f"damaged evidence: {reason}" in (results / REPORT_FILE).read_text()


def test_a_truncated_observations_file_is_named_not_dropped_silently(results: Path) -> None:
    path = results / ROLLOVER_RUN / files.OBSERVATIONS
    whole = path.read_text()
    path.write_text(whole[:-40])  # the last line cut
    run = read_run(results / ROLLOVER_RUN, default_reader())
    lines = whole.count("\n")
    assert run.damage == (f"observations.jsonl: line {lines} of {lines} is not an observation (truncated)",)
    assert len(run.observations) == lines - 1 and not run.passed


def test_every_file_of_a_run_is_named_by_the_evidence_module(results: Path) -> None:
    left = {p.name for p in (results / ROLLOVER_RUN).iterdir()}
    named = set(files.FILES) | {files.CHARTS, files.chart(1), files.VERDICTS}
    assert left <= named, left - named
    assert not any(p.name.endswith(".tmp") for p in (results / ROLLOVER_RUN).iterdir())  # written whole
    assert Evidence(results / ROLLOVER_RUN).session == results and (results / files.SESSION).is_file()
