"""A death is never a verdict: every fatal signal Python
can catch ends the command line with 128 + n, SIGKILL too (through the parent
of sandbox/app/supervisor.py), and a run stopped while it is judged says
`interrupted` (a signal) or `killed` (SIGKILL) in its run.json, never
`completed` without verdicts; `just report` then exits non-zero."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from captured_results import MACHINE, build_results, fake_target
from replay_guest import ReplayGuest, captured

from sandbox.app import jobs, reliability_deaths, verbs
from sandbox.app.signals import FATAL_SIGNALS
from sandbox.base import evidence as files
from sandbox.base.errors import Interrupted
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest
from sandbox.report.evidence import default_reader, read_run
from sandbox.report.html import write_report
from sandbox.scenario import suite

ENV = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'pytest'}:{Path(__file__).parent}"}
BUSY_VERB = """\
import sys, time
from pathlib import Path
from sandbox.app import cli, verbs
def busy(args):
    Path(sys.argv[1]).write_text("busy")
    time.sleep(60)
    return 0
verbs.cmd_validate = busy  # the command line's own handlers and exit codes, a verb that waits
sys.exit(cli.main(["validate"]))
"""


def _wait_for(path: Path, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not path.exists():
        time.sleep(0.02)


def _child_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0])


CASES = [(signal.SIGKILL, "child"), *((s, to) for s in FATAL_SIGNALS for to in ("child", "parent"))]


@pytest.mark.parametrize("signum, to", CASES, ids=lambda c: c if isinstance(c, str) else signal.Signals(c).name)
def test_every_fatal_signal_exits_128_plus_n(tmp_path: Path, signum: int, to: str) -> None:
    """The command line under its parent, as `python3 -m sandbox` runs it:
    the signal to the Python doing the work, or to the parent (which forwards
    it); SIGKILL to the parent is the next test's."""
    ready = tmp_path / "busy"
    proc = subprocess.Popen([sys.executable, "-m", "sandbox.app.supervisor", "-c", BUSY_VERB, str(ready)],
                            env=ENV, stderr=subprocess.PIPE)
    try:
        _wait_for(ready)
        os.kill(_child_of(proc.pid) if to == "child" else proc.pid, signum)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, err.decode()
    assert b"Traceback" not in err, err.decode()


def test_a_killed_parent_stops_its_child(tmp_path: Path) -> None:
    """The child's lifeline watches its parent: SIGKILL to the parent, the child stops as for SIGTERM."""
    ready = tmp_path / "busy"
    proc = subprocess.Popen([sys.executable, "-m", "sandbox.app.supervisor", "-c", BUSY_VERB, str(ready)],
                            env=ENV, stderr=subprocess.DEVNULL)
    _wait_for(ready)
    child = _child_of(proc.pid)
    proc.kill()
    proc.wait()
    end = time.monotonic() + 30
    while time.monotonic() < end and Path(f"/proc/{child}").exists():
        time.sleep(0.05)  # reaped by init once it exits
    assert not Path(f"/proc/{child}").exists()


def test_python_m_sandbox_is_a_parent_and_its_child() -> None:
    """`python3 -m sandbox VERB` runs the verb in a child that knows its
    parent; SIGTERM to the parent reaches the child, and the parent exits 143."""
    proc = subprocess.Popen([sys.executable, "-m", "sandbox", "lint"], env=ENV, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end, child = time.monotonic() + 30, None
        while time.monotonic() < end and child is None:
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            environ = Path(f"/proc/{kids[0]}/environ").read_bytes().split(b"\0") if kids else []
            child = int(kids[0]) if f"Y2038_SUPERVISOR={proc.pid}".encode() in environ else None
            time.sleep(0.02)
        assert child is not None
        time.sleep(0.5)  # its handlers installed (the lint verb runs for seconds)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143
    finally:
        proc.kill()


def _judged_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_judge: object) -> Path:
    scenario = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
    transcript, console = captured("normal")
    evidence = tmp_path / "results" / "s" / scenario.slug / MACHINE

    def start(request: BootRequest) -> ReplayGuest:
        return ReplayGuest(request, transcript, console)
    monkeypatch.setattr(jobs, "evaluate", on_judge)
    with pytest.raises(Interrupted):
        jobs.run_and_judge(fake_target(), scenario, evidence, start)
    return evidence


