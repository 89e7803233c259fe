"""The scenario files of the repository, loaded against the probe catalogue."""
from __future__ import annotations

from pathlib import Path

from sandbox.base.machines import MACHINES
from sandbox.base.paths import ROOTFS, SCENARIOS, SYSTEM_SCENARIOS
from sandbox.scenario.catalogue import Catalogue, load_catalogue
from sandbox.scenario.model import Scenario
from sandbox.base.fields import Where
from sandbox.scenario.parser import display_path, load_scenario, load_scenarios
from sandbox.scenario.userlands import load_userlands
from sandbox.base.trees import DEFAULT as DEFAULT_TREE
from sandbox.base.variants import VARIANTS


def machine_flavours() -> dict[str, tuple[str, ...]]:
    return {name: m.toolchain.flavours for name, m in MACHINES.items()}


def catalogue() -> Catalogue:
    return load_catalogue(ROOTFS / "manifest.toml")


def scenario_files(root: Path = SCENARIOS) -> list[Path]:
    """The probe scenarios: every file under root but the whole systems'
    (scenarios/system/, sandbox/system/scenario.py reads those)."""
    return sorted(p for p in root.rglob("*.toml") if SYSTEM_SCENARIOS not in p.parents)


def load(path: Path, probes: Catalogue | None = None, recording: bool = False) -> Scenario:
    """The one scenario of a file without [[variant]] (recording: one for `just record`)."""
    return load_scenario(path, probes or catalogue(), machine_flavours(), load_userlands(), recording)


def _variant_of(path: Path) -> tuple[Path, str | None]:
    """'dir/family.toml[ext4-128]' -> (dir/family.toml, 'ext4-128'); else (path, None)."""
    text = str(path)
    if text.endswith("]") and "[" in text:
        file, _, variant = text[:-1].rpartition("[")
        return Path(file), variant
    return path, None


def load_all(paths: list[Path], probes: Catalogue | None = None, recording: bool = False) -> list[Scenario]:
    """Every scenario of these files, each family expanded, in file order
    ('family.toml[row]' picks one row); the first bad file stops it, before
    anything boots. recording: files for `just record` (no expectations yet)."""
    probes = probes or catalogue()
    userlands = load_userlands()
    scenarios: list[Scenario] = []
    for path in paths:
        file, variant = _variant_of(path)
        found = load_scenarios(file, probes, machine_flavours(), userlands, recording)
        chosen = [s for s in found if variant is None or s.variant == variant]
        if not chosen:
            known = ", ".join(s.variant for s in found if s.variant) or "none: not a family"
            Where(display_path(file)).at("variant").fail(f"no variant '{variant}' (known: {known})")
        scenarios += chosen
    return scenarios


def kernels_needed(scenarios: list[Scenario], tree: str = DEFAULT_TREE) -> list[tuple[str, str]]:
    """(machine, variant) of every kernel these scenarios boot in a session
    of `tree`: machines in MACHINES order, the variants of each in VARIANTS
    order (series first); a scenario pinned to another tree, or a machine
    the tree is not built for, needs none."""
    wanted = {(m, s.kernel) for s in scenarios for m in s.machines if s.skip_on(tree, m) is None}
    return [(m, v) for m in MACHINES for v in VARIANTS if (m, v) in wanted]
