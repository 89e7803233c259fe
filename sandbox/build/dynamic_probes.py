"""The probes built dynamically, to run inside a Debian userland against its
own glibc (and under LD_PRELOAD, which a static binary ignores: libfaketime).

    build_probes(machine, out, linkage, probes)   make -C rootfs with the
                                                  machine's compiler, static
                                                  (as the initramfs has them)
                                                  or dynamic
    build_userland_probes(userland) -> UserlandProbes(cpio, key, flavours)

The userland's Debian architecture (sandbox/base/machines.py, DEBIAN_ARCHS)
says which flavours its ABI is (amd64: native64; i386 and armhf: the three
32-bit ones) and which machine's compiler builds them. The binaries are
built once per architecture and rootfs/ contents (cache/dynamic-probes/),
and packed per userland as a newc archive of
/userlands/<name>/probes/<flavour>/<probe>, appended to the initramfs after
the userland's own archive.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.machines import DEBIAN_ARCHS, Machine
from sandbox.base.paths import ROOTFS, cache_dir
from sandbox.build import cpio
from sandbox.build.cpio import Entry
from sandbox.build.deps import cflags32
from sandbox.build.initramfs import rootfs_files
from sandbox.build.rootfs_manifest import load_manifest
from sandbox.scenario.userlands import Userland

# rootfs/Makefile's BASE_CFLAGS with and without -static -s
LINKAGE_CFLAGS = {
    "static": "-O2 -Wall -Wextra -Werror -std=gnu11 -static -s -Iprobes",
    "dynamic": "-O2 -Wall -Wextra -Werror -std=gnu11 -Iprobes",
}
RECIPE = "1"  # bump when the way the archive is made changes


def build_probes(machine: Machine, out: Path, linkage: str, probes: tuple[str, ...],
                 flavours: tuple[str, ...] | None = None) -> Path:
    """make -C rootfs OUT=out ...: out/<flavour>/<probe> for each flavour
    (default: the machine's)."""
    args = ["make", "--no-print-directory", "-C", str(ROOTFS), f"-j{min(os.cpu_count() or 1, 2)}",
            f"OUT={out}", f"CC={machine.cc}", f"CFLAGS32={cflags32(machine)}",
            f"FLAVOURS={' '.join(flavours or machine.flavours)}", f"TOOLS_FLAVOUR={machine.tools_flavour}",
            f"PROBES={' '.join(probes)}", "TOOLS=", f"BASE_CFLAGS={LINKAGE_CFLAGS[linkage]}"]
    result = subprocess.run(args, capture_output=True, text=True, check=False, env={**os.environ, "LC_ALL": "C"})
    if result.returncode != 0:
        last = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
        raise SandboxError(f"building the {machine.name} probes ({linkage}) failed: {last[0]}")
    return out


@dataclass(frozen=True)
class UserlandProbes:
    userland: str
    key: str
    cpio: Path  # /userlands/<name>/probes/<flavour>/<probe>, a newc archive
    flavours: tuple[str, ...]


def _key(arch: str) -> str:
    h = hashlib.sha256(f"{RECIPE}\0{arch}\0{DEBIAN_ARCHS[arch]!r}\0".encode())
    for path in rootfs_files():
        h.update(f"{path.relative_to(ROOTFS).as_posix()}\0".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def _entries(built: Path, userland: Userland, flavours: tuple[str, ...]) -> list[Entry]:
    catalogue = load_manifest().catalogue
    root = f"{userland.guest_root.lstrip('/')}/probes"
    return cpio.with_parents(
        Entry.file(f"{root}/{flavour}/{probe.name}", (built / flavour / probe.name).read_bytes(), 0o755)
        for probe in catalogue.probes for flavour in flavours if flavour in probe.flavours)


def build_userland_probes(userland: Userland) -> UserlandProbes:
    """The probes of the userland's architecture, dynamic, from the cache or built first."""
    arch = DEBIAN_ARCHS.get(userland.arch)
    if arch is None:
        raise SandboxError(f"userland {userland.name}: no dynamic probes for Debian architecture "
                           f"{userland.arch} (known: {', '.join(DEBIAN_ARCHS)})")
    key = _key(arch.name)
    folder = cache_dir() / "dynamic-probes" / f"{arch.name}-{key}"
    target = folder / f"{userland.name}.cpio"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "bin").is_dir():
            tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".bin-"))
            try:
                probes = tuple(load_manifest().catalogue.names())
                build_probes(arch.builder, tmp, "dynamic", probes, arch.flavours)
                os.rename(tmp, folder / "bin")
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        if not target.is_file():
            partial = target.with_suffix(f".{os.getpid()}.tmp")
            with partial.open("wb") as out:
                cpio.write_newc(_entries(folder / "bin", userland, arch.flavours), out)
            os.replace(partial, target)
    return UserlandProbes(userland.name, f"{arch.name}-{key}", target, arch.flavours)
