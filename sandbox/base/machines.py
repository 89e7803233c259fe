"""What differs between machines, as data: one table, no branches elsewhere.

A machine is what QEMU emulates and the kernel is built for. Its row has a
part for each stage that reads it: how to build the kernel (KernelBuild:
make's ARCH, the cross compiler, the fragments), how QEMU runs it
(QemuMachine: machine type, console, agent port, device models, memory
layout; all sandbox/guest/qemu.py sees), how to build the guest binaries
(Toolchain: the C compiler, what selects the 32-bit ABI, the static libcs),
and the Debian architectures whose programs it runs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from sandbox.base.errors import SandboxError

FLAVOURS = ("time32-syscall", "time32-libc", "time64", "native64")
FLAVOURS_32 = FLAVOURS[:-1]  # no native64 on a 32-bit machine
# The agent on the PC's second 8250 UART (ttyS1): microvm makes only the
# first -serial's (the console's, ttyS0), so it is a device of its own.
SECOND_SERIAL = ("-device", "isa-serial,chardev=agent")
# QEMU's microvm machine: the PC's ISA devices (8250 UART, CMOS clock, PIT,
# PIC, IO-APIC) without firmware to run, a PCI bus to enumerate or ACPI
# tables to build: about 0.2 s of each boot against -M pc (docs/time-warp.md).
# Its virtio devices are virtio-mmio ones. An ISA parallel port on a null
# chardev stands for -parallel null, which microvm does not wire: ppdev and
# lp (devtime probe) need one.
MICROVM = ("-M", "microvm,acpi=off", "-chardev", "null,id=parallel", "-device", "isa-parallel,chardev=parallel")


@dataclass(frozen=True)
class KernelBuild:
    """How the machine's kernel is built (sandbox/build/kernel.py, kernel_tree.py)."""

    make_arch: str
    cross_compile: str  # "" for the host compiler
    make_targets: tuple[str, ...]
    boot_image: str  # path in the build folder handed to -kernel
    config_fragment: str  # file name under kernel-series/config/
    # Objects of the boot image that ccache cannot key right: they .incbin a
    # file the compiler's dependency list never names, so ccache would hand
    # back the object of an earlier kernel (sandbox/build/kernel.py make_image)
    uncached_objects: tuple[str, ...] = ()
    # The machine's own fragment for a variant with disks (after them): the
    # userlands as memory disks (kernel-series/config/memory-disks.config);
    # "" for none
    disks_fragment: str = ""


@dataclass(frozen=True)
class QemuMachine:
    """How QEMU runs the machine: all sandbox/guest/qemu.py reads of it."""

    binary: str  # qemu-system-*
    machine_args: tuple[str, ...]  # -M and what the board needs beside it
    console_tty: str  # kernel console
    agent_tty: str  # guest agent channel, apart from the console
    agent_device: tuple[str, ...]  # QEMU arguments wiring the chardev "agent" to agent_tty
    block_device: str  # QEMU's virtio block device model for [[disk]] images
    net_device: str  # QEMU's virtio NIC model for the link to a [time-server] guest
    kvm_capable: bool  # could KVM run it on an x86_64 host at all
    # Kernel arguments under time warp (docs/time-warp.md): what keeps the
    # idle guest from waking up for nothing
    warp_append: tuple[str, ...] = ()
    # Kernel arguments of every boot, warp or not: what the boot need not wait
    # for (docs/time-warp.md, "What a boot costs")
    boot_append: tuple[str, ...] = ()
    # A 32-bit kernel maps the memory disks into its vmalloc space, whose
    # default size this is: a boot with memory disks asks for it plus the
    # disks (`vmalloc=`). 0: a 64-bit kernel, whose vmalloc space is ample.
    vmalloc_mib: int = 0
    # Where guest RAM starts in the physical address space, and where the
    # memory disks go: inside the kernel's memory, kept off with memmap=
    # (x86), or above it, the kernel given only its own with mem= (arm: no
    # memmap=) (sandbox/guest/qemu.py memory_regions)
    ram_base_mib: int = 0
    disks_above_memory: bool = False
    memory_mib: int = 256  # QEMU's -m, unless a boot with userlands asks for more


@dataclass(frozen=True)
class Toolchain:
    """How the guest binaries are built (rootfs/Makefile, sandbox/build/deps.py)."""

    flavours: tuple[str, ...]
    tools_flavour: str  # the 64-bit time_t flavour the tools (settime) are built in
    cc: str  # the C compiler of the probes (a Debian gcc or cross gcc)
    cc_package: str  # the Debian package that provides cc
    cflags32: str  # what selects the 32-bit ABI (rootfs/Makefile CFLAGS32)
    # (Debian package, folder in it): the <asm/*.h> headers of the 32-bit ABI,
    # unpacked into the cache and added with -isystem (sandbox/build/deps.py
    # cflags32); () where the compiler has its own
    asm_headers32: tuple[str, str] | tuple[()]
    # (extra cc flags, Debian package): a static libc that must be found for
    # those flags, and the package it comes from
    static_libcs: tuple[tuple[str, str], ...]


