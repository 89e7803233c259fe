"""The scenario files of the repository, loaded against the probe catalogue."""
from __future__ import annotations

from pathlib import Path

from .machines import MACHINES
from .paths import ROOTFS, SCENARIOS
from .probes import Catalogue, load_catalogue
from .scenario import Scenario, load_scenario
from .variants import VARIANTS


def machine_flavours() -> dict[str, tuple[str, ...]]:
    return {name: m.flavours for name, m in MACHINES.items()}


def catalogue() -> Catalogue:
    return load_catalogue(ROOTFS / "manifest.toml")


def scenario_files(root: Path = SCENARIOS) -> list[Path]:
    return sorted(root.rglob("*.toml"))


def load(path: Path, probes: Catalogue | None = None) -> Scenario:
    return load_scenario(path, probes or catalogue(), machine_flavours())


def kernels_needed(scenarios: list[Scenario]) -> list[tuple[str, str]]:
    """(machine, variant) of every kernel these scenarios boot: machines in
    MACHINES order, the variants of each in VARIANTS order (series first)."""
    wanted = {(m, s.kernel) for s in scenarios for m in s.machines}
    return [(m, v) for m in MACHINES for v in VARIANTS if (m, v) in wanted]
