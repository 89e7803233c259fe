"""Run one scenario on one machine: boot, run the planned commands through
the agent, collect observations, keep the evidence. No judging here.

The guest is anything with the small GuestPort interface (ready, run a
command, stop), started by a StartGuest function: QEMU in real runs
(sandbox/guest/qemu.py), a replayed transcript in the unit tests.
"""
from __future__ import annotations

import signal
import time
import traceback
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sandbox.base.machines import Machine
from sandbox.base.timefmt import format_time
from sandbox.build.disk_images import prepare_images
from sandbox.guest import klog, protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest, Guest, GuestDied, GuestHung
from sandbox.run.observations import Observation, ProbeOutputError, parse_probe_output, program_observation
from sandbox.run.plan import PROGRAM, GuestCommand, mount_commands, plan, userland_commands
from sandbox.run.record import (COMPLETED, ERROR, INTERRUPTED, STEP_FAILED, CommandRecord, RunRecord,
                                write_evidence)
from sandbox.scenario.model import Scenario

BOOT_SECONDS = 60.0  # boot-to-agent-ready, within the scenario's deadline


class GuestPort(Protocol):
    """The guest as the runner sees it."""

    boot_seconds: float
    boot_phases: Mapping[str, float]  # guest.qemu BOOT_PHASES: wall seconds each, as far as seen

    def wait_ready(self, deadline: Deadline) -> str: ...

    def run(self, command: str, deadline: Deadline) -> protocol.Reply: ...

    def stop(self) -> object: ...


StartGuest = Callable[[BootRequest], AbstractContextManager[GuestPort]]


@dataclass(frozen=True)
class Boot:
    """What one run boots: the machine, its kernel and initramfs, the accelerator."""

    machine: Machine
    kernel: Path
    initramfs: Path  # with the userlands' archives appended, when the scenario runs programs
    accel: str
    userlands: tuple[dict[str, object], ...] = ()  # name, suite, arch, package versions: for run.json
    memory_mib: int | None = None  # more than the machine's default, for userlands


# What went wrong, by exception type: the guest's fate, not the scenario's.
FAILURE_OUTCOMES: dict[type, str] = {
    GuestHung: "hang",
    GuestDied: "guest-exited",
    protocol.ProtocolError: "agent-error",
    ProbeOutputError: "agent-error",  # probe output that is not JSON lines
}
GUEST_FAILURES = tuple(FAILURE_OUTCOMES)


def classify(failure: BaseException | None, findings: tuple[klog.Finding, ...],
             step_error: str = "") -> tuple[str, str]:
    """(outcome, detail) of a run: a panic, else an oops, on the console
    explains any failure."""
    if failure is None:
        return (STEP_FAILED, step_error) if step_error else (COMPLETED, "")
    fatal = klog.fatal(findings)
    if fatal is not None:
        return fatal.kind, str(fatal)
    outcome = next(o for kind, o in FAILURE_OUTCOMES.items() if isinstance(failure, kind))
    return outcome, str(failure)


def _probe_output(command: GuestCommand, record: CommandRecord, scenario: str, machine: str) -> list[Observation]:
    return parse_probe_output(record.stdout, scenario=scenario, machine=machine, phase=command.phase)


def _program_output(command: GuestCommand, record: CommandRecord, scenario: str, machine: str) -> list[Observation]:
    return [program_observation(scenario=scenario, machine=machine, phase=command.phase,
                                userland=command.flavour, call=command.call, exit_code=record.exit_code,
                                stdout=record.stdout, stderr=record.stderr, time_pattern=command.time_pattern)]


OUTPUTS: dict[str, Callable[[GuestCommand, CommandRecord, str, str], list[Observation]]] = {
    "probe-json": _probe_output,  # a probe's JSON lines
    PROGRAM: _program_output,  # a real program: its exit status and output
}
"""How a command's output becomes observations, by GuestCommand.output."""


def _step_error(command: GuestCommand, record: CommandRecord) -> str:
    output = " | ".join(part for part in (record.stderr.strip(), record.stdout.strip()) if part)
    return f"{command.phase} ({command.shell}) exited {record.exit_code}: {output or 'no output'}"


