"""What differs between machines, as data: one table, no branches elsewhere."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import SandboxError

FLAVOURS = ("time32-syscall", "time32-libc", "time64", "native64")


@dataclass(frozen=True)
class Machine:
    name: str
    # Kernel build
    make_arch: str
    cross_compile: str  # "" for the host compiler
    make_targets: tuple[str, ...]
    boot_image: str  # path in the build folder handed to -kernel
    config_fragment: str  # file name under kernel-series/config/
    # QEMU
    qemu: str
    qemu_machine: tuple[str, ...]
    console_tty: str  # kernel console
    agent_tty: str  # guest agent channel, apart from the console
    kvm_capable: bool  # could KVM run it on an x86_64 host at all
    # Guest binaries
    flavours: tuple[str, ...]


MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine(
            name="x86_64",
            make_arch="x86_64",
            cross_compile="",
            make_targets=("vmlinux", "bzImage"),
            boot_image="vmlinux",  # PVH entry: no decompression step
            config_fragment="x86_64.config",
            qemu="qemu-system-x86_64",
            qemu_machine=("-M", "pc", "-m", "256"),
            console_tty="ttyS0",
            agent_tty="ttyS1",
            kvm_capable=True,
            flavours=FLAVOURS,
        ),
    )
}


def machine(name: str) -> Machine:
    try:
        return MACHINES[name]
    except KeyError:
        known = ", ".join(MACHINES)
        raise SandboxError(f"unknown machine '{name}' (known: {known})") from None
