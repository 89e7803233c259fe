"""The Debian userlands a scenario may run real programs from, as data
(rootfs/userlands.toml): a name, a suite, an architecture and a package
list. Pure: what the parser checks before boot. Building them is
sandbox/build/userland.py.
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from sandbox.base.fields import Where, names, read_text, require, string, strings, table
from sandbox.base.paths import ROOTFS

USERLANDS_FILE = ROOTFS / "userlands.toml"
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Userland:
    name: str
    suite: str  # a Debian suite: bookworm, trixie, ...
    arch: str  # a Debian architecture: amd64, i386, armhf
    packages: tuple[str, ...]
    about: str = ""

    @property
    def guest_root(self) -> str:
        """Where its files are in the guest."""
        return f"/userlands/{self.name}"


@dataclass(frozen=True)
class Userlands:
    mirror: str
    keyring: str
    drop: tuple[str, ...]  # paths left out of the guest
    by_name: Mapping[str, Userland]

    def get(self, name: str) -> Userland | None:
        return self.by_name.get(name)


NO_USERLANDS = Userlands("", "", (), MappingProxyType({}))
"""What a parser knows without rootfs/userlands.toml: none."""


def parse_userlands(text: str, file: str) -> Userlands:
    where = Where(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    packages = names(require(document, "packages", where), where.at("packages"), None, "package")
    found = {}
    for name, raw in table(document.get("userland", {}), where.at("userland")).items():
        at = where.at("userland").at(name)
        if not _NAME_RE.fullmatch(name):
            at.fail(f"'{name}' is not a userland name (a-z, 0-9, '-')")
        spec = table(raw, at)
        extra = names(spec["packages"], at.at("packages"), None, "package") if "packages" in spec else ()
        found[name] = Userland(name, string(require(spec, "suite", at), at.at("suite")),
                               string(require(spec, "arch", at), at.at("arch")),
                               packages + tuple(p for p in extra if p not in packages),
                               str(spec.get("about", "")))
    return Userlands(string(require(document, "mirror", where), where.at("mirror")),
                     string(require(document, "keyring", where), where.at("keyring")),
                     strings(document.get("drop", []), where.at("drop")),
                     MappingProxyType(found))


def load_userlands(path: Path = USERLANDS_FILE) -> Userlands:
    return parse_userlands(read_text(path), str(path))