def test_a_signal_while_judging_is_recorded_as_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def judge(*args: object, **kwargs: object) -> None:
        raise Interrupted(signal.SIGTERM)  # as the handler raises it, or StopScope.check in a worker
    evidence = _judged_run(tmp_path, monkeypatch, judge)
    info = json.loads((evidence / files.RUN).read_text())
    assert info["outcome"] == "interrupted" and "SIGTERM while judging" in info["detail"], info
    assert "state" not in info and not (evidence / files.VERDICTS).exists()
    assert "interrupted" in (evidence / files.REPORT).read_text()
    run = read_run(evidence, default_reader())
    assert not run.completed and run.ended_badly and run.state == "INTERRUPTED"
    session = evidence.parents[1]
    assert any("did not complete" in line for line in write_report(session).unsound)
    assert verbs.cmd_report(type("Args", (), {"folder": str(session)})()) == 3


KILLED_WHILE_JUDGING = """\
import os, signal, sys
from pathlib import Path
from captured_results import fake_target
from replay_guest import ReplayGuest, captured
from sandbox.app import jobs
from sandbox.base.paths import REPO
from sandbox.scenario import suite
scenario = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
transcript, console = captured("normal")
jobs.evaluate = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # the OOM killer, mid-judging
jobs.run_and_judge(fake_target(), scenario, Path(sys.argv[1]), lambda r: ReplayGuest(r, transcript, console))
"""


def test_a_run_killed_while_judging_reads_back_killed(tmp_path: Path) -> None:
    evidence = tmp_path / "results" / "s" / "clock-rollover" / MACHINE
    proc = subprocess.run([sys.executable, "-c", KILLED_WHILE_JUDGING, str(evidence)], env=ENV, check=False,
                          timeout=120, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    info = json.loads((evidence / files.RUN).read_text())
    assert info["outcome"] == "completed" and info["state"] == files.JUDGING  # as the process left it
    run = read_run(evidence, default_reader())
    assert run.outcome == files.KILLED and not run.completed and run.state == "KILLED"
    assert verbs.cmd_report(type("Args", (), {"folder": str(evidence.parents[1])})()) == 3


def test_a_judged_run_leaves_no_judging_state(tmp_path: Path) -> None:
    results, _ = build_results(tmp_path, failing=False)
    for run_json in results.rglob(files.RUN):
        assert "state" not in json.loads(run_json.read_text())


PYTEST_SESSION = """\
import time
from pathlib import Path
def test_waits(tmp_path):
    Path({ready!r}).write_text("busy")
    time.sleep(60)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGUSR1], ids=lambda s: signal.Signals(s).name)
def test_a_pytest_session_stopped_by_a_signal_exits_128_plus_n(tmp_path: Path, signum: int) -> None:
    ready = tmp_path / "busy"
    (tmp_path / "test_waits.py").write_text(PYTEST_SESSION.format(ready=str(ready)))
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "y2038_plugin", "-q", "-p", "no:cacheprovider",
                             "-o", "addopts=", str(tmp_path / "test_waits.py")], cwd=tmp_path,
                            env={**ENV, "Y2038_RESULTS": str(tmp_path / "results")},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for(ready)
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signum, out.decode()[-2000:]


def test_the_deaths_section_without_boot_names_every_signal(tmp_path: Path) -> None:
    section = reliability_deaths.measure(tmp_path, boot=False)
    assert section.tally.line() == "host writes: 0, tracebacks: 0, hangs: 0, false passes: 0"
    assert {row[0] for row in section.rows} == {s.name for s in FATAL_SIGNALS}
    assert all(row[1] == str(128 + signal.Signals[row[0]]) for row in section.rows)
