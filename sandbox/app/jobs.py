"""Run a scenario and judge it: the one path the CLI and pytest share.

    run_and_judge(target, scenario, evidence) -> JudgedRun

Runs it (sandbox/run), judges a completed run (sandbox/judge), and writes
verdicts.json, report.txt, facts.json and the charts beside the run's
evidence, and the session's session.json once: a caller adds nothing.
"""
from __future__ import annotations

import functools
import time
from dataclasses import asdict
from pathlib import Path

from sandbox.app.facts import write_run_facts, write_session
from sandbox.base import evidence as files
from sandbox.base.errors import InputError, shown
from sandbox.base.evidence import Evidence
from sandbox.build.dynamic_probes import build_userland_probes
from sandbox.base.machines import MACHINES
from sandbox.base.variants import VARIANTS
from sandbox.build.kconfig import options
from sandbox.build.userland import (UserlandArtifact, build_userland, guest_memory_mib, has_program, userland_image,
                                    with_userlands)
from sandbox.guest.target import Target, prepare_target
from sandbox.judge.evaluate import evaluate
from sandbox.judge.judged import JudgedRun
from sandbox.report.html import keep_charts
from sandbox.report.text import failure_report
from sandbox.run.runner import Boot, run_scenario, StartGuest
from sandbox.guest.qemu import Guest
from sandbox.scenario.model import HwclockStep, RunStep, Scenario
from sandbox.scenario.needs import serves_memory_disks
from sandbox.scenario.userlands import load_userlands


NETWORK_VARIANT = next(name for name, variant in VARIANTS.items() if variant.has_network)


def boot_of(target: Target, scenario: Scenario) -> Boot:
    """The boot a scenario needs on a target: with the Debian userlands its run
    and probe steps name built (or reused) and appended to the initramfs
    (with the probes built dynamically for those its probe steps run in),
    each program checked to be in its userland before anything boots."""
    table = load_userlands()
    extras = _host_binaries(target, scenario)
    boot, artifacts = _boot_with_userlands(target, scenario.userlands, scenario.probe_userlands, extras)
    by_name = {a.userland.name: a for a in artifacts}
    for step in scenario.steps:
        if isinstance(step, RunStep):
            for name in step.userlands:
                if not has_program(by_name[name], step.argv[0]):
                    raise InputError(scenario.file, f"step[{step.index}].run",
                                     f"no program '{step.argv[0]}' in userland {name} "
                                     f"({', '.join(table.by_name[name].packages)} and what they depend on)")
    return boot


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


def _boot_with_userlands(target: Target, names: tuple[str, ...], probe_names: tuple[str, ...],
                         extras: tuple[Path, ...] = ()) -> tuple[Boot, tuple[UserlandArtifact, ...]]:
    """The userlands as memory disks where the kernel serves them (no unpacking
    at boot: about 12 ms of TCG per MiB, 2 s for the demo's two), else
    appended to the initramfs; their dynamic probes ride on the initramfs."""
    if not names and not extras:
        return Boot(target.machine, target.kernel.boot_image, target.initramfs.path, target.accel.name), ()
    table = load_userlands()
    artifacts = tuple(build_userland(table.by_name[name], table) for name in names)
    probes = tuple(build_userland_probes(table.by_name[name]) for name in probe_names)
    records = tuple(a.record() for a in artifacts)
    if artifacts and takes_memory_disks(target):
        disks = tuple((a.userland.name, userland_image(a)) for a in artifacts)
        return Boot(target.machine, target.kernel.boot_image,
                    with_userlands(target.initramfs.path, (), probes, extras), target.accel.name, records,
                    userland_disks=disks), artifacts
    added = sum(a.cpio.stat().st_size for a in artifacts)
    return Boot(target.machine, target.kernel.boot_image,
                with_userlands(target.initramfs.path, artifacts, probes, extras),
                target.accel.name, records, memory_mib=guest_memory_mib(added)), artifacts


@functools.cache
def _server_target(machine: str) -> Target:
    """The time server's machine, on the variant with a network (built or
    reused once per process)."""
    return prepare_target(MACHINES[machine], NETWORK_VARIANT)


def server_boot_of(scenario: Scenario) -> Boot | None:
    """The [time-server] guest's boot: its machine's series kernel with its userland."""
    server = scenario.time_server
    if server is None:
        return None
    return _boot_with_userlands(_server_target(server.machine), (server.userland,), ())[0]


def run_and_judge(target: Target, scenario: Scenario, evidence: Path, start: StartGuest = Guest) -> JudgedRun:
    """Run, judge and leave the whole evidence: the session's session.json
    (once), the run's files, its verdicts and report, its facts and its
    charts (drawn now, while other guests may still run)."""
    started, clock = time.time(), time.monotonic()
    write_session(Evidence(evidence).session)
    record = run_scenario(scenario, boot_of(target, scenario), evidence, start,
                          on_abort=lambda aborted: write_judgement(JudgedRun(aborted, None)),
                          server_boot=server_boot_of(scenario))
    result = (evaluate(scenario, target.machine.name, record.observations, record.findings)
              if record.completed else None)
    judged = JudgedRun(record, result)
    write_judgement(judged)
    write_run_facts(target, scenario, evidence, started, time.monotonic() - clock)  # for the page
    keep_charts(evidence)
    return judged


def write_judgement(judged: JudgedRun) -> None:
    evidence = Evidence(judged.record.evidence)
    if judged.result is not None:
        evidence.write_json(files.VERDICTS, [asdict(v) for v in judged.result.verdicts])
    text = "passed" if judged.passed else shown(failure_report(judged.record, judged.result))
    evidence.write(files.REPORT, text + "\n")
