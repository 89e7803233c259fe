"""Check a tree's kernel series patch by patch: each one checkpatch-clean and building.

In a git worktree of its own (cache/series-check/tree<suffix>, detached at
Debian's baseline of that tree; the shared tree is never checked out here),
for every patch in series order (kernel-series/series for 6.1,
kernel-series/6.12/series for 6.12):
  1. scripts/checkpatch.pl --strict on the patch file: 0 errors, warnings, checks;
  2. git am of that one patch;
  3. configure (tinyconfig + common + machine + the checked variant's
     fragments: the series' and event tracing, so that the trace events of
     0022 are compiled too; options a later patch adds are reported, not
     required) and an incremental make in one build folder per machine.
A patch that does not apply stops the check (the rest cannot apply either);
a failing checkpatch or build is reported and the check goes on.

With `--from <patch>` (a name or its number, "0028", "aids/0001"), the patches before it
are a base checked earlier: applied at once and built once, neither
checkpatch'd nor built one by one, and the report says so; the patches from
it on are checked as above. A series grown by one patch is then checked in
minutes instead of the 45 of a whole series.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.build import kbuild, kernel
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.build.kernel_source import GIT_ENV, BASELINE_TAG, Series, baseline_tree, debian_version, read_series
from sandbox.base.machines import Machine
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, Tree, tree as tree_named
from sandbox.base.progress import metered, say
from sandbox.base.runcmd import run

CHECKED_VARIANT = "checked"  # the series' fragments and trace.config: every line of the series compiles
_TOTAL = re.compile(r"^total: (\d+) errors, (\d+) warnings, (?:(\d+) checks, )?\d+ lines checked$", re.M)


@dataclass(frozen=True)
class PatchCheck:
    patch: str
    checkpatch: str  # "clean", or the "total: ..." line / why it did not run
    applied: bool
    built: bool | None  # None: not tried (did not apply)
    seconds: float
    missing: tuple[str, ...]  # requested options not (yet) in the tree at this patch
    log: Path
    checked: bool = True  # False: the base of --from, applied and built but not checked

    @property
    def ok(self) -> bool:
        return (self.checkpatch == "clean" or not self.checked) and self.applied and bool(self.built)


AIDS = "aids"
"""The folder of the sandbox-only aids, a series of their own listed after the series."""


def _number(patch: Path) -> str:
    """A format-patch file's number: "0028" of 0028-futex-....patch, "aids/0001"
    of an aid (the aids count from 0001 again)."""
    number = patch.name.split("-", 1)[0]
    return f"{AIDS}/{number}" if patch.parent.name == AIDS else number


def span(patches: tuple[Path, ...]) -> str:
    """Their numbers, first..last (pure)."""
    if not patches:
        return "none"
    first, last = _number(patches[0]), _number(patches[-1])
    return first if first == last else f"{first}..{last}"


def split_at(patches: tuple[Path, ...], start: str | None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The base (applied without a check) and the patches to check, for
    --from <name or number> (pure)."""
    if start is None:
        return (), patches
    for index, patch in enumerate(patches):
        if start in (patch.name, _number(patch)):
            return patches[:index], patches[index:]
    raise SandboxError(f"check-series --from {start}: no such patch in the series (known: {span(patches)})")


def checkpatch_verdict(output: str) -> str:
    """'clean' when checkpatch counted nothing, else its total line (pure)."""
    totals = list(_TOTAL.finditer(output))
    if not totals:
        return "checkpatch printed no total line"
    last = totals[-1]
    errors, warnings, checks = (int(n or 0) for n in last.groups())
    return "clean" if errors == warnings == checks == 0 else last.group(0)


def _git(tree: Path, *args: str) -> str:
    return run(["git", *args], cwd=tree, env={**os.environ, **GIT_ENV})


def _attempt(argv: list[str], cwd: Path) -> str:
    """Run a command whose failure is an answer, not an error; its output."""
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, check=False)
    return proc.stdout + proc.stderr


def worktree(base: Path, source: Tree) -> Path:
    """A clean worktree of the baseline, made once per tree and reset on every check."""
    tree = paths.cache_dir() / "series-check" / f"tree{source.build_suffix}"
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git(base, "worktree", "prune")
        _git(base, "worktree", "add", "-q", "--detach", str(tree), BASELINE_TAG)
    _attempt(["git", "am", "--abort"], tree)
    _git(tree, "checkout", "-q", "-f", "--detach", BASELINE_TAG)
    _git(tree, "clean", "-q", "-f", "-d", "-x")
    return tree


# The tree is Debian's tarball committed as one baseline, without the
# kernel's history, so checkpatch cannot find the commit a `Fixes:` tag
# names (kernel-series 0001's): that one check is left out, every other runs.
CHECKPATCH_IGNORED = ("UNKNOWN_COMMIT_ID",)


