"""Disk images on the host: made by mkfs into the cache, keyed by the mkfs
argv and the mkfs version, never mounted on the host. QEMU opens them with
snapshot=on, so what a guest writes never reaches the cached image. A tmpfs
needs no image: the guest mounts it from memory.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.paths import cache_dir
from sandbox.scenario.disks import Disk
from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence


@dataclass(frozen=True)
class AttachedDisk:
    """An image QEMU attaches; the guest finds it by its serial (the disk name)."""

    name: str
    image: Path


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
    Evidence(evidence).write_json(files.DISKS, record)
    return tuple(AttachedDisk(image.disk.name, image.path) for image in images)
