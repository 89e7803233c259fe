"""The sandbox stops when the `just` above it is killed: a process
named just starts a Python that watches it (sandbox/app/lifeline.py); the
just is SIGKILLed; the Python gets SIGTERM, as from a signal to `just`."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from sandbox.app import lifeline
from sandbox.base.paths import REPO

WATCHER = """\
import signal, sys, time
from pathlib import Path
from sandbox.app import lifeline
out = Path(sys.argv[1])
signal.signal(signal.SIGTERM, lambda *_: (out.write_text("SIGTERM"), sys.exit(0)))
ancestors = lifeline.just_ancestors()
out.with_suffix(".watching").write_text(str(len(ancestors)))
lifeline.watch(ancestors, poll=0.05)
time.sleep(60)
out.write_text("never stopped")
"""
JUST = """\
import subprocess, sys, time
subprocess.Popen([sys.argv[3], "-c", sys.argv[1], sys.argv[2]])  # named just, it cannot find itself
time.sleep(60)
"""


def _wait_for(path: Path, seconds: float = 30.0) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not path.exists():
        time.sleep(0.05)
    return path.read_text() if path.exists() else ""


def test_python_under_a_killed_just_gets_sigterm(tmp_path: Path) -> None:
    out = tmp_path / "watcher.txt"
    just = subprocess.Popen(["just", "-c", JUST, WATCHER, str(out), sys.executable], executable=sys.executable,
                            env={"PYTHONPATH": str(REPO)})
    try:
        assert _wait_for(out.with_suffix(".watching")) == "1"  # it found the just above it
        just.send_signal(signal.SIGKILL)
        assert _wait_for(out) == "SIGTERM"
    finally:
        just.kill()
        just.wait()


def test_nothing_is_watched_without_a_just_above() -> None:
    found = subprocess.run([sys.executable, "-c", "from sandbox.app import lifeline; "
                            "print(len(lifeline.just_ancestors()))"], env={"PYTHONPATH": str(REPO)},
                           capture_output=True, text=True, check=True).stdout
    assert found == "0\n"  # its parent is this Python
    assert lifeline.watch(()) is None