@dataclass
class _Progress:
    """What the run has gathered so far; kept whatever happens."""

    release: str = ""
    boot_seconds: float = 0.0
    boot_phases: Mapping[str, float] = field(default_factory=dict)
    step_error: str = ""
    dmesg: str | None = None

    def __post_init__(self) -> None:
        self.observations: list[Observation] = []
        self.records: list[CommandRecord] = []


def _drive(guest: GuestPort, commands: list[GuestCommand], scenario: str, machine: str,
           deadline: Deadline, progress: _Progress) -> None:
    progress.release = guest.wait_ready(deadline.within(BOOT_SECONDS))
    progress.boot_seconds = guest.boot_seconds
    progress.boot_phases = guest.boot_phases
    for command in commands:
        sent = time.monotonic()
        reply = guest.run(command.shell, deadline)
        record = CommandRecord(command, reply.exit_code, reply.text,
                               reply.stderr.decode("utf-8", "replace"), time.monotonic() - sent)
        progress.records.append(record)
        if command.must_succeed and reply.exit_code != 0:  # its output is the error, not observations
            progress.step_error = _step_error(command, record)
            break
        progress.observations += OUTPUTS[command.output](command, record, scenario, machine)
    progress.dmesg = guest.run("dmesg", deadline).text


def _aborted(err: BaseException) -> tuple[str, str]:
    """(outcome, detail) of a run that an exception of ours ended: a signal
    (KeyboardInterrupt, sandbox.base.errors.Interrupted), or a bug."""
    if isinstance(err, KeyboardInterrupt):
        signum = getattr(err, "signum", signal.SIGINT)
        return INTERRUPTED, f"interrupted by {signal.Signals(signum).name}"
    return ERROR, f"{type(err).__name__}: {err}"


def _read_console(path: Path) -> list[str]:
    try:
        return path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:  # QEMU stopped before it made the file
        return []


def run_scenario(scenario: Scenario, boot: Boot, evidence: Path,
                 start: StartGuest = Guest, on_abort: Callable[[RunRecord], None] | None = None) -> RunRecord:
    """Boot, run every step, and always leave the evidence in `evidence`.

    A guest failure (hang, panic, oops, QEMU gone) is an outcome. Anything
    else that ends the run (a signal, a bug of ours) is recorded too, as
    `interrupted` or `error`, with what the run gathered; on_abort gets that
    record (to write its report) before the exception goes on."""
    evidence.mkdir(parents=True, exist_ok=True)
    progress = _Progress()
    failure: BaseException | None = None
    aborted: BaseException | None = None
    try:
        disks = prepare_images(scenario.disks, evidence)  # mkfs on the host, cached
        request = BootRequest(boot.machine, boot.kernel, boot.initramfs, format_time(scenario.rtc),
                              boot.accel, evidence, append=scenario.kernel_args, disks=disks,
                              memory_mib=boot.memory_mib, warp=scenario.warp)
        commands = (mount_commands(scenario.disks) + userland_commands(scenario.userlands)
                    + plan(scenario.steps, scenario.machines[boot.machine.name], boot.machine.tools_flavour))
        with start(request) as guest:
            try:
                _drive(guest, commands, scenario.name, boot.machine.name,
                       Deadline(float(scenario.timeout)), progress)
            except GUEST_FAILURES as err:
                failure = err
            finally:
                guest.stop()
    except GUEST_FAILURES as err:  # QEMU did not start
        failure = err
    except BaseException as err:  # noqa: BLE001 - recorded, then raised again below
        aborted = err
        (evidence / "traceback.txt").write_text("".join(traceback.format_exception(err)))
    console = _read_console(evidence / "console.log")
    # dmesg from the agent; when the guest died first, the kernel lines of the console
    kernel_log = progress.dmesg if progress.dmesg is not None else "\n".join(klog.kernel_lines(console)) + "\n"
    (evidence / "kernel.log").write_text(kernel_log)
    findings = tuple(klog.scan_logs(console, kernel_log.splitlines()))
    outcome, detail = (_aborted(aborted) if aborted is not None
                       else classify(failure, findings, progress.step_error))
    record = RunRecord(scenario.name, boot.machine.name, boot.accel, outcome, detail, progress.release,
                       progress.boot_seconds, tuple(progress.observations), tuple(progress.records),
                       findings, evidence, boot.userlands, scenario.warp, progress.boot_phases)
    write_evidence(record)
    if aborted is not None:
        if on_abort is not None:
            on_abort(record)
        raise aborted
    return record