KEYED_FIELDS = (
    ("name", ""), ("make_arch", "kernel"), ("cross_compile", "kernel"), ("make_targets", "kernel"),
    ("boot_image", "kernel"), ("config_fragment", "kernel"), ("binary", "qemu"), ("machine_args", "qemu"),
    ("console_tty", "qemu"), ("agent_tty", "qemu"), ("agent_device", "qemu"), ("block_device", "qemu"),
    ("net_device", "qemu"), ("kvm_capable", "qemu"), ("flavours", "toolchain"), ("tools_flavour", "toolchain"),
    ("cc", "toolchain"), ("cc_package", "toolchain"), ("cflags32", "toolchain"), ("asm_headers32", "toolchain"),
    ("static_libcs", "toolchain"), ("debian_archs", ""), ("warp_append", "qemu"), ("boot_append", "qemu"),
    ("uncached_objects", "kernel"), ("disks_fragment", "kernel"), ("vmalloc_mib", "qemu"),
    ("ram_base_mib", "qemu"), ("disks_above_memory", "qemu"), ("memory_mib", "qemu"),
)
"""(field, part) in the order of the one flat row the machine was before its
parts: repr(Machine) still reads that way, field by field, because the
initramfs and the dynamic probes hash it into their cache keys
(sandbox/build/initramfs.py, dynamic_probes.py). A part's field renamed
keeps its old name here (qemu's binary was `qemu`, its machine_args
`qemu_machine`)."""
_OLD_NAMES = {"binary": "qemu", "machine_args": "qemu_machine"}


@dataclass(frozen=True, repr=False)
class Machine:
    """One machine: its name and the part each stage reads."""

    name: str
    kernel: KernelBuild
    qemu: QemuMachine
    toolchain: Toolchain
    # Debian architectures whose programs it runs (rootfs/userlands.toml)
    debian_archs: tuple[str, ...]

    def __repr__(self) -> str:
        """The flat row of KEYED_FIELDS: what the cache keys hash, unchanged by the split."""
        values = ((_OLD_NAMES.get(name, name), getattr(getattr(self, part) if part else self, name))
                  for name, part in KEYED_FIELDS)
        return f"Machine({', '.join(f'{name}={value!r}' for name, value in values)})"

    # The toolchain's fields, read by name by the two builders whose own source
    # is part of their cache key (sandbox/build/initramfs.py, dynamic_probes.py):
    # an edit there to read `toolchain.` would rebuild every initramfs and
    # every set of dynamic probes. Every other reader reads `toolchain.`.
    @property
    def flavours(self) -> tuple[str, ...]:
        return self.toolchain.flavours

    @property
    def tools_flavour(self) -> str:
        return self.toolchain.tools_flavour

    @property
    def cc(self) -> str:
        return self.toolchain.cc

    @property
    def cc_package(self) -> str:
        return self.toolchain.cc_package

    @property
    def static_libcs(self) -> tuple[tuple[str, str], ...]:
        return self.toolchain.static_libcs


QEMU_APIC_KHZ = 1_000_000  # hw/intc/apic_common.c: the APIC's timer counts nanoseconds

X86_64 = Machine(
    name="x86_64",
    kernel=KernelBuild(
        make_arch="x86_64",
        cross_compile="",
        make_targets=("vmlinux",),
        boot_image="vmlinux",  # PVH entry: no decompression step
        config_fragment="x86_64.config",
        disks_fragment="memory-disks.config",
    ),
    qemu=QemuMachine(
        binary="qemu-system-x86_64",
        machine_args=MICROVM,
        console_tty="ttyS0",
        agent_tty="ttyS1",
        agent_device=SECOND_SERIAL,
        block_device="virtio-blk-device",  # virtio-mmio: no PCI in microvm
        net_device="virtio-net-device",
        kvm_capable=True,
        # The TSC has no other clocksource to be checked against (no ACPI, no
        # HPET found): unless trusted, it never becomes valid for high
        # resolution, and the kernel keeps a periodic tick instead of NO_HZ.
        warp_append=("tsc=reliable",),
        # check_timer()'s timer_irq_works() busy-waits 10 ticks (100 ms) to see
        # that the IO-APIC routes the PIT; QEMU's PC does. 256 legacy BSD ptys
        # (CONFIG_LEGACY_PTYS) took pty_init() about 100 ms; nothing uses them.
        # retain_initrd: the kernel keeps the initramfs archive instead of
        # poisoning every page of it (0xcc) before freeing it: 11 million of the
        # 92 million instructions to /init under warp (docs/time-warp.md).
        # lapic_timer_khz (kernel-series/aids/0001): QEMU's local APIC counts at 1 GHz
        # of guest time, so the kernel need not calibrate it against the PIT: two
        # 100 ms busy-waits, about 1 s of wall time of a boot under warp.
        # reboot=t: after a panic (panic=-1) the kernel resets by a triple fault,
        # which QEMU's -no-reboot turns into an exit; its first choices, ACPI and
        # the keyboard controller, are not on microvm, and trying them took 4 s.
        boot_append=("no_timer_check", "pty.legacy_count=0", "retain_initrd", f"lapic_timer_khz={QEMU_APIC_KHZ}",
                     "reboot=t"),
    ),
    toolchain=Toolchain(
        flavours=FLAVOURS,
        tools_flavour="native64",
        cc="gcc",
        cc_package="gcc",
        cflags32="-m32",
        asm_headers32=("linux-libc-dev:i386", "usr/include/i386-linux-gnu"),
        static_libcs=(("", "libc6-dev"), ("-m32", "gcc-12-multilib")),
    ),
    debian_archs=("amd64", "i386"),  # i386 through IA32 emulation
)

