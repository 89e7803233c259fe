"""The scenario files of the repository, loaded against the probe catalogue."""
from __future__ import annotations

from pathlib import Path

from .machines import MACHINES
from .paths import ROOTFS, SCENARIOS
from .probes import Catalogue, load_catalogue
from .scenario import Scenario, load_scenario


def machine_flavours() -> dict[str, tuple[str, ...]]:
    return {name: m.flavours for name, m in MACHINES.items()}


def catalogue() -> Catalogue:
    return load_catalogue(ROOTFS / "manifest.toml")


def scenario_files(root: Path = SCENARIOS) -> list[Path]:
    return sorted(root.rglob("*.toml"))


def load(path: Path, probes: Catalogue | None = None) -> Scenario:
    return load_scenario(path, probes or catalogue(), machine_flavours())
