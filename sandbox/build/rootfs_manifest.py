"""What goes into the initramfs, as rootfs/manifest.toml says: folders,
device nodes, busybox and host programs per machine. The probes and tools
it lists are read by sandbox/scenario/catalogue.py; this module reads the
rest and checks that every probe and tool has a C source.
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.fields import Where, check_keys, is_int, read_text, require, string, strings, table
from sandbox.base.timefmt import parse_time
from sandbox.base.paths import ROOTFS
from sandbox.scenario.catalogue import MANIFEST, Catalogue, load_catalogue

DEVICE_KINDS = ("char", "block")


@dataclass(frozen=True)
class Device:
    path: str
    kind: str  # "char" or "block"
    major: int
    minor: int
    mode: int


@dataclass(frozen=True)
class Busybox:
    path: Path
    package: str


@dataclass(frozen=True)
class HostBinary:
    """A dynamically linked program taken from the host, at the same path in
    the guest, with the shared libraries ldd finds for it."""

    path: Path
    package: str


@dataclass(frozen=True)
class Stamp:
    """A directory the initramfs brings with a chosen mtime (its cpio header's)."""

    path: str
    mtime: int


@dataclass(frozen=True)
class Manifest:
    dirs: tuple[str, ...]
    stamped: tuple[Stamp, ...]
    devices: tuple[Device, ...]
    probes_dir: str
    tools_dir: str
    busybox: Mapping[str, Busybox]  # per machine
    host_binaries: Mapping[str, tuple[HostBinary, ...]]  # per machine
    catalogue: Catalogue  # the probes and tools


def _integer(raw: object, where: Where) -> int:
    if not is_int(raw):
        where.fail("expected an integer")
    return int(raw)


def _device(raw: object, where: Where) -> Device:
    spec = table(raw, where)
    kind = string(require(spec, "type", where), where.at("type"))
    if kind not in DEVICE_KINDS:
        where.at("type").fail(f"expected one of {', '.join(DEVICE_KINDS)}")
    return Device(string(require(spec, "path", where), where.at("path")), kind,
                  *(_integer(require(spec, key, where), where.at(key)) for key in ("major", "minor", "mode")))


def _stamp(raw: object, where: Where) -> Stamp:
    spec = table(raw, where)
    check_keys(spec, ("path", "mtime"), where)
    path = string(require(spec, "path", where), where.at("path"))
    text = string(require(spec, "mtime", where), where.at("mtime"))
    try:
        mtime = parse_time(text)
    except ValueError as err:
        where.at("mtime").fail(str(err))
    if not 0 <= mtime < 2**32:
        where.at("mtime").fail("a cpio (newc) mtime is 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z")
    return Stamp(path, mtime)


def _busybox(raw: object, where: Where) -> Busybox:
    spec = table(raw, where)
    return Busybox(Path(string(require(spec, "path", where), where.at("path"))),
                   string(require(spec, "package", where), where.at("package")))


def _host_binaries(raw: object, where: Where) -> tuple[HostBinary, ...]:
    """[host-binaries.<machine>]: absolute host path -> Debian package."""
    spec = table(raw, where)
    for binary, package in spec.items():
        if not binary.startswith("/") or not isinstance(package, str):
            where.at(binary).fail("expected \"/absolute/host/path\" = \"debian-package\"")
    return tuple(HostBinary(Path(binary), str(package)) for binary, package in spec.items())


def parse_manifest(text: str, file: str, catalogue: Catalogue) -> Manifest:
    where = Where(file)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    init = table(require(data, "initramfs", where), where.at("initramfs"))
    at = where.at("initramfs")
    devices = init.get("devices", [])
    if not isinstance(devices, list):
        at.at("devices").fail("expected a list of tables")
    stamped = init.get("stamped", [])
    if not isinstance(stamped, list):
        at.at("stamped").fail("expected a list of tables")
    for name in [*catalogue.names(), *catalogue.tools]:
        if not (ROOTFS / "probes" / f"{name}.c").is_file():
            where.at(name).fail(f"no source rootfs/probes/{name}.c")
    busybox = table(require(data, "busybox", where), where.at("busybox"))
    host = table(data.get("host-binaries", {}), where.at("host-binaries"))
    return Manifest(
        dirs=strings(require(init, "dirs", at), at.at("dirs")),
        stamped=tuple(_stamp(s, at.at("stamped").item(i)) for i, s in enumerate(stamped)),
        devices=tuple(_device(d, at.at("devices").item(i)) for i, d in enumerate(devices)),
        probes_dir=string(require(init, "probes_dir", at), at.at("probes_dir")),
        tools_dir=string(require(init, "tools_dir", at), at.at("tools_dir")),
        busybox={m: _busybox(spec, where.at("busybox").at(m)) for m, spec in busybox.items()},
        host_binaries={m: _host_binaries(spec, where.at("host-binaries").at(m)) for m, spec in host.items()},
        catalogue=catalogue,
    )


def load_manifest(path: Path = MANIFEST) -> Manifest:
    """Parse and check rootfs/manifest.toml; InputError names the bad key."""
    return parse_manifest(read_text(path), str(path), load_catalogue(path))
