"""Every verb runs on a fresh machine, before the python3-* packages that
`sandbox deps` installs are there: the path from `python3 -m sandbox VERB` to
the install (sandbox/build/deps.py) imports only the standard library and
sandbox itself, for `deps` and for every other verb (sandbox/__main__.py)."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.app.cli import parser

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
import os
os.environ["Y2038_SUPERVISOR"] = str(os.getppid())  # as sandbox/app/supervisor.py's child: the verb runs here
if sys.argv[1] == "--all-missing":  # every package missing, as a user, not root: deps stops where it would install
    import os
    from sandbox.build import deps
    deps.missing = lambda packages: list(packages)
    os.geteuid = lambda: 1000
    del sys.argv[1]
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


def verbs() -> list[str]:
    """Every verb of the command line, read from its parser."""
    (subcommands,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(subcommands.choices)


def test_the_verbs_are_read_from_the_parser() -> None:
    assert {"demo", "run", "rehearse", "record", "validate", "bench", "across", "reliability"} <= set(verbs())


@pytest.mark.parametrize("verb", verbs())
def test_every_verb_reaches_the_install_without_third_party_modules(verb: str) -> None:
    """On a fresh machine every verb's first step is the install of what is
    missing: run as a user (not root) with every package missing, each verb
    stops there with deps' one-line error naming the command to run, and no
    import failed on the way (at a386157 `demo` died on elftools first)."""
    proc = _fresh_machine("--all-missing", verb)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "No module named" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: missing Debian packages or architectures (run as root, or: sudo sh -c '")
    assert "python3-pyelftools" in line


def test_other_verbs_need_the_packages_deps_installs() -> None:
    # The guard above is real: past the install, the full command line does import
    # the packages deps installs (python3-regex's regex or python3-pyelftools' elftools).
    proc = _fresh_machine("--help")
    assert proc.returncode != 0
    assert "No module named 'elftools'" in proc.stderr or "No module named 'regex'" in proc.stderr
