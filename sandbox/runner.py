"""Run one scenario on one machine: boot, run the steps through the agent,
collect observations, keep the evidence. No evaluation here.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import klog, protocol
from .deadline import Deadline
from .disks import Disk, mount_shell, prepare_images
from .machines import Machine
from .observations import Observation, parse_probe_output
from .qemu import BootRequest, Guest, GuestDied, GuestHung
from .scenario import HwclockStep, ProbeStep, Scenario, SetClockStep, Step, SysctlStep, WaitStep
from .timefmt import format_time

BOOT_SECONDS = 60.0  # boot-to-agent-ready, within the scenario's deadline
DEFAULT_TOOLS_FLAVOUR = "native64"  # x86_64's; a machine names its own (Machine.tools_flavour)


@dataclass(frozen=True)
class GuestCommand:
    """One command for the guest agent, and what its output means."""

    step: int
    phase: str
    probe: str
    flavour: str
    shell: str
    must_succeed: bool  # a failing set-clock breaks the run; a probe's errno does not


@dataclass(frozen=True)
class CommandRecord:
    command: GuestCommand
    exit_code: int
    stderr: str


@dataclass(frozen=True)
class RunRecord:
    """What happened in the guest. outcome: completed, panic, hang, guest-exited,
    agent-error or step-error; only a completed run is evaluated."""

    scenario: str
    machine: str
    accel: str
    outcome: str
    detail: str
    release: str
    boot_seconds: float
    observations: tuple[Observation, ...]
    commands: tuple[CommandRecord, ...]
    findings: tuple[klog.Finding, ...]
    evidence: Path

    @property
    def completed(self) -> bool:
        return self.outcome == "completed"


# -- planning: steps to guest commands (pure) ----------------------------
def _probe_commands(step: ProbeStep, tools_flavour: str) -> list[GuestCommand]:
    args = "".join(f" {shlex.quote(a)}" for a in step.args)
    return [command
            for flavour in step.flavours
            for command in (*_reset_clock(step, flavour),
                            GuestCommand(step.index, step.phase, step.probe, flavour,
                                         f"/probes/{flavour}/{step.probe}{args}", False))]


def _reset_clock(step: ProbeStep, flavour: str) -> list[GuestCommand]:
    """reset-clock: settimeofday (from the tools) right before one flavour runs.
    The command carries the flavour it prepares, so it is left out with it."""
    if step.reset_clock is None:
        return []
    return [GuestCommand(step.index, f"step{step.index}-reset-clock", "settime", flavour,
                         f"/tools/settime {step.reset_clock} settimeofday", True)]


def _set_clock_commands(step: SetClockStep, tools_flavour: str) -> list[GuestCommand]:
    return [GuestCommand(step.index, f"step{step.index}-set-clock", "settime", tools_flavour,
                         f"/tools/settime {step.time} {step.via}", True)]


HWCLOCK = "/usr/sbin/hwclock"  # util-linux's, from [host-binaries] in rootfs/manifest.toml


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
    """Write the setting, then read it back as one observation line:
    {"probe":"sysctl","flavour":...,"call":"sysctl","name":...,"value":...}.
    The parser allowed only [A-Za-z0-9_.:+-] in both, so no JSON escaping."""
    line = (f'{{"probe":"sysctl","flavour":"{tools_flavour}","call":"sysctl",'
            f'"name":"{step.name}","value":"%s"}}\\n')
    shell = (f"printf '%s\\n' {shlex.quote(step.value)} > {step.path}"
             f" && printf '{line}' \"$(cat {step.path})\"")
    return [GuestCommand(step.index, f"step{step.index}-sysctl", "sysctl", tools_flavour, shell, True)]


PLANNERS: dict[type, Callable[..., list[GuestCommand]]] = {
    ProbeStep: _probe_commands,
    SetClockStep: _set_clock_commands,
    HwclockStep: _hwclock_commands,
    WaitStep: _wait_commands,
    SysctlStep: _sysctl_commands,
}


def mount_commands(disks: tuple[Disk, ...]) -> list[GuestCommand]:
    """Mount every [[disk]] at /mnt/<name> before the first step (busybox mount);
    each must succeed. Step -1: they belong to no step."""
    return [GuestCommand(-1, f"mount-{disk.name}", "mount", "busybox", mount_shell(disk), True)
            for disk in disks]


def plan(steps: tuple[Step, ...], flavours: tuple[str, ...],
         tools_flavour: str = DEFAULT_TOOLS_FLAVOUR) -> list[GuestCommand]:
    """The guest commands for the steps, leaving out flavours the machine lacks.
    Planners get the flavour the machine's tools (/tools/*) are built in."""
    commands = [c for s in steps for c in PLANNERS[type(s)](s, tools_flavour)]
    return [c for c in commands if c.flavour in flavours]


