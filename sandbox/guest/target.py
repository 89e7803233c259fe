"""A target: what a boot needs for one machine and kernel variant (the kernel,
the initramfs, the accelerator), built or reused, KVM tried by a handshake."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.guest import accel
from sandbox.guest.deadline import Deadline
from sandbox.build.initramfs import InitramfsArtifact, build_initramfs
from sandbox.build.kernel import KernelArtifact, KernelRequest, build_kernel
from sandbox.base.machines import Machine
from sandbox.base.progress import say
from sandbox.base.trees import DEFAULT as DEFAULT_TREE
from sandbox.build.disk_images import AttachedDisk
from sandbox.guest.qemu import BootRequest, Guest, GuestDied, GuestHung

HANDSHAKE_SECONDS = 20.0
HANDSHAKE_RTC = "2038-01-19T03:13:50"


@dataclass(frozen=True)
class Target:
    machine: Machine
    kernel: KernelArtifact
    initramfs: InitramfsArtifact
    accel: accel.AccelChoice
    tree: str | None = DEFAULT_TREE  # the kernel source tree (sandbox/base/trees.py); None: the user's own kernel

    def boot(self, rtc: str, evidence: Path, *, initramfs: Path | None = None, memory_mib: int | None = None,
             memory_disks: tuple[Path, ...] = (), memory_disk_names: tuple[str, ...] = (),
             userlands: tuple[dict[str, object], ...] = (), warp: bool = False, append: tuple[str, ...] = (),
             disks: tuple[AttachedDisk, ...] = ()) -> BootRequest:
        """This target booted at `rtc`, its evidence in `evidence`: its own
        initramfs unless one with archives appended is given, and what else
        the boot carries (every artifact already built). The one place a
        BootRequest is made: every boot (a scenario's, a system's, the
        runtime audit's, KUnit's, the accelerator handshake) is a target's."""
        return BootRequest(self.machine, self.kernel.boot_image, initramfs or self.initramfs.path, rtc,
                           self.accel.name, evidence, append=append, disks=disks, memory_mib=memory_mib, warp=warp,
                           memory_disks=memory_disks, memory_disk_names=memory_disk_names, userlands=userlands)


def boots_with(target: Target, seconds: float = HANDSHAKE_SECONDS) -> bool:
    """A short boot: does the agent say READY under the target's accelerator?"""
    with tempfile.TemporaryDirectory(prefix="y2038-handshake-") as tmp:
        with Guest(target.boot(HANDSHAKE_RTC, Path(tmp))) as guest:
            try:
                guest.wait_ready(Deadline(seconds))
                return True
            except (GuestDied, GuestHung):
                return False


def prepare_target(machine: Machine, variant: str = "series", tree: str = DEFAULT_TREE) -> Target:
    return target_with(machine, build_kernel(KernelRequest(machine, variant, tree)), tree)


def target_with(machine: Machine, kernel: KernelArtifact, tree: str | None = DEFAULT_TREE) -> Target:
    """A target booting this kernel (a variant's, or a regression mutant's)."""
    initramfs = build_initramfs(machine.name)
    choice = accel.choose(
        machine.qemu.binary, machine.qemu.kvm_capable,
        lambda name: boots_with(Target(machine, kernel, initramfs, accel.AccelChoice(name, "handshake"), tree)))
    say(f"accelerator for {machine.name}: {choice}")
    return Target(machine, kernel, initramfs, choice, tree)
