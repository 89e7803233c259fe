"""Choose the accelerator: KVM only after a short boot handshake succeeded.

/dev/kvm can exist while KVM guests hang before the kernel starts, so its
presence proves nothing. The answer is remembered per host (kernel release
and QEMU version) so later boots do not pay for the handshake again.
Y2038_ACCEL=tcg|kvm overrides the choice.
"""
from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.base.runcmd import run

ACCELS = ("kvm", "tcg")


@dataclass(frozen=True)
class AccelChoice:
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name} ({self.reason})"


def can_open_kvm() -> bool:
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def host_identity(qemu: str) -> str:
    version = run([qemu, "--version"]).splitlines()[0]
    return f"{platform.node()} {platform.release()} {version}"


def _memo_path() -> Path:
    return paths.cache_dir() / "accel.json"


def _load_memo() -> dict[str, dict[str, str]]:
    try:
        return dict(json.loads(_memo_path().read_text()))
    except (OSError, ValueError):
        return {}


def choose(qemu: str, kvm_capable: bool, handshake: Callable[[str], bool]) -> AccelChoice:
    """handshake(accel) boots briefly and says whether the agent answered."""
    forced = os.environ.get("Y2038_ACCEL")
    if forced:
        if forced not in ACCELS:
            raise SandboxError(f"Y2038_ACCEL={forced}: must be one of {', '.join(ACCELS)}")
        return AccelChoice(forced, "forced by Y2038_ACCEL")
    if not kvm_capable:
        return AccelChoice("tcg", "this machine cannot run under KVM on this host")
    if not can_open_kvm():
        return AccelChoice("tcg", "/dev/kvm is not usable")
    identity = host_identity(qemu)
    memo = _load_memo()
    if identity in memo:
        known = memo[identity]
        return AccelChoice(known["accel"], f"remembered: {known['reason']}")
    if handshake("kvm"):
        choice = AccelChoice("kvm", "a KVM boot handshake succeeded")
    else:
        choice = AccelChoice("tcg", "a KVM boot handshake failed; KVM guests hang here")
    memo[identity] = {"accel": choice.name, "reason": choice.reason}
    _memo_path().write_text(json.dumps(memo, indent=2) + "\n")
    return choice
