"""Checking out the kernel tree: a pristine build never moves the shared tree
off the series, so no series build folder sees its headers as new."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.build import kernel_source
from sandbox.build.kernel_source import BASELINE_TAG, GIT_ENV, Series, checkout


def git(tree: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=tree, env=env, check=True,
                          capture_output=True, text=True).stdout


def baseline(tmp_path: Path) -> Path:
    """A tree like the cache's: one commit, tagged as the baseline."""
    tree = tmp_path / "linux"
    (tree / "include").mkdir(parents=True)
    (tree / "include" / "time32.h").write_text("int old;\n")
    git(tree, "init", "-q", "-b", "baseline")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "pristine")
    git(tree, "tag", BASELINE_TAG)
    return tree


def one_patch(tree: Path, folder: Path) -> Series:
    """A patch of the header, made on a scratch branch and dropped again."""
    git(tree, "checkout", "-q", "-b", "scratch")
    (tree / "include" / "time32.h").write_text("int old;\nint counted;\n")
    git(tree, "commit", "-q", "-am", "count")
    folder.mkdir()
    git(tree, "format-patch", "-q", "-o", str(folder), "-1")
    git(tree, "checkout", "-q", "--detach", BASELINE_TAG)
    git(tree, "branch", "-q", "-D", "scratch")
    return Series(tuple(sorted(folder.glob("*.patch"))))


def test_pristine_builds_in_a_worktree_and_leaves_the_series_alone(tmp_path: Path) -> None:
    tree = baseline(tmp_path)
    series = one_patch(tree, tmp_path / "patches")
    built_in, branch = checkout(tree, series)
    header = tree / "include" / "time32.h"
    assert (built_in, header.read_text()) == (tree, "int old;\nint counted;\n")
    os.utime(header, (1_000_000_000, 1_000_000_000))  # as old as a finished build's objects

    pristine, tag = checkout(tree, Series(()))
    assert (pristine, tag) == (tree.with_name("linux-baseline"), BASELINE_TAG)
    assert (pristine / "include" / "time32.h").read_text() == "int old;\n"
    assert header.read_text() == "int old;\nint counted;\n"
    assert header.stat().st_mtime == 1_000_000_000  # the series objects stay up to date
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == branch

    assert checkout(tree, series) == (tree, branch)  # and back: nothing to switch
    assert header.stat().st_mtime == 1_000_000_000
    assert checkout(tree, Series(()))[0] == pristine  # the worktree is made once



def test_a_run_killed_while_applying_the_series_leaves_no_branch_to_reuse(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed `just kernels` once left the series branch with 4 of 29
    patches, and the next run built that tree: the branch takes its name
    only once every patch applied."""
    tree = baseline(tmp_path)
    git(tree, "checkout", "-q", "-b", "scratch")
    for n in (1, 2):
        (tree / "include" / f"time32_{n}.h").write_text(f"int part{n};\n")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", f"part {n}")
    folder = tmp_path / "patches"
    git(tree, "format-patch", "-q", "-o", str(folder), "-2")
    git(tree, "checkout", "-q", "--detach", BASELINE_TAG)
    git(tree, "branch", "-q", "-D", "scratch")
    series = Series(tuple(sorted(folder.glob("*.patch"))))

    real_git = kernel_source._git
    applied: list[str] = []

    def killed_at_the_second_patch(where: Path, *args: str) -> str:
        if args[:1] == ("am",) and args[1:2] == ("-q",):
            if applied:
                raise KeyboardInterrupt  # SIGINT from the user
            applied.append(args[-1])
        return real_git(where, *args)

    monkeypatch.setattr(kernel_source, "_git", killed_at_the_second_patch)
    with pytest.raises(KeyboardInterrupt):
        checkout(tree, series)
    monkeypatch.setattr(kernel_source, "_git", real_git)

    built_in, branch = checkout(tree, series)
    assert git(tree, "log", "--format=%s", f"{BASELINE_TAG}..{branch}").splitlines() == ["part 2", "part 1"]
    assert (tree / "include" / "time32_2.h").read_text() == "int part2;\n"
