"""The regression mutants, as data (kernel-series/regressions/mutants.toml):
each a patch that puts back one y2038 bug, the machine whose kernel carries
it, the kernel variant the patch goes on top of, and the scenarios that must
catch it. Pure: what is checked before any build. Building a mutant kernel
is sandbox/build/kernel.py build_mutant(); running the table is
sandbox/app/mutants.py.

One table for every kernel tree (sandbox/base/trees.py): a [[mutant]] says
what the mutant is on the default tree, 6.1; its optional `trees."6.12"`
table says what differs on another tree: the `machine` (6.12 builds no i386
kernel), or `absent`, why the bug cannot be re-created there (the code it
breaks is not in that tree). On a tree the patch is the tree's own version
(kernel-series/6.12/regressions/, the same file name, regenerated against
that tree's series) when there is one, else the 6.1 patch, which then
applies there as it is.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from sandbox.base.fields import Where, check_keys, names, read_text, require, string, table
from sandbox.base.machines import MACHINES
from sandbox.base.paths import SCENARIOS
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, TREES, not_built_for, tree as tree_named
from sandbox.base.variants import DEFAULT, VARIANTS


def regressions(tree: str = DEFAULT_TREE) -> Path:
    """A tree's folder of mutant patches: kernel-series/regressions for 6.1,
    kernel-series/6.12/regressions for 6.12."""
    return tree_named(tree).series_folder / "regressions"


REGRESSIONS = regressions()
MUTANTS_FILE = REGRESSIONS / "mutants.toml"
KEYS = ("name", "patch", "machine", "scenarios", "kernel", "trees")
TREE_KEYS = ("machine", "absent")
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Mutant:
    """One mutant as it is on one tree."""
    name: str
    patch: Path  # on this tree: the tree's own version, or the 6.1 one
    machine: str
    scenarios: tuple[str, ...]  # under scenarios/, "file.toml[variant]" for one family row
    kernel: str = DEFAULT  # the variant (sandbox/base/variants.py) the patch goes on top of
    tree: str = DEFAULT_TREE  # the kernel tree (sandbox/base/trees.py)
    absent: str = ""  # why it cannot be re-created on this tree; "" when it is on it
    regenerated: bool = False  # its patch is the tree's own version, not the 6.1 one

    @property
    def number(self) -> str:
        return self.patch.name.split("-", 1)[0]


Folders = Mapping[str, Path]
"""Each tree's folder of mutant patches, by tree name."""


def scenario_file(entry: str) -> Path:
    """'filetimes/filesystems.toml[xfs-bigtime]' -> scenarios/filetimes/filesystems.toml."""
    return SCENARIOS / entry.partition("[")[0]


