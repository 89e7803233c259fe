"""`just reliability`'s deaths section: a death is never a verdict.

A waiting scenario runs through `just run` (x86_64, booted); once the guest
has answered, a signal goes to the Python doing the work, to `just` (the
command on PATH), or to the parent of sandbox/app/supervisor.py; another
scenario is signalled while it is judged (its 25 `matches` backtrack a second
each: judging takes about 25 s). Each row: the exit code of `just run` as a
shell shows it (128 + n, never 0 or 1), run.json's state read back, `just
report`'s exit on the folder (non-zero: the run did not complete), QEMU left
2 s after the signal. Without `boot` the section has the signal table alone,
each signal's expected code.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.reliability_sections import Section, Tally
from sandbox.app.signals import FATAL_SIGNALS, STOP_SIGNALS
from sandbox.app.supervisor import exit_of
from sandbox.base import evidence as files
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.base.progress import say

JUDGING = """\
title = "judging that takes about 25 s, to be interrupted"
rtc = "2038-01-19T03:13:50Z"
machines = ["x86_64"]
timeout = 120
""" + "".join(f"""
[[step]]
phase = "zeros-{n}"
run = ["printf", "%060d", "0"]
userlands = ["debian12-amd64"]

[step.expect.debian12-amd64]
stdout = {{ matches = "^(0|00)+x" }}
""" for n in range(25))
"""Each `matches` backtracks on 60 zeros until its 1 s limit (sandbox/scenario/patterns.py)."""

VERDICT_CODES = (0, 1)
"""`just run`'s codes for "passed" and "an expectation failed": a death given one of them is a false pass."""
NOT_COMPLETED = (files.KILLED, "interrupted")


@dataclass(frozen=True)
class Death:
    target: str  # python, just, supervisor
    signal: str
    during: str  # run, judging
    exit_code: int | None  # of `just run`, as a shell shows it (128 + n for a signal)
    state: str  # run.json read back (sandbox/base/evidence.py state_of)
    report_exit: int | None  # `python3 -m sandbox report` on the session folder
    qemu_left: int  # 2 s after the signal
    acted_after: float | None  # seconds from the signal to `just run`'s end

    @property
    def expected(self) -> int:
        return 128 + signal.Signals[self.signal].value

    @property
    def false_pass(self) -> bool:
        return (self.exit_code in VERDICT_CODES or self.state not in NOT_COMPLETED
                or self.report_exit in (0, None))


WAITING = """\
title = "a guest that waits, to be killed"
rtc = "2038-01-19T03:13:50Z"
machines = ["x86_64"]
timeout = 60
warp = false

[[step]]
phase = "before"
probe = "clock"
flavours = ["time64"]

[step.expect.time64.clock_gettime]
errno = "none"

[[step]]
wait = 20
"""
"""The wait takes wall time (no time warp), for the signal to land in it."""


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
        except OSError:
            children = []
        found += children
        pending += children
    return found


