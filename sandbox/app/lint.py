"""`just lint`: pyflakes, then mypy (with mypy.ini) over sandbox/ and pytest/,
from Debian's packages (pyflakes3, mypy). `just test` runs it first, and so
does .ci/run through it.

The tests are checked without mypy's None-narrowing and argument-type errors:
they read Optional results straight (`result.verdicts`), where a None fails
the test at once, and pass test data as plain dicts.
"""
from __future__ import annotations

import subprocess
import sys

from sandbox.base.paths import REPO

TEST_RELAXED = ("union-attr", "index", "arg-type")
"""mypy's error codes the tests are not held to (see above)."""

CHECKS: tuple[tuple[str, ...], ...] = (
    ("pyflakes3", "sandbox", "pytest"),
    (sys.executable, "-m", "mypy", "sandbox"),
    (sys.executable, "-m", "mypy", *(f"--disable-error-code={code}" for code in TEST_RELAXED), "pytest"),
)
"""Each linter's command line, run from the repository."""


def lint() -> int:
    """Run every check, each printing its own findings; 0 when all are clean,
    else the first failing check's exit code."""
    failed = 0
    for argv in CHECKS:
        code = subprocess.run(argv, cwd=REPO, check=False).returncode
        failed = failed or code
    return failed
