"""Run one scenario on one machine: boot, run the planned commands through
the agent, collect observations, keep the evidence. No judging here.

The guest is anything with the small GuestPort interface (ready, run a
command, stop), started by a StartGuest function: QEMU in real runs
(sandbox/guest/qemu.py), a replayed transcript in the unit tests.

A scenario with a [time-server] boots a second guest first, linked to the
first by one Ethernet link (two UNIX datagram sockets in a temporary folder),
and has it serve NTP (sandbox/run/chrony.py) before the scenario's guest
runs its steps; its evidence goes to <evidence>/time-server/, and it ends
with the run, whatever happens.
"""
from __future__ import annotations

import signal
import tempfile
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.base.timefmt import format_time
from sandbox.guest import klog, protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest, Guest, GuestDied, GuestHung, Link, MemoryRegion
from sandbox.run import chrony, drive
from sandbox.run.drive import Driven, GuestPort
from sandbox.run.observations import Observation, ProbeOutputError, parse_probe_output, program_observation
from sandbox.run.plan import (CHRONY, PROGRAM, GuestCommand, mount_commands, network_commands, plan,
                              server_commands, userland_commands)
from sandbox.run.record import (COMPLETED, ERROR, INTERRUPTED, STEP_FAILED, CommandRecord, RunRecord,
                                write_evidence)
from sandbox.scenario.model import NTP_CALL, NTP_PROBE, Scenario, TimeServer

StartGuest = Callable[[BootRequest], AbstractContextManager[GuestPort]]


# What went wrong, by exception type: the guest's fate, not the scenario's.
FAILURE_OUTCOMES: dict[type[BaseException], str] = {
    GuestHung: "hang",
    GuestDied: "guest-exited",
    protocol.ProtocolError: "agent-error",
    ProbeOutputError: "agent-error",  # probe output that is not JSON lines
}
GUEST_FAILURES: tuple[type[BaseException], ...] = tuple(FAILURE_OUTCOMES)


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


def _chrony_output(command: GuestCommand, record: CommandRecord, scenario: str, machine: str) -> list[Observation]:
    return [Observation(scenario, machine, command.phase, NTP_PROBE, command.flavour, NTP_CALL,
                        chrony.sync_fields(record.stdout))]


PROBE_JSON = "probe-json"
OUTPUTS: dict[str, Callable[[GuestCommand, CommandRecord, str, str], list[Observation]]] = {
    PROBE_JSON: _probe_output,  # a probe's JSON lines
    PROGRAM: _program_output,  # a real program: its exit status and output
    CHRONY: _chrony_output,  # an ntp-sync step: chronyd's log and chronyc's answers
}
"""How a command's output becomes observations, by GuestCommand.output."""


SHELL_SHOWN = 120  # characters of a failed command's shell in the run's detail (run.json has it whole)


def _step_error(command: GuestCommand, record: CommandRecord) -> str:
    output = " | ".join(part for part in (record.stderr.strip(), record.stdout.strip()) if part)
    shell = command.shell.strip().splitlines()[0] if command.shell.strip() else ""
    if len(shell) > SHELL_SHOWN or "\n" in command.shell.strip():
        shell = shell[:SHELL_SHOWN - 1] + "…"
    return f"{command.phase} ({shell}) exited {record.exit_code}: {output or 'no output'}"


NOT_RUN_EXITS = (126, 127)
"""The shell's "found but could not run" and "not found" (E2BIG for 100,000 arguments, say)."""


def did_not_run(command: GuestCommand, record: CommandRecord[GuestCommand]) -> bool:
    """A probe that exited 126 or 127 without printing anything never ran:
    a failed step, not a run with nothing to judge."""
    return (command.output == PROBE_JSON and record.exit_code in NOT_RUN_EXITS
            and not record.stdout.strip())


@dataclass
class _Progress(Driven[GuestCommand]):
    """What the run has gathered so far; kept whatever happens."""

    step_error: str = ""
    dmesg: str | None = None
    observations: list[Observation] = field(default_factory=list)


def _drive(guest: GuestPort, commands: list[GuestCommand], scenario: str, machine: str,
           deadline: Deadline, progress: _Progress) -> None:
    def observe(record: CommandRecord[GuestCommand]) -> None:
        progress.observations.extend(OUTPUTS[record.command.output](record.command, record, scenario, machine))

    def failed(record: CommandRecord[GuestCommand]) -> bool:
        return drive.must_have_succeeded(record) or did_not_run(record.command, record)

    drive.boot(guest, deadline, progress)
    drive.run_commands(guest, commands, deadline, progress, observe, failed)
    if progress.failed is not None:  # its output is the error, not observations
        progress.step_error = _step_error(progress.failed.command, progress.failed)
    progress.dmesg = guest.run("dmesg", deadline).text


SERVER_FOLDER = files.TIME_SERVER


@dataclass
class _ServerProgress:
    """What the time server guest did; kept whatever happens."""

    server: TimeServer
    disk_regions: Mapping[str, MemoryRegion] = field(default_factory=dict)  # its boot's memory disks
    driven: Driven[GuestCommand] = field(default_factory=Driven)
    log: str = ""

    def summary(self) -> dict[str, object]:
        return {"time": format_time(self.server.time), "userland": self.server.userland,
                "machine": self.server.machine, "release": self.driven.release,
                "boot_seconds": round(self.driven.boot_seconds, 2), "evidence": SERVER_FOLDER,
                "commands": [{"phase": r.command.phase, "shell": r.command.shell, "exit_code": r.exit_code,
                              "stdout": r.stdout, "stderr": r.stderr} for r in self.driven.records],
                "chronyd_log": self.log}


