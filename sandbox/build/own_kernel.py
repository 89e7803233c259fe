"""The user's own kernel: a ready image and its
.config, checked before anything boots, for `just rehearse --kernel` and
`just run --kernel`.

    own_kernel(image, config) -> OwnKernel    the machine it is for (from its
                                              .config), whether it carries the
                                              series' time32 log, and an error
                                              naming every option a boot of
                                              ours needs that it lacks

Pure apart from reading the two files.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.build import kconfig
from sandbox.build.kernel import KernelArtifact

# The machine a .config is for: the first option set wins.
MACHINE_OF = (("CONFIG_X86_64", "x86_64"), ("CONFIG_X86_32", "i386"), ("CONFIG_ARM", "armhf"))
# What a boot of the runtime audit needs: the initramfs and its /init, the
# programs (ELF, scripts), /proc, /dev, /tmp, the console and the agent's
# port (kernel-series/config/common.config and the machine's fragment).
NEEDED_ALL = ("CONFIG_BLK_DEV_INITRD", "CONFIG_BINFMT_ELF", "CONFIG_BINFMT_SCRIPT", "CONFIG_DEVTMPFS",
              "CONFIG_PROC_FS", "CONFIG_SYSFS", "CONFIG_TMPFS", "CONFIG_TTY", "CONFIG_PRINTK", "CONFIG_FUTEX")
NEEDED = {
    "x86_64": ("CONFIG_SERIAL_8250", "CONFIG_SERIAL_8250_CONSOLE"),
    "i386": ("CONFIG_SERIAL_8250", "CONFIG_SERIAL_8250_CONSOLE"),
    "armhf": ("CONFIG_AEABI", "CONFIG_VFP", "CONFIG_ARCH_VIRT", "CONFIG_SERIAL_AMBA_PL011",
              "CONFIG_SERIAL_AMBA_PL011_CONSOLE", "CONFIG_VIRTIO_MMIO", "CONFIG_VIRTIO_CONSOLE"),
}
SERIES = "CONFIG_TIME32_SYSCALL_POLICY"  # kernel.time32_syscalls (kernel-series 0003, 0014)
OLD_CALLS = "CONFIG_COMPAT_32BIT_TIME"  # without it, every time32 system call is ENOSYS


@dataclass(frozen=True)
class OwnKernel:
    image: Path
    config: Path
    machine: str
    series: bool  # has the series' time32 log (else time32 calls are not seen)
    time32_calls: bool  # COMPAT_32BIT_TIME: the old calls exist at all
    tree: Path | None = None  # the source tree it was built from (--kernel-tree), if any

    def options(self) -> dict[str, str]:
        """The .config as {option: value}."""
        return kconfig.options(self.config.read_text(errors="replace"))

    def artifact(self) -> KernelArtifact:
        key = hashlib.sha256(self.image.read_bytes()).hexdigest()[:16]
        tree = {"tree": str(self.tree)} if self.tree else {}
        return KernelArtifact(f"own-{key}", self.image.parent, self.image, self.config,
                              {"source": "user", "image": str(self.image), "config": str(self.config), **tree})

    def describe(self) -> str:
        """Which kernel, and its image on a line of its own."""
        log = "series time32 log" if self.series else "no series: time32 calls not logged"
        old = "" if self.time32_calls else "; no COMPAT_32BIT_TIME: time32 calls are ENOSYS"
        tree = f" built from {self.tree}" if self.tree else ""
        return f"own kernel{tree} ({log}{old})\n  {self.image}"


def check_config(text: str, source: str) -> tuple[str, bool, bool]:
    """(machine, series, time32 calls) of a .config; SandboxError naming
    every option a boot of ours needs that it lacks."""
    values = kconfig.options(text, source)
    machine = next((m for option, m in MACHINE_OF if values.get(option) == "y"), None)
    if machine is None:
        raise SandboxError(f"{source}: not a kernel config for a machine here (none of "
                           f"{', '.join(o for o, _ in MACHINE_OF)} is set)")
    missing = [o for o in NEEDED_ALL + NEEDED[machine] if values.get(o, "n") not in ("y",)]
    if missing:
        raise SandboxError(f"{source}: a {machine} kernel without {', '.join(missing)}: "
                           "the sandbox's initramfs, console or agent cannot run on it")
    return machine, values.get(SERIES) == "y", values.get(OLD_CALLS) == "y"


def own_kernel(image: Path, config: Path) -> OwnKernel:
    for path, what in ((image, "kernel image"), (config, "kernel config")):
        if not path.is_file():
            raise SandboxError(f"{path}: no such {what}")
    machine, series, old_calls = check_config(config.read_text(errors="replace"), str(config))
    return OwnKernel(image.resolve(), config.resolve(), machine, series, old_calls)
