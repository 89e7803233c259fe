"""Disks a scenario declares: the [[disk]] table and the filesystem kinds.

    [[disk]]
    name = "ext4-128"    # mounted in the guest at /mnt/ext4-128; also the virtio serial
    fs = "ext4"          # a kind from FILESYSTEMS: tmpfs, ext4, xfs
    inode-size = 128     # ext4 only: mke2fs -I (default 256)
    # bigtime = false    # xfs only: mkfs.xfs -m bigtime=0|1 (default true)
    # size-mib = 32      # optional; each kind has a default and a minimum

What differs between filesystems is one table (FILESYSTEMS): the options a
kind takes, its mkfs argv, its size limits. Parsing is pure. The images are
made by sandbox/build/disk_images.py, attached by sandbox/guest/qemu.py and
mounted by the commands of sandbox/run/plan.py.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sandbox.base.fields import Where, is_int, type_name

OptionValue = int | bool
MOUNT_ROOT = "/mnt"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,19}")
"""A disk name: the mount point under /mnt and the virtio serial (20 bytes at most)."""
MAX_SIZE_MIB = 4096
COMMON_KEYS = ("name", "fs", "size-mib")


# --------------------------------------------------------------------------
# The table of filesystem kinds.


@dataclass(frozen=True)
class Option:
    """A kind-specific key of a [[disk]] table."""

    key: str
    kind: type  # int or bool
    default: OptionValue
    choices: tuple[OptionValue, ...] = ()


@dataclass(frozen=True)
class FsKind:
    """One filesystem kind.

    mkfs:    the host argv that formats an image, without the image path
             (appended last); None: no image (tmpfs lives in guest memory)
    package: the Debian package that provides mkfs[0]
    """

    name: str
    mount_type: str
    options: tuple[Option, ...]
    size_mib: int
    min_size_mib: int
    mkfs: Callable[[Mapping[str, OptionValue]], tuple[str, ...]] | None = None
    package: str = ""

    def option(self, key: str) -> Option | None:
        return next((o for o in self.options if o.key == key), None)

    @property
    def keys(self) -> tuple[str, ...]:
        return COMMON_KEYS + tuple(o.key for o in self.options)


def _mke2fs_ext4(options: Mapping[str, OptionValue]) -> tuple[str, ...]:
    # -I 128 leaves no room for the extra timestamp bits (ext4_inode
    # i_*time_extra): mke2fs warns, the kernel clamps at 2038.
    return ("mke2fs", "-q", "-F", "-t", "ext4", "-I", str(options["inode-size"]))


def _mkfs_xfs(options: Mapping[str, OptionValue]) -> tuple[str, ...]:
    # Always explicit: mkfs.xfs turned bigtime on by default only in xfsprogs 5.15.
    return ("mkfs.xfs", "-q", "-f", "-m", f"bigtime={int(bool(options['bigtime']))}")


FILESYSTEMS: Mapping[str, FsKind] = MappingProxyType({
    kind.name: kind
    for kind in (
        FsKind("tmpfs", "tmpfs", (), size_mib=16, min_size_mib=1),
        FsKind("ext4", "ext4", (Option("inode-size", int, 256, (128, 256, 512, 1024)),),
               size_mib=32, min_size_mib=8, mkfs=_mke2fs_ext4, package="e2fsprogs"),
        # mkfs.xfs (xfsprogs >= 5.19) refuses filesystems of 300 MB or less;
        # the image is sparse, about 65 MB of it is written.
        FsKind("xfs", "xfs", (Option("bigtime", bool, True),),
               size_mib=320, min_size_mib=301, mkfs=_mkfs_xfs, package="xfsprogs"),
    )
})

# --------------------------------------------------------------------------
# The model and the parser.


@dataclass(frozen=True)
class Disk:
    name: str
    fs: str
    size_mib: int
    options: Mapping[str, OptionValue] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def kind(self) -> FsKind:
        return FILESYSTEMS[self.fs]

    @property
    def mount_point(self) -> str:
        return f"{MOUNT_ROOT}/{self.name}"

    @property
    def has_image(self) -> bool:
        return self.kind.mkfs is not None

    def mkfs_argv(self) -> tuple[str, ...]:
        """The mkfs argv without the image path; () for a kind with no image."""
        return self.kind.mkfs(self.options) if self.kind.mkfs else ()



def _name(raw: object, where: Where) -> str:
    if not isinstance(raw, str):
        where.fail(f"expected a string, got {type_name(raw)}")
    if not NAME_RE.fullmatch(raw):
        where.fail(f"'{raw}' is not a disk name (1 to 20 of a-z, 0-9, '-', "
                   "not starting with '-'; it is the virtio serial and /mnt/<name>)")
    return raw


def _kind(raw: object, where: Where) -> FsKind:
    if not isinstance(raw, str):
        where.fail(f"expected a string, got {type_name(raw)}")
    if raw not in FILESYSTEMS:
        where.fail(f"unknown filesystem '{raw}' (known: {', '.join(sorted(FILESYSTEMS))})")
    return FILESYSTEMS[raw]


def _size(raw: object, kind: FsKind, where: Where) -> int:
    if not is_int(raw):
        where.fail(f"expected an integer number of MiB, got {type_name(raw)}")
    if not kind.min_size_mib <= raw <= MAX_SIZE_MIB:
        where.fail(f"{raw} MiB is outside {kind.min_size_mib}..{MAX_SIZE_MIB} for {kind.name}")
    return int(raw)


def _option_value(raw: object, option: Option, where: Where) -> OptionValue:
    fits = isinstance(raw, bool) if option.kind is bool else is_int(raw)
    if not fits:
        wanted = "a boolean" if option.kind is bool else "an integer"
        where.fail(f"expected {wanted}, got {type_name(raw)}")
    if option.choices and raw not in option.choices:
        where.fail(f"{raw} is not one of {', '.join(map(str, option.choices))}")
    return raw  # type: ignore[return-value]  # checked above: a bool or an int, as the option's kind


def _disk(raw: object, where: Where) -> Disk:
    if not isinstance(raw, dict):
        where.fail(f"expected a [[disk]] table, got {type_name(raw)}")
    for required in ("name", "fs"):
        if required not in raw:
            where.at(required).fail("missing (required)")
    name = _name(raw["name"], where.at("name"))
    kind = _kind(raw["fs"], where.at("fs"))
    for item in raw:
        if item not in kind.keys:
            where.at(item).fail(f"unknown key '{item}' for a {kind.name} disk "
                                f"(known: {', '.join(kind.keys)})")
    size = _size(raw.get("size-mib", kind.size_mib), kind, where.at("size-mib"))
    options = {o.key: _option_value(raw.get(o.key, o.default), o, where.at(o.key))
               for o in kind.options}
    return Disk(name, kind.name, size, MappingProxyType(options))


def parse_disks(raw: object, where: Where) -> tuple[Disk, ...]:
    """The disks of a scenario's [[disk]] tables; InputError names file and key."""
    if not isinstance(raw, list):
        where.fail(f"expected [[disk]] tables, got {type_name(raw)}")
    disks = tuple(_disk(item, where.item(index)) for index, item in enumerate(raw))
    seen: dict[str, int] = {}
    for index, disk in enumerate(disks):
        if disk.name in seen:
            where.item(index).at("name").fail(
                f"disk '{disk.name}' already declared as {where.key}[{seen[disk.name]}]")
        seen[disk.name] = index
    return disks