def _serve(server: GuestPort, deadline: Deadline, progress: _ServerProgress) -> str:
    """Boot the time server and start chronyd there. Returns "" or, when a
    set-up command failed, the step error; the server guest's own failures
    (hang, death) are raised, their message starting with "time server"."""
    try:
        drive.boot(server, deadline, progress.driven)
        drive.run_commands(server, server_commands(progress.server, progress.disk_regions), deadline,
                           progress.driven)  # every one must succeed
        failed = progress.driven.failed
        if failed is not None:
            return f"time server: {_step_error(failed.command, failed)}"
    except (GuestHung, GuestDied, protocol.ProtocolError) as err:
        raise type(err)(f"time server: {err}") from None
    return ""


def _server_log(server: GuestPort, progress: _ServerProgress) -> None:
    """chronyd's log of the server, when the server still answers."""
    try:
        progress.log = server.run(chrony.log_shell(progress.server.userland), Deadline(10.0)).text
    except GUEST_FAILURES:
        pass


@contextmanager
def _links() -> Iterator[tuple[Link, Link]]:
    """(the scenario guest's end, the server's end) of one Ethernet link: two
    UNIX datagram sockets in a short temporary path (a socket path has at
    most 107 bytes), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="y2038-link-") as folder:
        client, server = Path(folder) / "client", Path(folder) / "server"
        yield Link(client, server, chrony.CLIENT_MAC), Link(server, client, chrony.SERVER_MAC)


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


def run_scenario(scenario: Scenario, boot: BootRequest,
                 start: StartGuest = Guest, on_abort: Callable[[RunRecord], None] | None = None,
                 server_boot: BootRequest | None = None, judged_next: bool = False) -> RunRecord:
    """Boot, run every step, and always leave the evidence in `evidence`.

    A guest failure (hang, panic, oops, QEMU gone) is an outcome. Anything
    else that ends the run (a signal, a bug of ours) is recorded too, as
    `interrupted` or `error`, with what the run gathered; on_abort gets that
    record (to write its report) before the exception goes on. `boot` is
    complete (sandbox/run/prepare.py: nothing builds here); a scenario with a
    [time-server] needs `server_boot`, the server guest's boot. The evidence
    goes to boot.evidence. judged_next: a completed run's run.json says
    `judging` with this process until the caller writes its verdicts
    (sandbox/app/jobs.py)."""
    evidence = boot.evidence
    folder = Evidence(evidence)
    folder.mark_running(scenario.name, boot.machine.name)
    progress = _Progress()
    server = (_ServerProgress(scenario.time_server, server_boot.disk_regions() if server_boot else {})
              if scenario.time_server is not None else None)
    failure: BaseException | None = None
    aborted: BaseException | None = None
    try:
        commands = (mount_commands(scenario.disks) + userland_commands(scenario.userlands, boot.disk_regions())
                    + network_commands(scenario.time_server)
                    + plan(scenario.steps, scenario.machines[boot.machine.name], boot.machine.toolchain.tools_flavour))
        deadline = Deadline(float(scenario.timeout))
        with ExitStack() as guests:
            client_link, server_link = guests.enter_context(_links()) if server else (None, None)
            server_guest = None
            if server is not None:
                if server_boot is None:
                    raise ValueError(f"scenario {scenario.name} has a [time-server]: run_scenario needs its boot")
                server_guest = guests.enter_context(start(replace(server_boot, link=server_link)))
            guest = guests.enter_context(start(replace(boot, link=client_link)))
            try:
                if server_guest is not None and server is not None:
                    progress.step_error = _serve(server_guest, deadline, server)
                if not progress.step_error:
                    _drive(guest, commands, scenario.name, boot.machine.name, deadline, progress)
            except GUEST_FAILURES as err:
                failure = err
            finally:
                if server_guest is not None and server is not None:
                    _server_log(server_guest, server)
                    server_guest.stop()
                guest.stop()
    except GUEST_FAILURES as err:  # QEMU did not start
        failure = err
    except BaseException as err:  # noqa: BLE001 - recorded, then raised again below
        aborted = err
        folder.write(files.TRACEBACK, "".join(traceback.format_exception(err)))
    console = _read_console(folder.console)
    # dmesg from the agent; when the guest died first, the kernel lines of the console
    kernel_log = progress.dmesg if progress.dmesg is not None else "\n".join(klog.kernel_lines(console)) + "\n"
    folder.write(files.KERNEL_LOG, kernel_log)
    findings = tuple(klog.scan_logs(console, kernel_log.splitlines()))
    outcome, detail = (_aborted(aborted) if aborted is not None
                       else classify(failure, findings, progress.step_error))
    record = RunRecord(scenario.name, boot.machine.name, boot.accel, outcome, detail, progress.release,
                       progress.boot_seconds, tuple(progress.observations), tuple(progress.records),
                       findings, evidence, boot.userlands, scenario.warp, progress.boot_phases,
                       server.summary() if server is not None else {})
    write_evidence(record, judging=judged_next and record.completed)
    if aborted is not None:
        if on_abort is not None:
            on_abort(record)
        raise aborted
    return record
