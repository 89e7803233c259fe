"""Steps to guest commands: a pure function of the scenario and the machine.

Every step kind has one planner in PLANNERS; a planner returns the shell
commands the agent runs, each tagged with the step, phase and flavour it
belongs to and whether it must succeed (a clock move must; a probe's errno is
an observation, not a failure). Flavours the machine lacks are left out.
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sandbox.base.timefmt import format_time
from sandbox.guest.qemu import MemoryRegion
from sandbox.run import chrony
from sandbox.scenario.disks import Disk
from sandbox.scenario.model import (HWCLOCK, NTP_PROBE, HwclockStep, NtpSyncStep, ProbeStep, RunStep, SetClockStep,
                                    Step, SysctlStep, TimeServer, WaitStep)

DEFAULT_TOOLS_FLAVOUR = "native64"  # x86_64's; a machine names its own (Toolchain.tools_flavour)
MOUNT_STEP = -1  # the step number of set-up commands (mounts, the network): they belong to no step


@dataclass(frozen=True)
class GuestCommand:
    """One command for the guest agent, and what its output means."""

    step: int
    phase: str
    probe: str
    flavour: str
    shell: str
    must_succeed: bool  # a failing set-clock breaks the run; a probe's errno does not
    output: str = "probe-json"  # how its stdout becomes observations: OUTPUTS in run/runner.py
    call: str = ""  # a program's call name (output "program")
    time_pattern: str | None = None  # a program's time in its stdout (output "program")


def _probe_commands(step: ProbeStep, tools_flavour: str) -> list[GuestCommand]:
    return [command
            for flavour in step.flavours
            for command in (*_reset_clock(step, flavour),
                            GuestCommand(step.index, step.phase, step.probe, flavour,
                                         _probe_shell(step, flavour), False))]


def _probe_shell(step: ProbeStep, flavour: str) -> str:
    """/probes/<flavour>/<probe> (static), or the dynamic build inside the
    step's userland, run against its glibc (chroot, as a run step's program)
    with the step's environment (LD_PRELOAD and FAKETIME for faketime); with
    linkage = "static", the static build outside the chroot, same environment;
    with `under`, /tools/<tool> <arg>... runs it as its program."""
    under = [f"/tools/{step.under[0]}", *step.under[1:]] if step.under else []
    command = shlex.join([*under, f"/probes/{flavour}/{step.probe}", *step.args])
    if step.userland is None:
        return command
    words = ["env", "-i", f"PATH={GUEST_PATH}", "TZ=UTC0", "LC_ALL=C",
             *(f"{name}={value}" for name, value in step.environment)]
    chroot = [] if step.static else ["chroot", f"/userlands/{step.userland}"]
    return f"cd / && {shlex.join(words + chroot)} {command}"


def _reset_clock(step: ProbeStep, flavour: str) -> list[GuestCommand]:
    """reset-clock: settimeofday (from the tools) right before one flavour runs.
    The command carries the flavour it prepares, so it is left out with it."""
    if step.reset_clock is None:
        return []
    return [GuestCommand(step.index, f"step{step.index}-reset-clock", "settime", flavour,
                         f"/tools/settime {step.reset_clock} settimeofday", True)]


PROGRAM = "program"  # the output kind of a run step's command
CHRONY = "chrony"  # the output kind of an ntp-sync step's command (sandbox/run/chrony.py)
USERLAND_OUTPUTS = (PROGRAM, CHRONY)  # commands whose flavour is a userland, not a probe flavour
GUEST_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
PROGRAM_ENV = (f"PATH={GUEST_PATH}", "HOME=/root", "TZ=UTC0", "LC_ALL=C")
INROOT = "/tools/inroot"  # rootfs/probes/inroot.c


def in_root(root: str, seconds: float, argv: Sequence[str], env: Sequence[str] = ()) -> str:
    """The guest command that runs argv in a root filesystem: changed root,
    only PROGRAM_ENV and `env` in the environment, killed after `seconds`,
    the program found in that root's PATH with argv[0] as given. One static
    exec (/tools/inroot) where busybox's env, timeout and chroot and the
    userland's /usr/bin/env took four; a 64-bit time_t program, where busybox
    is an old one on 32-bit machines (its stat() fails with EOVERFLOW once a
    folder's times pass 2038)."""
    return f"{INROOT} {shlex.quote(root)} {seconds:g} {shlex.join([*PROGRAM_ENV, *env])} -- {shlex.join(argv)}"


def _run_shell(step: RunStep, userland: str) -> str:
    """The program with the userland's loader and libraries."""
    stdin = f"printf '%s' {shlex.quote(step.stdin)} | " if step.stdin is not None else ""
    redirect = "" if step.stdin is not None else " </dev/null"
    return f"{stdin}{in_root(f'/userlands/{userland}', step.timeout, step.argv)}{redirect}"


def _run_commands(step: RunStep, tools_flavour: str) -> list[GuestCommand]:
    return [GuestCommand(step.index, step.phase, step.probe, userland, _run_shell(step, userland), False,
                         output=PROGRAM, call=step.program, time_pattern=step.time_pattern)
            for userland in step.userlands]


PHRAM = "/sys/module/phram/parameters/phram"  # drivers/mtd/devices/phram.c: name,start,length


def _disk_mount(name: str, region: MemoryRegion, index: int) -> str:
    """Map the userland's memory disk as MTD device `index` (phram, then
    mtdblock), mount it in the userland's folder; what the initramfs put
    there (its dynamic probes) is moved aside and bound back into place."""
    root, aside = shlex.quote(f"/userlands/{name}"), shlex.quote(f"/userlands/.{name}-initramfs")
    return (f"echo {shlex.quote(f'{name},{region.start_mib}Mi,{region.size_mib}Mi')} > {PHRAM}"
            f" && mkdir -p {root} && mv {root} {aside} && mkdir {root}"
            f" && mount -t ext4 /dev/mtdblock{index} {root}"
            f" && {{ [ ! -d {aside}/probes ] || {{ mkdir -p {root}/probes"
            f" && mount -o bind {aside}/probes {root}/probes; }}; }} && ")


def userland_commands(userlands: tuple[str, ...],
                      memory_disks: Mapping[str, MemoryRegion] | None = None) -> list[GuestCommand]:
    """Before the first step: /proc, /dev and a fresh /tmp inside each userland
    the scenario runs programs from; each must succeed. A userland on a
    memory disk (`memory_disks`: where the boot put its image) is mounted
    from it first, the disks numbered in the order of `userlands`."""
    disks = memory_disks or {}
    commands, mapped = [], 0
    for name in userlands:
        root = shlex.quote(f"/userlands/{name}")
        shell = (f"mount -t proc proc {root}/proc && mount -o bind /dev {root}/dev"
                 f" && mount -t tmpfs tmp {root}/tmp")
        if name in disks:
            shell, mapped = _disk_mount(name, disks[name], mapped) + shell, mapped + 1
        commands.append(GuestCommand(MOUNT_STEP, f"userland-{name}", "mount", "busybox", shell, True))
    return commands


def _set_clock_commands(step: SetClockStep, tools_flavour: str) -> list[GuestCommand]:
    return [GuestCommand(step.index, f"step{step.index}-set-clock", "settime", tools_flavour,
                         f"/tools/settime {step.time} {step.via}", True)]


def _hwclock_commands(step: HwclockStep, tools_flavour: str) -> list[GuestCommand]:
    """hwclock --set, then --hctosys, then what the RTC and the clock read.
    util-linux 2.38's --date took "YYYY-MM-DD HH:MM:SS" (local time: TZ=UTC0
    makes that UTC) and refused "@<seconds>" and "...T...Z" in the guest."""
    when = format_time(step.time).rstrip("Z").replace("T", " ")
    shell = (f"export TZ=UTC0; {HWCLOCK} --utc --set --date '{when}'"
             f" && {HWCLOCK} --utc --hctosys && /tools/clockstep hwclock {step.time}")
    return [GuestCommand(step.index, f"step{step.index}-hwclock", "clockstep", tools_flavour, shell, True)]


def _wait_commands(step: WaitStep, tools_flavour: str) -> list[GuestCommand]:
    return [GuestCommand(step.index, f"step{step.index}-wait", "clockstep", tools_flavour,
                         f"/tools/clockstep wait {step.seconds:g}", True)]


def _sysctl_commands(step: SysctlStep, tools_flavour: str) -> list[GuestCommand]:
    """The sysctl tool writes the setting and prints what it reads back as one
    observation line (rootfs/probes/sysctl.c)."""
    shell = f"/tools/sysctl {shlex.quote(step.name)} {shlex.quote(step.value)}"
    return [GuestCommand(step.index, f"step{step.index}-sysctl", "sysctl", tools_flavour, shell, True)]


def _ntp_sync_commands(step: NtpSyncStep, tools_flavour: str) -> list[GuestCommand]:
    shell = chrony.sync_shell(step.userland, step.server or chrony.SERVER_ADDRESS, float(step.timeout),
                              step.must_step)
    return [GuestCommand(step.index, step.phase, NTP_PROBE, step.userland, shell, step.must_step, output=CHRONY)]


PLANNERS: dict[type, Callable[..., list[GuestCommand]]] = {
    ProbeStep: _probe_commands,
    RunStep: _run_commands,
    SetClockStep: _set_clock_commands,
    HwclockStep: _hwclock_commands,
    WaitStep: _wait_commands,
    SysctlStep: _sysctl_commands,
    NtpSyncStep: _ntp_sync_commands,
}


def mount_shell(disk: Disk) -> str:
    """The guest (busybox sh) command that mounts a disk at its mount point,
    finding its block device by the virtio serial (the disk's name)."""
    point, fstype = shlex.quote(disk.mount_point), disk.kind.mount_type
    if not disk.has_image:
        return (f"mkdir -p {point} && "
                f"mount -t {fstype} -o size={disk.size_mib}m {shlex.quote(disk.name)} {point}")
    serial = shlex.quote(disk.name)
    return (
        'dev=; for d in /sys/block/*; do '
        f'if [ "$(cat "$d/serial" 2>/dev/null)" = {serial} ]; then dev=/dev/${{d##*/}}; fi; done; '
        f'if [ -z "$dev" ]; then echo "no block device with serial "{serial} >&2; exit 1; fi; '
        f'mkdir -p {point} && mount -t {fstype} "$dev" {point}'
    )


def mount_commands(disks: tuple[Disk, ...]) -> list[GuestCommand]:
    """Mount every [[disk]] at /mnt/<name> before the first step (busybox mount);
    each must succeed."""
    return [GuestCommand(MOUNT_STEP, f"mount-{disk.name}", "mount", "busybox", mount_shell(disk), True)
            for disk in disks]


def plan(steps: tuple[Step, ...], flavours: tuple[str, ...],
         tools_flavour: str = DEFAULT_TOOLS_FLAVOUR) -> list[GuestCommand]:
    """The guest commands for the steps, leaving out flavours the machine lacks.
    Planners get the flavour the machine's tools (/tools/*) are built in."""
    commands = [c for s in steps for c in PLANNERS[type(s)](s, tools_flavour)]
    return [c for c in commands if c.flavour in flavours or c.output in USERLAND_OUTPUTS]


def network_commands(server: TimeServer | None) -> list[GuestCommand]:
    """With a time server, the guest's NIC up at the client's address first."""
    if server is None:
        return []
    return [GuestCommand(MOUNT_STEP, "network", "ip", "busybox", chrony.network_shell(chrony.CLIENT_ADDRESS),
                         True)]


def server_commands(server: TimeServer, memory_disks: Mapping[str, MemoryRegion] | None = None) -> list[GuestCommand]:
    """What the time server guest runs: its userland mounted, its NIC up,
    chronyd serving; each must succeed."""
    return [*userland_commands((server.userland,), memory_disks),
            GuestCommand(MOUNT_STEP, "network", "ip", "busybox", chrony.network_shell(chrony.SERVER_ADDRESS), True),
            GuestCommand(MOUNT_STEP, "chronyd", "chronyd", server.userland, chrony.server_shell(server.userland),
                         True)]
