"""The justfile passes names to Python, never to the host shell (issue 14,
item 6), and `exec`s Python so that signals reach it (item 5).

Runs the real `just` (/usr/bin/just, or the npm package's) with hostile
names in a temporary working directory: nothing may be created there, and a
name with a space stays one path. Every recipe stops before anything boots
(the file does not exist, or it is only validated).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox.base.paths import REPO

JUSTFILE = REPO / "justfile"
JUST = shutil.which("just")
needs_just = pytest.mark.skipif(JUST is None, reason="`just` is not installed (npm install -g rust-just)")
HOSTILE = ["x$(touch pwned).toml", "x`touch pwned`.toml", "x;touch pwned;.toml", "x' ; touch pwned ; '.toml",
           'x" ; touch pwned ; ".toml', "x && touch pwned", "$(touch pwned)"]


def just(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert JUST is not None
    return subprocess.run([JUST, "--justfile", str(JUSTFILE), "--working-directory", str(workdir), *args],
                          capture_output=True, text=True, timeout=120, check=False)


@needs_just
@pytest.mark.parametrize("args", [["validate", *HOSTILE], ["run", *HOSTILE], ["report", *HOSTILE],
                                  *(["record", name] for name in HOSTILE[:3]),
                                  *(["record", "a.toml", name] for name in HOSTILE[:3]),
                                  ["demo", HOSTILE[0]], ["build", HOSTILE[0]],
                                  ["rehearse", "--static", *HOSTILE]],
                         ids=lambda args: f"{args[0]}-{len(args)}")
def test_a_hostile_name_never_reaches_the_shell(tmp_path: Path, args: list[str]) -> None:
    """Every name at once: a shell would expand them all before Python runs."""
    result = just(tmp_path, *args)
    assert result.returncode != 0
    assert list(tmp_path.iterdir()) == [], result.stderr  # no pwned


@needs_just
def test_a_name_with_a_space_stays_one_path(tmp_path: Path) -> None:
    shutil.copy(REPO / "scenarios" / "clock" / "rollover.toml", tmp_path / "a b.toml")
    result = just(tmp_path, "validate", "a b.toml")
    assert result.returncode == 0, result.stderr
    assert "1 scenario file(s) valid" in result.stderr


@needs_just
def test_a_machine_name_is_quoted_too(tmp_path: Path) -> None:
    result = just(tmp_path, "record", "a.toml", "x86_64; touch pwned")
    assert result.returncode == 2 and list(tmp_path.iterdir()) == []
    assert "invalid choice: 'x86_64; touch pwned'" in result.stderr


def recipe_lines() -> list[tuple[str, str]]:
    """(recipe, body line) of every recipe that is not a shebang script."""
    lines: list[tuple[str, str]] = []
    recipe, shebang = "", False
    for line in JUSTFILE.read_text().splitlines():
        if re.match(r"[a-z]", line) and ":=" not in line:  # a recipe's header
            recipe, shebang = line.split()[0].rstrip(":"), False
        elif line.startswith("    ") and recipe:
            shebang = shebang or line.strip().startswith("#!")
            if not shebang:
                lines.append((recipe, line.strip()))
    return lines


def test_every_interpolation_is_quoted_or_a_fixed_variable() -> None:
    for found in re.findall(r"\{\{(.*?)\}\}", JUSTFILE.read_text()):
        assert found.strip() in ("sandbox", "pytest", "python") or found.strip().startswith("quote("), found


def test_every_recipe_line_execs_python() -> None:
    lines = recipe_lines()
    assert {recipe for recipe, _ in lines} >= {"demo", "deps", "build", "test", "unit", "run", "record", "validate"}
    for recipe, line in lines:
        assert line.startswith("exec "), (recipe, line)
