"""Disks a scenario declares: the [[disk]] table, the host images, the QEMU
arguments and the guest's mount command.

    [[disk]]
    name = "ext4-128"    # mounted in the guest at /mnt/ext4-128; also the virtio serial
    fs = "ext4"          # a kind from FILESYSTEMS: tmpfs, ext4, xfs
    inode-size = 128     # ext4 only: mke2fs -I (default 256)
    # bigtime = false    # xfs only: mkfs.xfs -m bigtime=0|1 (default true)
    # size-mib = 32      # optional; each kind has a default and a minimum

What differs between filesystems is one table (FILESYSTEMS): the options a
kind takes, its mkfs argv, its size limits. Images are made on the host by
mkfs into the cache, keyed by the mkfs argv and the mkfs version, and are
never mounted on the host; QEMU opens them with snapshot=on, so what a guest
writes never reaches the cached image. A tmpfs needs no image: the guest
mounts it from memory. Disks are attached in the order declared and found in
the guest by their virtio serial (the disk's name), not by /dev/vdX order.

Parsing is pure; making images runs mkfs; qemu_disk_args and mount_shell are
pure.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from .errors import InputError, SandboxError
from .paths import cache_dir

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

BLOCK_DEVICE_MODELS: Mapping[str, str] = MappingProxyType({
    "x86_64": "virtio-blk-pci",
    "i386": "virtio-blk-pci",
    "armhf": "virtio-blk-device",  # -M virt: virtio-mmio, no PCI in the kernel
})
"""The QEMU device model of a virtio block device, per machine."""


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


def _type_name(raw: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a table"}
    return names.get(type(raw), type(raw).__name__)


def _fail(file: str, key: str, message: str) -> InputError:
    return InputError(file, key, message)


def _is_int(raw: object) -> bool:
    return isinstance(raw, int) and not isinstance(raw, bool)


def _name(raw: object, file: str, key: str) -> str:
    if not isinstance(raw, str):
        raise _fail(file, key, f"expected a string, got {_type_name(raw)}")
    if not NAME_RE.fullmatch(raw):
        raise _fail(file, key, f"'{raw}' is not a disk name (1 to 20 of a-z, 0-9, '-', "
                               "not starting with '-'; it is the virtio serial and /mnt/<name>)")
    return raw


def _kind(raw: object, file: str, key: str) -> FsKind:
    if not isinstance(raw, str):
        raise _fail(file, key, f"expected a string, got {_type_name(raw)}")
    if raw not in FILESYSTEMS:
        raise _fail(file, key, f"unknown filesystem '{raw}' (known: {', '.join(sorted(FILESYSTEMS))})")
    return FILESYSTEMS[raw]


def _size(raw: object, kind: FsKind, file: str, key: str) -> int:
    if not _is_int(raw):
        raise _fail(file, key, f"expected an integer number of MiB, got {_type_name(raw)}")
    if not kind.min_size_mib <= raw <= MAX_SIZE_MIB:  # type: ignore[operator]
        raise _fail(file, key, f"{raw} MiB is outside {kind.min_size_mib}..{MAX_SIZE_MIB} "
                               f"for {kind.name}")
    return int(raw)  # type: ignore[arg-type]


def _option_value(raw: object, option: Option, file: str, key: str) -> OptionValue:
    fits = isinstance(raw, bool) if option.kind is bool else _is_int(raw)
    if not fits:
        wanted = "a boolean" if option.kind is bool else "an integer"
        raise _fail(file, key, f"expected {wanted}, got {_type_name(raw)}")
    if option.choices and raw not in option.choices:
        raise _fail(file, key, f"{raw} is not one of {', '.join(map(str, option.choices))}")
    return raw  # type: ignore[return-value]


def _disk(raw: object, file: str, key: str) -> Disk:
    if not isinstance(raw, dict):
        raise _fail(file, key, f"expected a [[disk]] table, got {_type_name(raw)}")
    for required in ("name", "fs"):
        if required not in raw:
            raise _fail(file, f"{key}.{required}", "missing (required)")
    name = _name(raw["name"], file, f"{key}.name")
    kind = _kind(raw["fs"], file, f"{key}.fs")
    for item in raw:
        if item not in kind.keys:
            raise _fail(file, f"{key}.{item}",
                        f"unknown key '{item}' for a {kind.name} disk (known: {', '.join(kind.keys)})")
    size = _size(raw.get("size-mib", kind.size_mib), kind, file, f"{key}.size-mib")
    options = {o.key: _option_value(raw.get(o.key, o.default), o, file, f"{key}.{o.key}")
               for o in kind.options}
    return Disk(name, kind.name, size, MappingProxyType(options))


def parse_disks(raw: object, file: str, key: str = "disk") -> tuple[Disk, ...]:
    """The disks of a scenario's [[disk]] tables; InputError names file and key."""
    if not isinstance(raw, list):
        raise _fail(file, key, f"expected [[disk]] tables, got {_type_name(raw)}")
    disks = tuple(_disk(item, file, f"{key}[{index}]") for index, item in enumerate(raw))
    seen: dict[str, int] = {}
    for index, disk in enumerate(disks):
        if disk.name in seen:
            raise _fail(file, f"{key}[{index}].name",
                        f"disk '{disk.name}' already declared as {key}[{seen[disk.name]}]")
        seen[disk.name] = index
    return disks


# --------------------------------------------------------------------------
# QEMU and the guest (pure).


@dataclass(frozen=True)
class AttachedDisk:
    """An image QEMU attaches; the guest finds it by its serial (the disk name)."""

    name: str
    image: Path


