"""The justfile passes names to Python, never to the host shell, and `exec`s
Python so that signals reach it; `just --list` is one line per recipe in
groups, the user's first; recipes are quiet; every verb takes --machine.

Runs the real `just` (/usr/bin/just, or the npm package's) with hostile
names in a temporary working directory: nothing may be created there, and a
name with a space stays one path. Every recipe stops before anything boots
(the file does not exist, or it is only validated).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox.app.cli import main, parser
from sandbox.app.signals import STOP_SIGNALS
from sandbox.base.machines import MACHINES
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
                                  *(["record", "--machine", name, "a.toml"] for name in HOSTILE[:3]),
                                  ["demo", HOSTILE[0]], ["build", "--machine", HOSTILE[0]],
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
    result = just(tmp_path, "record", "--machine", "x86_64; touch pwned", "a.toml")
    assert result.returncode == 2 and list(tmp_path.iterdir()) == []
    assert "invalid choice: 'x86_64; touch pwned'" in result.stderr


def test_every_interpolation_is_quoted_or_a_fixed_variable() -> None:
    for found in re.findall(r"\{\{(.*?)\}\}", JUSTFILE.read_text()):
        assert found.strip() in ("sandbox", "pytest", "python") or found.strip().startswith("quote("), found


def dump() -> dict[str, Any]:
    """The justfile as just itself reads it."""
    assert JUST is not None
    proc = subprocess.run([JUST, "--justfile", str(JUSTFILE), "--dump", "--dump-format", "json"],
                          capture_output=True, text=True, timeout=60, check=True)
    return dict(json.loads(proc.stdout))


def public_recipes() -> list[dict[str, Any]]:
    """The recipes `just --list` shows, in the justfile's order."""
    recipes = dump()["recipes"].values()
    return sorted((r for r in recipes if not r["private"]), key=lambda r: JUSTFILE.read_text().index(f"\n{r['name']}"))


def group_of(recipe: dict[str, Any]) -> str | None:
    return next((a["group"] for a in recipe["attributes"] if isinstance(a, dict) and "group" in a), None)


@needs_just
def test_every_recipe_line_execs_python_and_installs_first() -> None:
    """`exec` so that signals reach Python; through `python3 -m sandbox`,
    which installs what is missing first, or after the `deps` recipe."""
    recipes = public_recipes()
    assert {r["name"] for r in recipes} >= {"demo", "deps", "build", "test", "unit", "run", "record", "validate"}
    for recipe in recipes:
        (line,) = recipe["body"]  # one line each
        assert line[0].startswith("exec "), (recipe["name"], line)
        through_sandbox = [["variable", "sandbox"]] in line  # {{sandbox}}: python3 -m sandbox
        assert through_sandbox or "deps" in [d["recipe"] for d in recipe["dependencies"]], recipe["name"]


@needs_just
def test_every_recipe_has_a_one_line_summary_and_a_group_the_users_first() -> None:
    recipes = public_recipes()
    groups = list(dict.fromkeys(group_of(r) for r in recipes))
    assert groups == sorted(groups, key=str) and None not in groups  # `just --list` sorts the groups by name
    assert groups[0] == "use" and recipes[0]["name"] == "demo"
    users = {r["name"] for r in recipes if group_of(r) == "use"}
    assert {"demo", "test", "run", "rehearse", "record", "validate", "report"} <= users
    assert not {"bench", "mutants", "check-series", "kernels", "unit"} & users
    for recipe in recipes:
        doc = recipe["doc"] or ""
        assert doc[:1].isupper() and doc.endswith((".", ")")), (recipe["name"], doc)  # a sentence, not its end


@needs_just
def test_just_list_shows_the_users_group_first() -> None:
    assert JUST is not None
    listing = subprocess.run([JUST, "--justfile", str(JUSTFILE), "--list"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    assert listing.index("[use]") < listing.index("[work on the sandbox]")
    assert re.search(r"\n    demo \*args +# Build what is missing", listing), listing


@needs_just
def test_the_recipes_are_quiet_and_an_error_stays_one_line(tmp_path: Path) -> None:
    settings = dump()["settings"]
    assert settings["quiet"] and settings["no_exit_message"] and settings["positional_arguments"]
    result = just(tmp_path, "validate", "nosuch.toml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: nosuch.toml: file: cannot read: No such file or directory"]


@needs_just
def test_run_without_a_file_prints_its_usage(tmp_path: Path) -> None:
    result = just(tmp_path, "run")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("usage: sandbox run ") and "required: FILE" in result.stderr


@needs_just
def test_record_takes_the_machine_as_every_verb_does(tmp_path: Path) -> None:
    shutil.copy(REPO / "scenarios" / "clock" / "rollover.toml", tmp_path / "a.toml")
    result = just(tmp_path, "record", "--machine", "i386", "nosuch.toml")
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: nosuch.toml: file: cannot read: No such file or directory"]


def test_every_verb_names_the_machine_machine() -> None:
    """One way for all: an option whose value is a machine is --machine."""
    (subcommands,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    with_machine = []
    for name, verb in subcommands.choices.items():
        for action in verb._actions:
            if action.choices is not None and set(action.choices) == set(MACHINES):
                assert "--machine" in action.option_strings, (name, action.option_strings)
                with_machine.append(name)
    assert {"demo", "run", "record", "build", "bench", "rehearse", "check-series"} <= set(with_machine)


@pytest.mark.parametrize("args, error", [
    (["demo", "--machine", "i386", "armhf"], "error: demo: two machines, --machine i386 and armhf: give one"),
    (["demo", "sparc"], "error: no machine 'sparc' (machines: armhf, i386, x86_64)"),
])
def test_demo_takes_a_machine_name_only_where_it_is_unambiguous(args: list[str], error: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`just demo armhf` is `just demo --machine armhf`; both at once must agree."""
    saved = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    try:
        assert main(args) == 2
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert capsys.readouterr().err.splitlines() == [error]


def test_readme_and_ci_install_the_same_pinned_just() -> None:
    """rust-just 1.41 and later refuse Debian 12's Node.js 18 (a fresh
    machine's `just demo` died with a SyntaxError): the README's set-up and
    .ci/run install one pinned version."""
    repo = Path(__file__).resolve().parents[2]
    pins = {name: re.findall(r"npm install -g (rust-just\S*)", (repo / name).read_text())
            for name in ("README.md", ".ci/run")}
    assert pins["README.md"] == pins[".ci/run"] == ["rust-just@1.40.0"], pins
