"""The prepare stage of a scenario: what it is to boot, built, as one
complete BootRequest (sandbox/guest/qemu.py). After it nothing builds.

    boot_of(target, scenario, evidence) -> BootRequest         the scenario's guest
    server_boot_of(scenario, evidence) -> BootRequest | None   its [time-server] guest

The Debian userlands its run and probe steps name are built (or reused) and
ride as memory disks where the kernel serves them, else appended to the
initramfs, with the probes built dynamically for those its probe steps run
in; each program a run step names is checked to be in its userland; the
[[disk]] images are made (mkfs, cached). Another kind of boot (a KUnit run,
a bench boot, the runtime audit's, a whole system) has its own prepare
function that ends in the same BootRequest (docs/architecture.md).
"""
from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from sandbox.base.errors import InputError
from sandbox.base.evidence import Evidence
from sandbox.base.machines import MACHINES
from sandbox.base.timefmt import format_time
from sandbox.base.variants import VARIANTS
from sandbox.build.disk_images import prepare_images
from sandbox.build.dynamic_probes import build_userland_probes
from sandbox.build.kconfig import options
from sandbox.build.userland import (UserlandArtifact, build_userland, guest_memory_mib, has_program, userland_image,
                                    with_userlands)
from sandbox.guest.qemu import BootRequest
from sandbox.guest.target import Target, prepare_target
from sandbox.scenario.model import HwclockStep, RunStep, Scenario
from sandbox.scenario.needs import serves_memory_disks
from sandbox.scenario.userlands import load_userlands

NETWORK_VARIANT = next(name for name, variant in VARIANTS.items() if variant.has_network)


def boot_of(target: Target, scenario: Scenario, evidence: Path) -> BootRequest:
    """The scenario's guest on a target, complete: its clock, kernel
    arguments, time warp, userlands, disk images and evidence folder."""
    table = load_userlands()
    boot, artifacts = _boot_with_userlands(target, scenario.userlands, scenario.probe_userlands,
                                           format_time(scenario.rtc), evidence, _host_binaries(target, scenario))
    by_name = {a.userland.name: a for a in artifacts}
    for step in scenario.steps:
        if isinstance(step, RunStep):
            for name in step.userlands:
                if not has_program(by_name[name], step.argv[0]):
                    raise InputError(scenario.file, f"step[{step.index}].run",
                                     f"no program '{step.argv[0]}' in userland {name} "
                                     f"({', '.join(table.by_name[name].packages)} and what they depend on)")
    disks = prepare_images(scenario.disks, evidence)  # mkfs on the host, cached
    return replace(boot, append=scenario.kernel_args, disks=disks, warp=scenario.warp)


def server_boot_of(scenario: Scenario, evidence: Path) -> BootRequest | None:
    """The [time-server] guest: its machine's kernel with a network and its
    userland, at the server's time, its evidence in the run's time-server/."""
    server = scenario.time_server
    if server is None:
        return None
    return _boot_with_userlands(_server_target(server.machine), (server.userland,), (),
                                format_time(server.time), Evidence(evidence).server().folder)[0]


def _host_binaries(target: Target, scenario: Scenario) -> tuple[Path, ...]:
    """The machine's host binaries archive, when a step runs one (hwclock):
    the initramfs leaves them out, as most scenarios never run them."""
    archive = target.initramfs.host_binaries
    runs_one = any(isinstance(step, HwclockStep) for step in scenario.steps)
    return (archive,) if runs_one and archive is not None else ()


@functools.cache
def _kernel_options(config: Path) -> dict[str, str]:
    return options(config.read_text(errors="replace"))


def takes_memory_disks(target: Target) -> bool:
    """Whether the target's kernel gets its userlands as memory disks."""
    return serves_memory_disks(_kernel_options(target.kernel.config))


def _boot_with_userlands(target: Target, names: tuple[str, ...], probe_names: tuple[str, ...], rtc: str,
                         evidence: Path, extras: tuple[Path, ...] = ()
                         ) -> tuple[BootRequest, tuple[UserlandArtifact, ...]]:
    """The userlands as memory disks where the kernel serves them (no unpacking
    at boot: about 12 ms of TCG per MiB, 2 s for the demo's two), else
    appended to the initramfs; their dynamic probes ride on the initramfs."""
    if not names and not extras:
        return target.boot(rtc, evidence), ()
    table = load_userlands()
    artifacts = tuple(build_userland(table.by_name[name], table) for name in names)
    probes = tuple(build_userland_probes(table.by_name[name]) for name in probe_names)
    records = tuple(a.record() for a in artifacts)
    if artifacts and takes_memory_disks(target):
        return target.boot(rtc, evidence, initramfs=with_userlands(target.initramfs.path, (), probes, extras),
                           memory_disks=tuple(userland_image(a) for a in artifacts),
                           memory_disk_names=tuple(a.userland.name for a in artifacts), userlands=records), artifacts
    added = sum(a.cpio.stat().st_size for a in artifacts)
    return target.boot(rtc, evidence, initramfs=with_userlands(target.initramfs.path, artifacts, probes, extras),
                       memory_mib=guest_memory_mib(added), userlands=records), artifacts


@functools.cache
def _server_target(machine: str) -> Target:
    """The time server's machine, on the variant with a network (built or
    reused once per process)."""
    return prepare_target(MACHINES[machine], NETWORK_VARIANT)
