"""What differs between machines, as data: one table, no branches elsewhere."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import SandboxError

FLAVOURS = ("time32-syscall", "time32-libc", "time64", "native64")
FLAVOURS_32 = FLAVOURS[:-1]  # no native64 on a 32-bit machine
# The agent on the PC's second 8250 UART (ttyS1).
SECOND_SERIAL = ("-serial", "chardev:agent")


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
    agent_device: tuple[str, ...]  # QEMU arguments wiring the chardev "agent" to agent_tty
    kvm_capable: bool  # could KVM run it on an x86_64 host at all
    # Guest binaries
    flavours: tuple[str, ...]
    tools_flavour: str  # the 64-bit time_t flavour the tools (settime) are built in


MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine(
            name="x86_64",
            make_arch="x86_64",
            cross_compile="",
            make_targets=("vmlinux",),
            boot_image="vmlinux",  # PVH entry: no decompression step
            config_fragment="x86_64.config",
            qemu="qemu-system-x86_64",
            qemu_machine=("-M", "pc", "-m", "256"),
            console_tty="ttyS0",
            agent_tty="ttyS1",
            agent_device=SECOND_SERIAL,
            kvm_capable=True,
            flavours=FLAVOURS,
            tools_flavour="native64",
        ),
        Machine(
            name="i386",
            make_arch="i386",
            cross_compile="",
            make_targets=("vmlinux",),
            boot_image="vmlinux",  # PVH entry, as on x86_64
            config_fragment="i386.config",
            qemu="qemu-system-i386",
            qemu_machine=("-M", "pc", "-m", "256"),
            console_tty="ttyS0",
            agent_tty="ttyS1",
            agent_device=SECOND_SERIAL,
            kvm_capable=True,
            flavours=FLAVOURS_32,
            tools_flavour="time64",
        ),
        Machine(
            name="armhf",
            make_arch="arm",
            cross_compile="arm-linux-gnueabihf-",
            make_targets=("zImage",),
            boot_image="arch/arm/boot/zImage",  # QEMU passes the initrd and its DTB
            config_fragment="armhf.config",
            qemu="qemu-system-arm",
            qemu_machine=("-M", "virt", "-cpu", "cortex-a15", "-m", "256"),
            console_tty="ttyAMA0",
            # -M virt has a single PL011 (the console): the agent gets a
            # virtio console over virtio-mmio instead.
            agent_tty="hvc0",
            agent_device=("-device", "virtio-serial-device",
                          "-device", "virtconsole,chardev=agent"),
            kvm_capable=False,
            flavours=FLAVOURS_32,
            tools_flavour="time64",
        ),
    )
}


def machine(name: str) -> Machine:
    try:
        return MACHINES[name]
    except KeyError:
        known = ", ".join(MACHINES)
        raise SandboxError(f"unknown machine '{name}' (known: {known})") from None
