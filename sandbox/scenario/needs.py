"""What a scenario needs of a kernel that is not ours (pure): the series'
own interfaces, and the config options behind its probes, disks and steps.

    skip_reason(scenario, config, series) -> str | None
        None: it can run on that kernel; else why not, in one line
        (config: the kernel's .config as {option: value})

Used when the suite is pointed at the user's own kernel (`just run
--kernel IMAGE --kernel-config CONFIG`): a scenario the kernel cannot
serve is skipped with its reason, named before anything boots.
"""
from __future__ import annotations

from collections.abc import Mapping

from sandbox.base.variants import DEFAULT as SERIES_VARIANT
from sandbox.scenario.model import HwclockStep, ProbeStep, Scenario, SysctlStep

PROBE_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "ipc": ("CONFIG_SYSVIPC",),
    "mqueue": ("CONFIG_POSIX_MQUEUE",),
    "timers": ("CONFIG_POSIX_TIMERS", "CONFIG_TIMERFD"),
    "futex": ("CONFIG_FUTEX",),
    "timeouts": ("CONFIG_POSIX_TIMERS", "CONFIG_EPOLL"),
    "rtc": ("CONFIG_RTC_CLASS",),
}
"""The kernel options each probe's calls need (kernel-series/config/common.config)."""
FS_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "tmpfs": ("CONFIG_TMPFS",),
    "ext4": ("CONFIG_BLOCK", "CONFIG_VIRTIO_BLK", "CONFIG_EXT4_FS"),
    "xfs": ("CONFIG_BLOCK", "CONFIG_VIRTIO_BLK", "CONFIG_XFS_FS"),
}
"""A [[disk]]'s filesystem (kernel-series/config/disks.config)."""
HWCLOCK_OPTIONS = ("CONFIG_RTC_CLASS", "CONFIG_RTC_INTF_DEV")
MEMORY_DISK_OPTIONS = ("CONFIG_MTD_PHRAM", "CONFIG_MTD_BLOCK", "CONFIG_EXT4_FS")
"""Built in (the guest loads no modules): a kernel with them gets its
userlands as memory disks (sandbox/guest/qemu.py memory_disk_args), any
other in the initramfs: every machine's kernels with disks
(kernel-series/config/memory-disks.config, KernelBuild.disks_fragment)."""
SERIES_ARGS = ("time32_syscalls", "hctosys_beyond_2038")  # kernel arguments only the series knows


def series_uses(scenario: Scenario) -> list[str]:
    """What of the series (kernel-series/) the scenario uses, as a person reads it."""
    uses = [f"sysctl {s.name}" for s in scenario.steps if isinstance(s, SysctlStep) and "time32" in s.name]
    uses += [f"the {s.probe} probe (Time32_syscalls, its log)" for s in scenario.steps
             if isinstance(s, ProbeStep) and s.probe == "time32"]
    uses += [f"kernel argument {a}" for a in scenario.kernel_args if any(mark in a for mark in SERIES_ARGS)]
    return list(dict.fromkeys(uses))


def options_needed(scenario: Scenario) -> list[str]:
    needed = [o for s in scenario.steps if isinstance(s, ProbeStep) for o in PROBE_OPTIONS.get(s.probe, ())]
    needed += [o for d in scenario.disks for o in FS_OPTIONS.get(d.fs, ())]
    needed += [o for s in scenario.steps if isinstance(s, HwclockStep) for o in HWCLOCK_OPTIONS]
    return list(dict.fromkeys(needed))


def serves_memory_disks(config: Mapping[str, str]) -> bool:
    return all(config.get(option) == "y" for option in MEMORY_DISK_OPTIONS)


def skip_reason(scenario: Scenario, config: Mapping[str, str], series: bool) -> str | None:
    if scenario.kernel != SERIES_VARIANT:
        return f"written for the {scenario.kernel} kernel variant"
    uses = series_uses(scenario)
    if uses and not series:
        return f"needs the series (kernel-series/): {', '.join(uses)}"
    missing = [o for o in options_needed(scenario) if config.get(o, "n") not in ("y", "m")]
    if missing:
        return f"the kernel's config lacks {', '.join(missing)}"
    return None