def parse_mutants(text: str, file: str, tree: str = DEFAULT_TREE,
                  folders: Folders | None = None) -> tuple[Mutant, ...]:
    """The mutants as they are on `tree`, those absent from it included
    (`absent` says why). Every tree's entries are checked, whichever is asked."""
    tree_named(tree)  # an unknown tree: one line
    folders = folders or {name: regressions(name) for name in TREES}
    where = Where(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    check_keys(document, ("mutant",), where)
    rows = require(document, "mutant", where)
    if not isinstance(rows, list) or not rows:
        where.at("mutant").fail("expected a non-empty list of [[mutant]] tables")
    listed: list[Mutant] = []
    chosen: list[Mutant] = []
    for index, row in enumerate(rows):
        at = where.at("mutant").item(index)
        if not isinstance(row, dict):
            at.fail("expected a table")
        base = _mutant(row, at, folders[DEFAULT_TREE], listed)
        listed.append(base)
        entries = _tree_entries(row, at)
        on_trees = {name: _on_tree(base, entries.get(name, {}), at, name, folders[name]) for name in TREES}
        chosen.append(on_trees[tree])
    return tuple(chosen)


def _mutant(row: dict[str, object], at: Where, folder: Path, listed: list[Mutant]) -> Mutant:
    """A [[mutant]]'s own keys: the mutant on the default tree."""
    check_keys(row, KEYS, at)
    name = string(require(row, "name", at), at.at("name"))
    if not _NAME_RE.fullmatch(name):
        at.at("name").fail(f"'{name}' is not a name (lower-case letters, digits and '-')")
    if any(m.name == name for m in listed):
        at.at("name").fail(f"'{name}' is listed twice")
    patch_name = string(require(row, "patch", at), at.at("patch"))
    patch = folder / patch_name
    if "/" in patch_name or not patch.is_file():
        at.at("patch").fail(f"no patch file '{patch_name}' in {folder}")
    if any(m.patch == patch for m in listed):
        at.at("patch").fail(f"'{patch_name}' is listed twice")
    machine = _machine(require(row, "machine", at), at.at("machine"))
    kernel = _kernel_of(row, at)
    scenarios = names(require(row, "scenarios", at), at.at("scenarios"), None, "scenario")
    for number, entry in enumerate(scenarios):
        if not scenario_file(entry).is_file():
            at.at("scenarios").item(number).fail(f"no scenario file '{entry}' under {SCENARIOS}")
    return Mutant(name, patch, machine, scenarios, kernel)


def _machine(raw: object, at: Where) -> str:
    machine = string(raw, at)
    if machine not in MACHINES:
        at.fail(f"unknown machine '{machine}' (known: {', '.join(MACHINES)})")
    return machine


def _tree_entries(row: dict[str, object], at: Where) -> dict[str, dict[str, object]]:
    """The optional `trees` table: per tree other than the default, a table
    of `machine` or `absent` (alone)."""
    if "trees" not in row:
        return {}
    entries: dict[str, dict[str, object]] = {}
    for name, raw in table(row["trees"], at.at("trees")).items():
        here = at.at("trees").at(f'"{name}"')
        if name not in TREES:
            here.fail(f"unknown kernel tree '{name}' (known: {', '.join(TREES)})")
        if name == DEFAULT_TREE:
            here.fail(f"the [[mutant]]'s own keys are the {DEFAULT_TREE} tree's: give them there")
        entry = dict(table(raw, here))
        check_keys(entry, TREE_KEYS, here)
        if not entry:
            here.fail(f"expected {' or '.join(TREE_KEYS)}")
        if "absent" in entry:
            string(entry["absent"], here.at("absent"))
            if len(entry) > 1:
                here.fail("'absent' goes alone: a mutant not on the tree has no machine there")
        entries[name] = entry
    return entries


def _on_tree(base: Mutant, entry: dict[str, object], at: Where, tree: str, folder: Path) -> Mutant:
    """The mutant on `tree`: absent with its reason, or on a machine the tree
    is built for, with the tree's own patch if it has one."""
    own = folder / base.patch.name
    regenerated = tree != DEFAULT_TREE and own.is_file()
    here = at.at("trees").at(f'"{tree}"')
    if "absent" in entry:
        if regenerated:
            here.at("absent").fail(f"absent from {tree}, yet {own} is there: remove one")
        return replace(base, tree=tree, absent=str(entry["absent"]))
    machine_at = here.at("machine") if "machine" in entry else at.at("machine")
    machine = _machine(entry["machine"], machine_at) if "machine" in entry else base.machine
    why_not = not_built_for(tree, machine)
    if why_not:
        machine_at.fail(f"{why_not}: give trees.\"{tree}\".machine, or trees.\"{tree}\".absent")
    return replace(base, tree=tree, machine=machine, patch=own if regenerated else base.patch,
                   regenerated=regenerated)


def _kernel_of(row: dict[str, object], at: Where) -> str:
    """The optional `kernel`: a variant that applies the series, since
    build_mutant() puts the patch on the series branch."""
    if "kernel" not in row:
        return DEFAULT
    v = string(row["kernel"], at.at("kernel"))
    if v not in VARIANTS:
        at.at("kernel").fail(f"unknown kernel variant '{v}' (known: {', '.join(VARIANTS)})")
    if not VARIANTS[v].series:
        at.at("kernel").fail(f"'{v}' does not apply kernel-series/: a mutant patch applies on top of "
                             f"kernel-series/, so its kernel must apply the series")
    return v


def load_mutants(tree: str = DEFAULT_TREE, path: Path = MUTANTS_FILE) -> tuple[Mutant, ...]:
    """The mutants on `tree` (those absent from it included, with the reason)."""
    return parse_mutants(read_text(path), str(path), tree)
