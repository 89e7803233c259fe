"""Under CI (`Y2038_FAIL_ON_SKIP=1`, set by .ci/run) a skipped test fails the
session: CI installs every tool, so a skip there hides a missing install
step. Checked with a nested session under pytest-xdist, where the skips are
reported by the workers and counted by the controller."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.base.paths import REPO
from y2038_plugin import FAIL_ON_SKIP

TESTS = f'''
import os
import pytest

def test_runs():
    assert "{FAIL_ON_SKIP}" not in os.environ  # taken out before the workers start

def test_skips():
    pytest.skip("no such tool here")
'''


@pytest.mark.parametrize("flag, code", [("1", 1), ("", 0)])
def test_a_skip_fails_the_session_only_when_asked(tmp_path: Path, flag: str, code: int) -> None:
    (tmp_path / "test_tools.py").write_text(TESTS)
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}", Y2038_RESULTS=str(tmp_path / "results"))
    env.pop("Y2038_SESSION_RESULTS", None)
    env[FAIL_ON_SKIP] = flag
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "y2038_plugin", "-p", "no:cacheprovider",
                           "-n", "2", "-q", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 passed, 1 skipped" in done.stdout, done.stdout[-2000:]
    assert done.returncode == code, done.stdout[-2000:]
    said = f"{FAIL_ON_SKIP}=1: 1 skipped test(s) fail the session (a tool missing here?), " \
           f"first test_tools.py::test_skips"
    assert (said in done.stdout) is bool(flag)