def qemu_of(results: Path) -> list[int]:
    """The QEMU processes whose command line names this results folder."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
            and (argv := _cmdline(int(p.name))) and argv[0].startswith("qemu-system") and str(results) in " ".join(argv)]


def _wait_for(condition: Callable[[], object], seconds: float, step: float = 0.05) -> object:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not condition():
        time.sleep(step)
    return condition()


def _workers(root: int) -> list[int]:
    """The `sandbox run` Pythons below `root`: the parent first, the one doing the work last."""
    return [p for p in _descendants(root) if "sandbox" in _cmdline(p) and "run" in _cmdline(p)]


def _run_json(results: Path) -> dict[str, object]:
    runs = list(results.glob(f"*/*/*/{files.RUN}"))
    try:
        info = json.loads(runs[0].read_text()) if runs else {}
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}


def _answered(results: Path) -> Callable[[], bool]:
    def seen() -> bool:  # the probe's reply is in: the guest is in its wait
        return any("@@Y2038 END 1 " in log.read_text("utf-8", "replace")
                   for log in results.glob(f"*/*/*/{files.AGENT_LOG}"))
    return seen


def _judging(results: Path) -> Callable[[], bool]:
    return lambda: "outcome" in _run_json(results)  # the guest completed; verdicts not yet written


def death_trial(target: str, signum: int, folder: Path, during: str = "run") -> Death:
    """`just run` a scenario, signal `target` while the guest waits (during
    "run") or while the run is judged ("judging"), and read back what is left."""
    just = shutil.which("just")
    if just is None:
        raise SandboxError("`just` is not installed (npm install -g rust-just)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "s.toml").write_text(WAITING if during == "run" else JUDGING)
    results = folder / "results"
    proc = subprocess.Popen([just, "--justfile", str(paths.REPO / "justfile"), "--working-directory", str(folder),
                             "run", "s.toml"], env=dict(os.environ, Y2038_RESULTS=str(results)),
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = _answered(results) if during == "run" else _judging(results)
        if not _wait_for(ready, 180, 0.05):
            raise SandboxError(f"{target}/{signal.Signals(signum).name}: never reached {during} (see {results})")
        time.sleep(0.3 if during == "run" else 1.0)
        workers = _workers(proc.pid)
        pid = {"just": proc.pid, "python": workers[-1], "supervisor": workers[0]}[target]
        sent = time.monotonic()
        os.kill(pid, signum)
        _wait_for(lambda: not qemu_of(results), 2.0)
        left = len(qemu_of(results))
        try:
            code: int | None = exit_of(proc.wait(90))
            acted: float | None = time.monotonic() - sent
        except subprocess.TimeoutExpired:
            code, acted = None, None
        _wait_for(lambda: not any(p in _workers(proc.pid) for p in workers) and not qemu_of(results), 60)
        _wait_for(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    state = files.state_of(_run_json(results)) if _run_json(results) else ""
    sessions = [p for p in results.iterdir() if p.is_dir()] if results.is_dir() else []
    report = (subprocess.run([sys.executable, "-m", "sandbox", "report", str(sessions[0])],
                             env=dict(os.environ, PYTHONPATH=str(paths.REPO)), capture_output=True, timeout=120,
                             check=False).returncode if sessions else None)
    return Death(target, signal.Signals(signum).name, during, code, state, report, left, acted)


CASES: tuple[tuple[str, int, str], ...] = (
    *(("python", s, "run") for s in (signal.SIGKILL, *STOP_SIGNALS)),
    *(("just", s, "run") for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)),
    ("supervisor", signal.SIGKILL, "run"),
    ("python", signal.SIGTERM, "judging"),
    ("python", signal.SIGINT, "judging"),
    ("python", signal.SIGKILL, "judging"),
)
"""(target, signal, during) of every trial: each fatal signal to the Python
doing the work, SIGKILL/SIGTERM/SIGINT to `just`, SIGKILL to the parent, and
three signals while judging."""


def _row(d: Death) -> list[str]:
    acted = f"{d.acted_after:.1f} s" if d.acted_after is not None else "never"
    return [d.target, d.signal, d.during, str(d.exit_code), str(d.expected), d.state or "(none)",
            str(d.report_exit), str(d.qemu_left), acted]


def measure(folder: Path, boot: bool) -> Section:
    if not boot:
        rows = [[signal.Signals(s).name, str(128 + s), why] for s, why in FATAL_SIGNALS.items()]
        return Section("Deaths: the signals recorded as interrupted (no boot)",
                       ["signal", "exit code", "where it comes from"], rows)
    deaths = []
    for target, signum, during in CASES:
        say(f"deaths: {signal.Signals(signum).name} to {target} during {during} ...")
        deaths.append(death_trial(target, signum, folder / f"{target}-{signum}-{during}", during))
    tally = Tally(hangs=sum(d.exit_code is None or d.qemu_left > 0 for d in deaths),
                  false_passes=sum(d.false_pass for d in deaths))
    return Section("Deaths: a signal to `just run` is never a verdict",
                   ["target", "signal", "during", "`just run` exit", "expected", "run.json",
                    "`just report` exit", "QEMU left after 2 s", "`just run` ended after"],
                   [_row(d) for d in deaths], tally)
