"""The system image a rehearsal boots: one of ours by name (rootfs/systems.toml),
or the user's own root filesystem. Checked before anything boots, each
refusal one line naming the image and the cause (exit 2)."""
from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.build.userland import image_command, resolve_in
from sandbox.images import unpack_image

ELF_MACHINES = {40: "armhf", 3: "i386", 62: "amd64"}  # e_machine -> the Debian architecture
INIT = "/sbin/init"


@dataclass(frozen=True)
class UserImage:
    source: Path  # what the user named
    root: Path  # the tree, unpacked when the source is not a directory
    arch: str
    init: str  # what /sbin/init is, links followed ("/lib/systemd/systemd", "/bin/busybox")


def elf_arch(path: Path) -> str:
    """The Debian architecture of an ELF file ("" for another file)."""
    with path.open("rb") as stream:
        head = stream.read(20)
    if head[:4] != b"\x7fELF":
        return ""
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    return ELF_MACHINES.get(machine, f"e_machine {machine}")


def check_root(source: Path, root: Path) -> UserImage:
    """A root filesystem has an executable /sbin/init whose ELF machine one of
    our machines boots."""
    init = resolve_in(root, INIT)
    if init is None or not init.is_file():
        raise SandboxError(f"{source}: not a root filesystem (no {INIT})")
    arch = elf_arch(init)
    if not arch:
        raise SandboxError(f"{source}: {INIT} is not an ELF program")
    if arch not in ELF_MACHINES.values():
        raise SandboxError(f"{source}: {INIT} is for {arch}, which no machine here boots "
                           f"(known: {', '.join(ELF_MACHINES.values())})")
    return UserImage(source, root, arch, "/" + init.relative_to(root).as_posix())


def unpack(source: Path, dest: Path) -> Path:
    """The user's image as a tree: a directory as it is; a tarball, a cpio
    archive, an ext2/3/4 or a squashfs image unpacked by sandbox/images
    (without root or mounting)."""
    if not source.exists():
        raise SandboxError(f"{source}: no such file or directory")
    return unpack_image(source, dest)


def checksum(source: Path) -> str:
    """sha256 of a file, or of a tree's names, links and contents."""
    digest = hashlib.sha256()
    if source.is_file():
        with source.open("rb") as stream:
            for chunk in iter(lambda: stream.read(2**20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    for path in sorted(source.rglob("*")):
        digest.update(str(path.relative_to(source)).encode() + b"\0")
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def image_of(tree: UserImage, out: Path) -> Path:
    """The tree as an ext4 image (256-byte inodes), what the boot carries."""
    size = int(subprocess.run(["du", "-sm", "--apparent-size", str(tree.root)], capture_output=True,
                              text=True, check=True).stdout.split()[0]) * 5 // 4 + 32
    done = subprocess.run(image_command(tree.root, out, size, "user-system"), capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SandboxError(f"{tree.source}: mke2fs: {(done.stderr or done.stdout).strip()}")
    return out
