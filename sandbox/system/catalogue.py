"""The Debian systems `sandbox system` can build, as data (rootfs/systems.toml):
a name, a suite, an architecture and a package list. Pure: read and checked,
never built here (sandbox/system/image.py builds them)."""
from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from sandbox.base.fields import Where, names, read_text, require, string, strings, table
from sandbox.base.paths import ROOTFS
from sandbox.scenario.userlands import Userland

SYSTEMS_FILE = ROOTFS / "systems.toml"
SITE_FOLDER = ROOTFS / "system"  # our own files in every system: the periodic job, the TLS servers


@dataclass(frozen=True)
class SystemSpec:
    name: str
    suite: str
    arch: str  # a Debian architecture: armhf, i386
    packages: tuple[str, ...]
    about: str = ""

    def userland(self) -> Userland:
        """The same packages as a userland, to be fetched from its private apt state."""
        return Userland(f"system-{self.name}", self.suite, self.arch, self.packages, self.about)


@dataclass(frozen=True)
class Systems:
    drop: tuple[str, ...]
    by_name: Mapping[str, SystemSpec]


def parse_systems(text: str, file: str) -> Systems:
    where = Where(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    common = names(require(document, "packages", where), where.at("packages"), None, "package")
    found = {}
    for name, raw in table(require(document, "system", where), where.at("system")).items():
        at = where.at("system").at(name)
        spec = table(raw, at)
        extra = names(spec.get("packages", []), at.at("packages"), None, "package")
        found[name] = SystemSpec(name, string(require(spec, "suite", at), at.at("suite")),
                                 string(require(spec, "arch", at), at.at("arch")),
                                 common + tuple(p for p in extra if p not in common),
                                 str(spec.get("about", "")))
    return Systems(strings(document.get("drop", []), where.at("drop")), MappingProxyType(found))


def load_systems(path: Path = SYSTEMS_FILE) -> Systems:
    return parse_systems(read_text(path), str(path))