# The same PC as x86_64, a 32-bit kernel: the same i386 binaries as
# x86_64's 32-bit flavours take the native 32-bit path here.
I386 = Machine(
    name="i386",
    kernel=replace(X86_64.kernel, make_arch="i386", config_fragment="i386.config"),
    qemu=replace(X86_64.qemu, binary="qemu-system-i386",
                 vmalloc_mib=128),  # arch/x86/mm/init_32.c VMALLOC_RESERVE (VMSPLIT_3G, no HIGHMEM)
    toolchain=replace(X86_64.toolchain, flavours=FLAVOURS_32, tools_flavour="time64",
                      static_libcs=(("-m32", "gcc-12-multilib"),)),
    debian_archs=("i386",),
)

ARMHF = Machine(
    name="armhf",
    kernel=KernelBuild(
        make_arch="arm",
        cross_compile="arm-linux-gnueabihf-",
        make_targets=("zImage",),
        boot_image="arch/arm/boot/zImage",  # QEMU passes the initrd and its DTB
        # piggy.S .incbin's the compressed Image (piggy_data): a ccache hit there
        # once put a v1 kernel's payload into a v2 zImage.
        uncached_objects=("arch/arm/boot/compressed/piggy.o",),
        config_fragment="armhf.config",
        disks_fragment="memory-disks.config",
    ),
    qemu=QemuMachine(
        binary="qemu-system-arm",
        machine_args=("-M", "virt", "-cpu", "cortex-a15"),
        console_tty="ttyAMA0",
        # -M virt has a single PL011 (the console): the agent gets a virtio
        # console over virtio-mmio instead.
        agent_tty="hvc0",
        agent_device=("-device", "virtio-serial-device", "-device", "virtconsole,chardev=agent"),
        block_device="virtio-blk-device",  # virtio-mmio: no PCI in the kernel
        net_device="virtio-net-device",
        kvm_capable=False,
        # kcompactd's proactive compaction looks at memory every 500 ms (mm/compaction.c
        # HPAGE_FRAG_CHECK_INTERVAL_MSEC); at 0 it sleeps until asked.
        warp_append=("sysctl.vm.compaction_proactiveness=0",),
        boot_append=("pty.legacy_count=0", "retain_initrd"),  # as on the PC
        # -M virt's RAM starts at 1 GiB. QEMU puts the initramfs and the DTB at
        # 128 MiB into it, so the memory disks go above the kernel's 256 MiB.
        ram_base_mib=1024,
        disks_above_memory=True,
        vmalloc_mib=240,  # arch/arm/mm/mmu.c: VMALLOC_END - (240 << 20)
    ),
    toolchain=Toolchain(
        flavours=FLAVOURS_32,
        tools_flavour="time64",
        # Debian's armhf ABI (EABI, hard float); the cross gcc is 32-bit already.
        cc="arm-linux-gnueabihf-gcc",
        cc_package="gcc-arm-linux-gnueabihf",
        cflags32="",
        asm_headers32=(),
        static_libcs=(("", "libc6-dev-armhf-cross"),),
    ),
    debian_archs=("armhf",),
)

MACHINES: dict[str, Machine] = {m.name: m for m in (X86_64, I386, ARMHF)}


@dataclass(frozen=True)
class DebianArch:
    """A Debian architecture whose userland can hold the probes built
    dynamically (against its own glibc): which flavours that ABI is, the
    machine whose compiler and flags build them, and its multiarch triplet
    (where its libraries are: /usr/lib/<triplet>/)."""

    name: str
    flavours: tuple[str, ...]
    builder: Machine
    triplet: str


DEBIAN_ARCHS: dict[str, DebianArch] = {a.name: a for a in (
    DebianArch("amd64", ("native64",), X86_64, "x86_64-linux-gnu"),
    DebianArch("i386", FLAVOURS_32, I386, "i386-linux-gnu"),
    DebianArch("armhf", FLAVOURS_32, ARMHF, "arm-linux-gnueabihf"),
)}


DEFAULT_MACHINE = "x86_64"
"""The machine of every verb that takes --machine, when none is given."""


def machine(name: str) -> Machine:
    try:
        return MACHINES[name]
    except KeyError:
        known = ", ".join(MACHINES)
        raise SandboxError(f"unknown machine '{name}' (known: {known})") from None
