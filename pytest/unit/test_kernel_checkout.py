"""Checking out the kernel tree: a pristine build never moves the shared tree
off the series, so no series build folder sees its headers as new."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

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
