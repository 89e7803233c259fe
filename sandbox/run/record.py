"""What happened in one run, as data, and the evidence files it leaves.

A RunRecord is what the runner hands on: the outcome, the commands and their
exit codes, the observations and the kernel's findings. Pure except for
write_evidence, which writes observations.jsonl and run.json.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.guest.klog import Finding
from sandbox.run.observations import Observation
from sandbox.run.plan import GuestCommand

COMPLETED = "completed"
STEP_FAILED = "step-failed"
INTERRUPTED = "interrupted"
ERROR = "error"
OUTCOMES: dict[str, str] = {
    COMPLETED: "every command ran; the observations are judged",
    STEP_FAILED: "a command that must succeed (a clock move, a sysctl, a mount) failed; "
                 "the guest is fine, the scenario cannot go on",
    "panic": "the kernel panicked",
    "oops": "the kernel oopsed; the run was stopped at once (the console is watched)",
    "hang": "the guest agent did not answer before the deadline",
    "guest-exited": "QEMU exited while the runner waited",
    "agent-error": "the agent's framing or a probe's output was not understood",
    ERROR: "the harness failed (a bug, or a host problem such as a full disk); traceback.txt says where",
    INTERRUPTED: "a signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, ...: sandbox/app/signals.py) stopped "
                 "the run, while the guest ran or while it was judged; QEMU was stopped with it",
}
"""Every outcome a run can have, and what it means."""
INFRASTRUCTURE = frozenset(OUTCOMES) - {COMPLETED, STEP_FAILED, INTERRUPTED}
"""The outcomes that are the machine's or the harness's fault, not the scenario's."""


class Command(Protocol):
    """What the drive loop sends: a scenario's GuestCommand, the runtime
    audit's AuditCommand, a time server's set-up."""

    @property
    def shell(self) -> str: ...

    @property
    def must_succeed(self) -> bool: ...


C = TypeVar("C", bound=Command)


@dataclass(frozen=True)
class CommandRecord(Generic[C]):
    """One command the guest ran: what it was, its exit code and output."""

    command: C
    exit_code: int
    stdout: str
    stderr: str
    seconds: float = 0.0  # wall time from sending the command to its reply


@dataclass(frozen=True)
class RunRecord:
    """What happened in the guest; only a completed run is judged."""

    scenario: str
    machine: str
    accel: str
    outcome: str
    detail: str
    release: str
    boot_seconds: float
    observations: tuple[Observation, ...]
    commands: tuple[CommandRecord[GuestCommand], ...]
    findings: tuple[Finding, ...]
    evidence: Path
    userlands: tuple[dict[str, object], ...] = ()  # the Debian userlands booted, with package versions
    warp: bool = False  # booted with time warp (QEMU -icount, sleep=off)
    boot_phases: Mapping[str, float] = field(default_factory=dict)  # guest.qemu BOOT_PHASES: seconds each
    time_server: Mapping[str, object] = field(default_factory=dict)  # the NTP server guest: what it ran

    @property
    def completed(self) -> bool:
        return self.outcome == COMPLETED

    @property
    def infrastructure_failed(self) -> bool:
        return self.outcome in INFRASTRUCTURE


def write_evidence(record: RunRecord, judging: bool = False) -> None:
    """observations.jsonl and run.json beside the console and kernel logs.
    judging: the run is judged next; run.json says `judging` with this
    process until write_run replaces it (a process killed meanwhile reads
    back as killed, not as a completed run without verdicts)."""
    folder = Evidence(record.evidence)
    folder.write(files.OBSERVATIONS, "".join(json.dumps(o.to_record()) + "\n" for o in record.observations))
    write_run(record, judging)
    server_log = record.time_server.get("chronyd_log")
    if server_log:  # the time server's chronyd, beside its console (sandbox/run/runner.py)
        folder.server().write(files.CHRONYD_LOG, str(server_log))


def write_run(record: RunRecord, judging: bool = False) -> None:
    """run.json alone: the run's outcome (and, while judging, this process)."""
    summary = {
        "scenario": record.scenario, "machine": record.machine, "accel": record.accel, "warp": record.warp,
        "outcome": record.outcome, "detail": record.detail, "release": record.release,
        "boot_seconds": round(record.boot_seconds, 2),
        "boot_phases": {name: round(seconds, 3) for name, seconds in record.boot_phases.items()},
        "commands": [{"step": c.command.step, "phase": c.command.phase, "shell": c.command.shell,
                      "exit_code": c.exit_code, "seconds": round(c.seconds, 3),
                      "stdout": c.stdout, "stderr": c.stderr}
                     for c in record.commands],
        "findings": [str(f) for f in record.findings],
        "userlands": list(record.userlands),
        **({"time_server": dict(record.time_server)} if record.time_server else {}),
        **(files.this_process(files.JUDGING) if judging else {}),
    }
    Evidence(record.evidence).write_json(files.RUN, summary)  # last: its outcome replaces `running`
