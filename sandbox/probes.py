"""The probe catalogue: which probes exist, what they call, in which flavours.

Read from `rootfs/manifest.toml`, written by the rootfs side:

    [probe.clock]
    calls = ["time", "gettimeofday", "clock_gettime"]
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]

    [tool.settime]

Only `calls` and `flavours` of a probe are read here; other keys of the
manifest belong to the initramfs build and are left alone.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from sandbox.errors import InputError
from sandbox.machines import FLAVOURS
from sandbox.paths import ROOTFS

MANIFEST = ROOTFS / "manifest.toml"


@dataclass(frozen=True)
class ProbeInfo:
    name: str
    calls: tuple[str, ...]
    flavours: tuple[str, ...]


@dataclass(frozen=True)
class Catalogue:
    probes: tuple[ProbeInfo, ...]
    tools: tuple[str, ...] = ()

    def get(self, name: str) -> ProbeInfo | None:
        return next((probe for probe in self.probes if probe.name == name), None)

    def names(self) -> tuple[str, ...]:
        return tuple(probe.name for probe in self.probes)


def _string_list(value: object, file: str, key: str, allowed: tuple[str, ...] | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(file, key, "expected a non-empty list of strings")
    if len(set(value)) != len(value):
        raise InputError(file, key, "names a value twice")
    for item in value:
        if allowed is not None and item not in allowed:
            raise InputError(file, key, f"unknown flavour '{item}' (known: {', '.join(allowed)})")
    return tuple(value)


def _probe(name: str, table: object, file: str) -> ProbeInfo:
    key = f"probe.{name}"
    if not isinstance(table, dict):
        raise InputError(file, key, "expected a table")
    if "calls" not in table:
        raise InputError(file, f"{key}.calls", "missing (required)")
    calls = _string_list(table["calls"], file, f"{key}.calls", None)
    flavours = _string_list(table.get("flavours", list(FLAVOURS)), file, f"{key}.flavours", FLAVOURS)
    return ProbeInfo(name=name, calls=calls, flavours=flavours)


def _table(document: dict[str, object], name: str, file: str) -> dict[str, object]:
    table = document.get(name, {})
    if not isinstance(table, dict):
        raise InputError(file, name, "expected a table")
    return table


def parse_catalogue(text: str, file: str) -> Catalogue:
    """The catalogue described by manifest text; InputError names file and key."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(file, "toml", str(err)) from None
    probes = tuple(_probe(name, table, file) for name, table in _table(document, "probe", file).items())
    return Catalogue(probes=probes, tools=tuple(_table(document, "tool", file)))


def load_catalogue(path: Path | str = MANIFEST) -> Catalogue:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"cannot read: {err}") from None
    return parse_catalogue(text, str(path))