def _checkpatch(tree: Path, patch: Path) -> str:
    return checkpatch_verdict(_attempt(
        [str(tree / "scripts/checkpatch.pl"), "--strict", "--no-color",
         *(f"--ignore={name}" for name in CHECKPATCH_IGNORED), str(patch)], tree))


def _apply(tree: Path, patch: Path) -> bool:
    try:
        _git(tree, "am", "-q", str(patch))
        return True
    except SandboxError:
        _attempt(["git", "am", "--abort"], tree)
        return False


def _build(tree: Path, build: Path, machine: Machine, source: Tree,
           log: Path, label: str) -> tuple[bool, tuple[str, ...], float]:
    """Configure and make, with a line of kbuild's steps done of the count
    the last check's build of the same patch (its log) took; whether it
    built, the requested options missing, the seconds."""
    expected = kbuild.steps_in_log(log)
    log.write_text("")
    request = kernel.KernelRequest(machine, CHECKED_VARIANT, source.name)
    say(f"{label}: building (log: {log})")
    start = time.monotonic()
    with metered(label, expected) as tick:
        on_line = kbuild.step_counter(tick)
        try:
            missing = kernel.configure(tree, build, request, log, require=False, on_line=on_line)
            kernel.make_image(tree, build, machine, log, on_line=on_line)
        except SandboxError:
            return False, (), round(time.monotonic() - start, 1)
    return (True, tuple(f"{m.request.option}={m.request.value}" for m in missing),
            round(time.monotonic() - start, 1))


def _apply_base(tree: Path, build: Path, machine: Machine, source: Tree,
                base: tuple[Path, ...]) -> PatchCheck:
    """The patches before --from, applied at once and built once."""
    name = span(base)
    log = build / "base.log"
    if not all(_apply(tree, patch) for patch in base):
        say(f"the base {name} does not apply; stopping")
        return PatchCheck(name, "not checked", False, None, 0.0, (), log, checked=False)
    built, missing, seconds = _build(tree, build, machine, source, log,
                                     f"{source.name} {machine.name}: the base {name} (not checked)")
    return PatchCheck(name, "not checked", True, built, seconds, missing, log, checked=False)


def check_series(machine: Machine, series: Series | None = None,
                 tree_name: str = DEFAULT_TREE, start: str | None = None) -> list[PatchCheck]:
    """Every patch (from `start` on, on top of the ones before it): checkpatch,
    apply, build; in order, in the check's own worktree."""
    source = tree_named(tree_name)
    series = series or read_series(source.series_folder)
    prefix, checked = split_at(series.patches, start)
    base = baseline_tree(debian_version(source), source)
    build = paths.cache_dir() / "series-check" / f"build-{machine.name}{source.build_suffix}"
    build.mkdir(parents=True, exist_ok=True)
    results: list[PatchCheck] = []
    with kernel.locked("kernel-tree"):
        tree = worktree(base, source)
        if prefix:
            results.append(_apply_base(tree, build, machine, source, prefix))
            if not results[-1].ok:
                return results
        for patch in checked:
            log = build / f"{patch.stem[:40]}.log"
            verdict = _checkpatch(tree, patch)
            if not _apply(tree, patch):
                say(f"{patch.name}: does not apply; stopping")
                results.append(PatchCheck(patch.name, verdict, False, None, 0.0, (), log))
                break
            built, missing, seconds = _build(tree, build, machine, source, log,
                                             f"{source.name} {machine.name}: {_number(patch)}")
            results.append(PatchCheck(patch.name, verdict, True, built, seconds, missing, log))
    return results


def report(machine: Machine, results: list[PatchCheck], tree_name: str = DEFAULT_TREE) -> str:
    """One line per patch, then the options still missing after the last one."""
    lines = [f"series check of the {tree_name} tree on {machine.name}:"]
    for r in results:
        build = "not tried" if r.built is None else ("builds" if r.built else "BUILD FAILED")
        applied = "applies" if r.applied else "DOES NOT APPLY"
        cp = ("the base, not checked (--from)" if not r.checked
              else "checkpatch clean" if r.checkpatch == "clean" else f"checkpatch: {r.checkpatch}")
        lines.append(f"  {'ok ' if r.ok else 'BAD'} {r.patch}: {cp}; {applied}; {build} "
                     f"({r.seconds:.0f}s)" + ("" if r.built is not False else f" [log: {r.log}]"))
    if results and results[-1].missing:
        lines.append(f"  requested options missing after the last patch: {', '.join(results[-1].missing)}")
    return "\n".join(lines)
