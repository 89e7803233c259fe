"""The regression mutants, as data (kernel-series/regressions/mutants.toml):
each a patch that puts back one y2038 bug, the machine whose kernel carries
it, the kernel variant the patch goes on top of, and the scenarios that must
catch it. Pure: what is checked before any build. Building a mutant kernel
is sandbox/build/kernel.py build_mutant(); running the table is
sandbox/app/mutants.py.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.fields import Where, check_keys, names, read_text, require, string
from sandbox.base.machines import MACHINES
from sandbox.base.paths import KERNEL_SERIES, SCENARIOS
from sandbox.base.variants import DEFAULT, VARIANTS

REGRESSIONS = KERNEL_SERIES / "regressions"
MUTANTS_FILE = REGRESSIONS / "mutants.toml"
KEYS = ("name", "patch", "machine", "scenarios", "kernel")
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Mutant:
    name: str
    patch: Path
    machine: str
    scenarios: tuple[str, ...]  # under scenarios/, "file.toml[variant]" for one family row
    kernel: str = DEFAULT  # the variant (sandbox/base/variants.py) the patch goes on top of

    @property
    def number(self) -> str:
        return self.patch.name.split("-", 1)[0]


def scenario_file(entry: str) -> Path:
    """'filetimes/filesystems.toml[xfs-bigtime]' -> scenarios/filetimes/filesystems.toml."""
    return SCENARIOS / entry.partition("[")[0]


def parse_mutants(text: str, file: str, folder: Path = REGRESSIONS) -> tuple[Mutant, ...]:
    where = Where(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    check_keys(document, ("mutant",), where)
    rows = require(document, "mutant", where)
    if not isinstance(rows, list) or not rows:
        where.at("mutant").fail("expected a non-empty list of [[mutant]] tables")
    mutants: list[Mutant] = []
    for index, row in enumerate(rows):
        at = where.at("mutant").item(index)
        if not isinstance(row, dict):
            at.fail("expected a table")
        check_keys(row, KEYS, at)
        name = string(require(row, "name", at), at.at("name"))
        if not _NAME_RE.fullmatch(name):
            at.at("name").fail(f"'{name}' is not a name (lower-case letters, digits and '-')")
        if any(m.name == name for m in mutants):
            at.at("name").fail(f"'{name}' is listed twice")
        patch_name = string(require(row, "patch", at), at.at("patch"))
        patch = folder / patch_name
        if "/" in patch_name or not patch.is_file():
            at.at("patch").fail(f"no patch file '{patch_name}' in {folder}")
        if any(m.patch == patch for m in mutants):
            at.at("patch").fail(f"'{patch_name}' is listed twice")
        machine = string(require(row, "machine", at), at.at("machine"))
        if machine not in MACHINES:
            at.at("machine").fail(f"unknown machine '{machine}' (known: {', '.join(MACHINES)})")
        kernel = _kernel_of(row, at)
        scenarios = names(require(row, "scenarios", at), at.at("scenarios"), None, "scenario")
        for number, entry in enumerate(scenarios):
            if not scenario_file(entry).is_file():
                at.at("scenarios").item(number).fail(f"no scenario file '{entry}' under {SCENARIOS}")
        mutants.append(Mutant(name, patch, machine, scenarios, kernel))
    return tuple(mutants)


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


def load_mutants(path: Path = MUTANTS_FILE) -> tuple[Mutant, ...]:
    return parse_mutants(read_text(path), str(path), path.parent)
