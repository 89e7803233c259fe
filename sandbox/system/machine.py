"""The boot of a system image: the memory disk it rides on and the kernel
arguments that tell our /init what to do with it (rootfs/probes/init.c,
y2038.system and y2038.sysdisk). Pure: a BootRequest out, nothing started."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.machines import Machine, machine
from sandbox.guest.qemu import BootRequest, memory_regions
from sandbox.guest.target import Target

MODES = ("configure", "boot")
MACHINE_OF_ARCH = {"armhf": "armhf", "i386": "i386", "amd64": "x86_64"}
"""The machine a system of each Debian architecture boots on: its own, so that
its 32-bit programs take a 32-bit kernel's native entry points."""
SYSTEM_MEMORY_MIB = 384  # systemd, journald, dbus, rsyslog, chronyd, sshd and a tmpfs upper layer
SYSTEMD_ARGS = ("systemd.getty_auto=0",)
"""No getty on the consoles: systemd's getty generator would start one on a
hypervisor console (hvc0: the agent's channel on armhf) and take it over."""


def machine_for_arch(arch: str, what: str) -> Machine:
    """The machine for a system of this architecture; a one-line error naming
    `what` (the image) otherwise."""
    if arch not in MACHINE_OF_ARCH:
        raise SandboxError(f"{what}: architecture {arch} is not one any machine boots "
                           f"(known: {', '.join(MACHINE_OF_ARCH)})")
    return machine(MACHINE_OF_ARCH[arch])


@dataclass(frozen=True)
class SystemBoot:
    target: Target  # the machine, its system kernel and initramfs, the accelerator chosen for it
    image: Path  # the system's ext4 image, never written (an overlay with a tmpfs above)
    mode: str  # MODES
    rtc: str
    evidence: Path
    warp: bool = False
    extra_args: tuple[str, ...] = ()

    @property
    def machine(self) -> Machine:
        return self.target.machine

    def request(self) -> BootRequest:
        region = memory_regions(self.machine.qemu, SYSTEM_MEMORY_MIB, (self.image,))[0]
        append = (f"y2038.system={self.mode}", f"y2038.sysdisk=system,{region.start_mib}Mi,{region.size_mib}Mi",
                  *(SYSTEMD_ARGS if self.mode == "boot" else ()), *self.extra_args)
        return self.target.boot(self.rtc, self.evidence, append=append, memory_mib=SYSTEM_MEMORY_MIB,
                                warp=self.warp, memory_disks=(self.image,))
