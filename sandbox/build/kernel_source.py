"""The kernel source tree: Debian's linux-source unpacked once into the cache,
committed as a git baseline, with kernel-series/ applied on a branch of its own.
Which Debian package, and which folder of patches, is the tree's
(sandbox/base/trees.py: 6.1 by default, or 6.12).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import paths
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.progress import say, step
from sandbox.base.runcmd import run
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, TREES, Tree

BASELINE_TAG = "debian-baseline"
GIT_ENV = {"GIT_AUTHOR_NAME": "y2038 sandbox", "GIT_AUTHOR_EMAIL": "sandbox@localhost",
           "GIT_COMMITTER_NAME": "y2038 sandbox", "GIT_COMMITTER_EMAIL": "sandbox@localhost",
           "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Series:
    """The patches of kernel-series/series, in order, with their contents."""

    patches: tuple[Path, ...]

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for patch in self.patches:
            h.update(patch.name.encode() + b"\0" + patch.read_bytes() + b"\0")
        return h.hexdigest()


def read_series(folder: Path | None = None) -> Series:
    """Parse the series file (default: the 6.1 tree's, kernel-series/series);
    every listed patch must exist."""
    folder = folder or TREES[DEFAULT_TREE].series_folder
    series_file = folder / "series"
    patches = []
    for number, raw in enumerate(series_file.read_text().splitlines(), 1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        patch = folder / name
        if not patch.is_file():
            raise InputError(str(series_file), f"line {number}", f"no patch file '{name}'")
        patches.append(patch)
    return Series(tuple(patches))


def debian_version(tree: Tree = TREES[DEFAULT_TREE]) -> str:
    """The installed linux-source package's exact Debian version."""
    if not tree.tarball.is_file():
        raise SandboxError(f"{tree.tarball} is missing: install {tree.package} (run 'just deps')")
    return run(["dpkg-query", "-W", "-f=${Version}", tree.package]).strip()


def _git(tree: Path, *args: str) -> str:
    return run(["git", *args], cwd=tree, env={**os.environ, **GIT_ENV})


def baseline_tree(version: str, source: Tree = TREES[DEFAULT_TREE]) -> Path:
    """Debian's tree (of the package of `source`) unpacked and committed;
    done once per Debian version."""
    tree = paths.cache_dir() / "src" / f"linux-{version}"
    if (tree / ".git" / "refs" / "tags" / BASELINE_TAG).exists():
        return tree
    parent = tree.parent
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix=".unpack-") as tmp:
        with step(f"unpacking {source.tarball.name} ({version}) into {parent}"):
            run(["tar", "-xf", str(source.tarball), "-C", tmp])
        unpacked = Path(tmp) / source.package
        with step("committing the pristine tree as the git baseline"):
            _git(unpacked, "init", "-q", "-b", "baseline")
            _git(unpacked, "add", "-A", "--force")  # Debian's .gitignore ignores all
            _git(unpacked, "commit", "-q", "-m",
                 f"Debian {source.package} {version}, pristine")
            _git(unpacked, "tag", BASELINE_TAG)
        if tree.exists():
            shutil.rmtree(tree)
        os.rename(unpacked, tree)
    return tree


def branch_with(tree: Path, branch: str, base: str, patches: tuple[Path, ...], onto: str) -> str:
    """`branch`: `base` with the patches applied by git am, made once and
    checked out. The patches go onto a scratch branch that takes the name
    only once every one applied, so neither a patch that does not apply nor
    a run killed halfway leaves a `branch` that a later run would reuse
    half-made."""
    if _git(tree, "branch", "--list", branch).strip():
        _git(tree, "checkout", "-q", branch)
        return branch
    if (tree / ".git" / "rebase-apply").exists():  # the git am of a killed run
        _git(tree, "am", "--abort")
    scratch = f"{branch}-incomplete"
    _git(tree, "checkout", "-q", "-B", scratch, base)
    for patch in patches:
        try:
            _git(tree, "am", "-q", str(patch))
        except SandboxError as err:
            _git(tree, "am", "--abort")
            _git(tree, "checkout", "-q", "--detach", base)
            _git(tree, "branch", "-D", scratch)
            raise SandboxError(f"{patch}: does not apply to {onto} ({err})") from None
    _git(tree, "branch", "-M", scratch, branch)
    say(f"applied {len(patches)} patch(es) on branch {branch}")
    return branch


def baseline_worktree(tree: Path) -> Path:
    """A second working tree of `tree`, fixed at the baseline, made once.

    A pristine kernel builds there, so the shared tree never leaves the
    series: a checkout rewrites every file that differs (9 patches touch
    headers nearly every object includes) with a new mtime, and the next
    series or mutant build of every machine would recompile all of it."""
    worktree = tree.with_name(tree.name + "-baseline")
    if not (worktree / ".git").exists():
        shutil.rmtree(worktree, ignore_errors=True)  # a half-made one
        _git(tree, "worktree", "prune")
        with step(f"making a worktree of the baseline in {worktree}"):
            _git(tree, "worktree", "add", "-q", "--detach", str(worktree), BASELINE_TAG)
    return worktree


def checkout(tree: Path, series: Series) -> tuple[Path, str]:
    """The tree to build in and its branch: `tree` with the series applied,
    or, for a series of no patches, the baseline's own worktree.

    Each distinct series gets a branch named after its digest, so switching
    between two series is a cheap checkout.
    """
    if not series.patches:
        return baseline_worktree(tree), BASELINE_TAG
    return tree, branch_with(tree, f"series-{series.digest[:12]}", BASELINE_TAG, series.patches, "Debian's tree")