# -- running ---------------------------------------------------------------
def run_scenario(scenario: Scenario, machine: Machine, kernel: Path, initramfs: Path,
                 accel: str, evidence: Path) -> RunRecord:
    """Boot, run every step, and always leave the evidence in `evidence`."""
    evidence.mkdir(parents=True, exist_ok=True)
    disks = prepare_images(scenario.disks, evidence)  # mkfs on the host, cached
    request = BootRequest(machine, kernel, initramfs, format_time(scenario.rtc), accel, evidence,
                          append=scenario.kernel_args, disks=disks)
    commands = (mount_commands(scenario.disks)
                + plan(scenario.steps, scenario.machines[machine.name], machine.tools_flavour))
    deadline = Deadline(float(scenario.timeout))
    observations: list[Observation] = []
    records: list[CommandRecord] = []
    failure: BaseException | None = None
    detail, release, boot_seconds = "", "", 0.0
    with Guest(request) as guest:
        try:
            release = guest.wait_ready(deadline.within(BOOT_SECONDS))
            boot_seconds = guest.boot_seconds
            for command in commands:
                reply = guest.run(command.shell, deadline)
                records.append(CommandRecord(command, reply.exit_code,
                                             reply.stderr.decode("utf-8", "replace")))
                observations += parse_probe_output(
                    reply.text, scenario=scenario.name, arch=machine.name, phase=command.phase)
                if command.must_succeed and reply.exit_code != 0:
                    detail = (f"{command.phase} ({command.shell}) exited "
                              f"{reply.exit_code}: {records[-1].stderr.strip()}")
                    break
            _save_dmesg(guest, deadline, evidence)
        except (GuestHung, GuestDied, protocol.ProtocolError, ValueError) as err:
            failure = err
        finally:
            guest.stop()
    console = (evidence / "console.log").read_text("utf-8", "replace").splitlines()
    if not (evidence / "kernel.log").exists():
        (evidence / "kernel.log").write_text("\n".join(klog.kernel_lines(console)) + "\n")
    findings = tuple(klog.scan(console))
    outcome, detail = classify(failure, findings, detail)
    record = RunRecord(scenario.name, machine.name, accel, outcome, detail, release,
                       boot_seconds, tuple(observations), tuple(records), findings, evidence)
    write_evidence(record)
    return record


# What went wrong, by exception type: the guest's fate, not the scenario's.
FAILURE_OUTCOMES: dict[type, str] = {
    GuestHung: "hang",
    GuestDied: "guest-exited",
    protocol.ProtocolError: "agent-error",
    ValueError: "agent-error",  # probe output that is not JSON lines
}


def classify(failure: BaseException | None, findings: tuple[klog.Finding, ...],
             step_error: str = "") -> tuple[str, str]:
    """(outcome, detail) of a run: a panic on the console explains any failure."""
    if failure is None:
        return ("step-error", step_error) if step_error else ("completed", "")
    if klog.panicked(findings):
        return "panic", next(str(f) for f in findings if f.kind in klog.FATAL)
    outcome = next(o for kind, o in FAILURE_OUTCOMES.items() if isinstance(failure, kind))
    return outcome, str(failure)


def _save_dmesg(guest: Guest, deadline: Deadline, evidence: Path) -> None:
    reply = guest.run("dmesg", deadline)
    (evidence / "kernel.log").write_text(reply.text)


def write_evidence(record: RunRecord) -> None:
    """observations.jsonl and run.json beside the console and kernel logs."""
    with (record.evidence / "observations.jsonl").open("w") as out:
        for observation in record.observations:
            out.write(json.dumps(observation.to_record()) + "\n")
    summary = {
        "scenario": record.scenario, "machine": record.machine, "accel": record.accel,
        "outcome": record.outcome, "detail": record.detail, "release": record.release,
        "boot_seconds": round(record.boot_seconds, 2),
        "commands": [{"step": c.command.step, "shell": c.command.shell,
                      "exit_code": c.exit_code, "stderr": c.stderr} for c in record.commands],
        "findings": [str(f) for f in record.findings],
    }
    (record.evidence / "run.json").write_text(json.dumps(summary, indent=2) + "\n")