def _qemu_value(text: str) -> str:
    """QEMU option values escape a comma by doubling it."""
    return text.replace(",", ",,")


def block_device_model(machine: str) -> str:
    try:
        return BLOCK_DEVICE_MODELS[machine]
    except KeyError:
        raise SandboxError(f"no virtio block device model known for machine '{machine}' "
                           f"(known: {', '.join(BLOCK_DEVICE_MODELS)}; see sandbox/disks.py)") from None


def qemu_disk_args(machine: str, disks: Sequence[AttachedDisk]) -> list[str]:
    """-drive/-device pairs, in order; snapshot=on keeps the guest's writes off the image."""
    if not disks:
        return []
    model = block_device_model(machine)
    args: list[str] = []
    for index, disk in enumerate(disks):
        drive = f"disk{index}"
        args += ["-drive", f"file={_qemu_value(str(disk.image))},if=none,format=raw,"
                           f"id={drive},snapshot=on",
                 "-device", f"{model},drive={drive},serial={disk.name}"]
    return args


def mount_shell(disk: Disk) -> str:
    """The guest (busybox sh) command that mounts a disk at its mount point."""
    point, fstype = shlex.quote(disk.mount_point), disk.kind.mount_type
    if not disk.has_image:
        return (f"mkdir -p {point} && "
                f"mount -t {fstype} -o size={disk.size_mib}m {shlex.quote(disk.name)} {point}")
    serial = shlex.quote(disk.name)
    return (
        'dev=; for d in /sys/block/*; do '
        f'if [ "$(cat "$d/serial" 2>/dev/null)" = {serial} ]; then dev=/dev/${{d##*/}}; fi; done; '
        f'if [ -z "$dev" ]; then echo "no block device with serial "{serial} >&2; exit 1; fi; '
        f'mkdir -p {point} && mount -t {fstype} "$dev" {point}'
    )


# --------------------------------------------------------------------------
# Images on the host: made by mkfs, cached by argv and mkfs version.


@dataclass(frozen=True)
class Image:
    disk: Disk
    path: Path
    argv: tuple[str, ...]  # as run, image path last
    mkfs_output: str
    reused: bool


SBIN_DIRS: tuple[str, ...] = ("/usr/sbin", "/sbin")
"""Where Debian puts mke2fs and mkfs.xfs: not on a normal user's PATH."""


def _tool(disk: Disk) -> str:
    """The full path of the disk's mkfs, from PATH or the sbin folders."""
    name = disk.mkfs_argv()[0]
    found = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN_DIRS))
    if found is None:
        raise SandboxError(f"disk '{disk.name}': {name} not found; "
                           f"install the Debian package {disk.kind.package}")
    return found


def _mkfs_version(tool: str) -> str:
    proc = subprocess.run([tool, "-V"], capture_output=True, text=True, check=False)
    return (proc.stdout + proc.stderr).strip()


def image_key(argv: Sequence[str], size_mib: int, version: str) -> str:
    """The cache key of an image: the mkfs argv, the size and the mkfs version."""
    text = json.dumps({"argv": list(argv), "size_mib": size_mib, "version": version})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _format(disk: Disk, tool: str, folder: Path) -> None:
    """mkfs into a sparse file in a fresh folder, then rename that folder to `folder`."""
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        image = tmp / "disk.img"
        with image.open("wb") as out:
            out.truncate(disk.size_mib * 1024 * 1024)
        argv = (*disk.mkfs_argv(), str(image))
        proc = subprocess.run((tool, *argv[1:]), capture_output=True, text=True, check=False)
        output = (proc.stdout + proc.stderr).strip()
        if proc.returncode != 0:
            raise SandboxError(f"disk '{disk.name}': {' '.join(argv[:-1])} failed "
                               f"(exit {proc.returncode}): {output[-300:]}")
        (tmp / "mkfs.json").write_text(json.dumps(
            {"argv": [*argv[:-1], "<image>"], "output": output}, indent=2) + "\n")
        os.rename(tmp, folder)  # the folder appears whole or not at all
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def make_image(disk: Disk) -> Image:
    """The formatted image of a disk, from the cache when made before."""
    tool = _tool(disk)
    version = _mkfs_version(tool)
    key = image_key(disk.mkfs_argv(), disk.size_mib, version)
    root = cache_dir() / "disks"
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{disk.fs}-{key}"
    with (root / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        reused = folder.is_dir()
        if not reused:
            _format(disk, tool, folder)
    made = json.loads((folder / "mkfs.json").read_text())
    argv = tuple(made["argv"][:-1]) + (str(folder / "disk.img"),)
    return Image(disk, folder / "disk.img", argv, made["output"], reused)


def prepare_images(disks: Sequence[Disk], evidence: Path) -> tuple[AttachedDisk, ...]:
    """Make (or reuse) every disk image; record them in evidence/disks.json."""
    images = [make_image(disk) for disk in disks if disk.has_image]
    record = [{"name": disk.name, "fs": disk.fs, "mount_point": disk.mount_point,
               "size_mib": disk.size_mib, "options": dict(disk.options)} for disk in disks]
    made = {image.disk.name: image for image in images}
    for entry in record:
        image = made.get(str(entry["name"]))
        if image is not None:
            entry.update(image=str(image.path), mkfs=list(image.argv),
                         mkfs_output=image.mkfs_output, reused=image.reused)
    evidence.mkdir(parents=True, exist_ok=True)
    (evidence / "disks.json").write_text(json.dumps(record, indent=2) + "\n")
    return tuple(AttachedDisk(image.disk.name, image.path) for image in images)
