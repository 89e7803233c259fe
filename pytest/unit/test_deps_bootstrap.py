"""`sandbox deps` runs on a fresh machine, before the python3-* packages it
installs are there: the path from `python3 -m sandbox deps` to
sandbox/build/deps.py imports only the standard library and sandbox itself."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Runs `python3 -m sandbox deps <argv>` in a Python that refuses every import
# outside the standard library and the sandbox package, as a fresh machine
# without python3-pyelftools would.
FRESH_MACHINE = r"""
import importlib.abc, runpy, sys

class OnlyStdlib(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top == "sandbox":
            return None
        raise ModuleNotFoundError(f"No module named {name!r} (not on a fresh machine)")

sys.meta_path.insert(0, OnlyStdlib())
sys.argv = ["sandbox", *sys.argv[1:]]
runpy.run_module("sandbox", run_name="__main__")
"""


def _fresh_machine(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", FRESH_MACHINE, *argv], cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=False, timeout=60)


def test_deps_is_reached_without_third_party_modules() -> None:
    # An argument makes deps refuse before it touches dpkg or apt: the answer
    # shows the verb was reached, and no import failed on the way.
    proc = _fresh_machine("deps", "bogus")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "error: sandbox deps takes no arguments, got bogus"


def test_other_verbs_need_the_packages_deps_installs() -> None:
    # The guard above is real: the full command line does import pyelftools.
    proc = _fresh_machine("--help")
    assert proc.returncode != 0
    assert "No module named 'elftools'" in proc.stderr
