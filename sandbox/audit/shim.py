"""The EOVERFLOW shim (rootfs/shim/time32-refusals.c), built for a 32-bit
machine with its compiler against the 32-bit time_t ABI, cached by its
source and compiler.

    build_shim(machine) -> Path | None     None: a 64-bit machine, whose
                                           programs cannot get EOVERFLOW
                                           from a 64-bit time_t
"""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.machines import Machine
from sandbox.base.paths import ROOTFS, cache_dir
from sandbox.build.deps import cflags32

SOURCE = ROOTFS / "shim" / "time32-refusals.c"
CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-std=gnu11", "-shared", "-fPIC")


def shim_wanted(machine: Machine) -> bool:
    """A 32-bit kernel's machine runs 32-bit programs only (no native64 flavour)."""
    return "native64" not in machine.toolchain.flavours


def shim_command(machine: Machine, out: Path) -> list[str]:
    return [machine.toolchain.cc, *shlex.split(cflags32(machine)), *CFLAGS, "-o", str(out), str(SOURCE)]


def build_shim(machine: Machine) -> Path | None:
    if not shim_wanted(machine):
        return None
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(shim_command(machine, Path("x"))).encode()).hexdigest()[:16]
    out = cache_dir() / "shim" / f"{machine.name}-{key}" / "time32-refusals.so"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    result = subprocess.run(shim_command(machine, tmp), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        last = result.stderr.strip().splitlines()[-1:] or [f"exit {result.returncode}"]
        raise SandboxError(f"building the {machine.name} EOVERFLOW shim failed: {last[0]}")
    os.replace(tmp, out)
    return out
