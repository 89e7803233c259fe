"""A fake guest for the run loop: it replays a captured agent transcript and
console log instead of booting QEMU (sandbox.run.runner.GuestPort).

Each `run` answers with the next reply in the transcript, whatever the
command (the commands are recorded for the test to check). When the
transcript runs out, the guest ends as the capture did: `died` (QEMU exited:
a panic) or `hung` (the agent fell silent until the deadline).
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType

from sandbox.base.evidence import Evidence
from sandbox.base.machines import MACHINES
from sandbox.base.timefmt import format_time
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest, GuestDied, GuestHung
from sandbox.scenario.model import Scenario

DATA = Path(__file__).resolve().parent.parent / "data"

BASE = BootRequest(MACHINES["x86_64"], Path("/k/vmlinux"), Path("/i/initramfs.cpio"), "", "tcg", Path())
"""A boot's machine and files, nothing built: the run loop never opens them."""


def prepared(scenario: Scenario, evidence: Path, base: BootRequest = BASE) -> BootRequest:
    """What sandbox/run/prepare.boot_of makes of a scenario on `base`'s
    machine and files (no userland, no disk image): its clock, kernel
    arguments, time warp and evidence folder."""
    return replace(base, rtc=format_time(scenario.rtc), evidence=evidence, append=scenario.kernel_args,
                   warp=scenario.warp)


def prepared_server(scenario: Scenario, evidence: Path, base: BootRequest) -> BootRequest:
    """sandbox/run/prepare.server_boot_of's request for the run in `evidence`."""
    assert scenario.time_server is not None
    return replace(base, rtc=format_time(scenario.time_server.time), evidence=Evidence(evidence).server().folder)


def frame(command_id: int, stdout: str, stderr: str = "", exit_code: int = 0) -> list[str]:
    """The agent's lines for one reply (the framing of rootfs/probes/agent.c)."""
    def b64(text: str) -> list[str]:
        encoded = base64.b64encode(text.encode()).decode()
        return [encoded[i:i + 76] for i in range(0, len(encoded), 76)]
    return [f"@@Y2038 BEGIN {command_id}", *b64(stdout), f"@@Y2038 STDERR {command_id}", *b64(stderr),
            f"@@Y2038 END {command_id} {exit_code}"]


@dataclass
class ReplayGuest:
    request: BootRequest
    transcript: list[str]
    console: str
    ending: str = "died"  # or "hung"
    boot_seconds: float = 0.25
    boot_phases: dict[str, float] = field(default_factory=lambda: {"qemu": 0.05, "kernel": 0.1})
    commands: list[str] = field(default_factory=list)
    stopped: bool = False

    def __post_init__(self) -> None:
        self._lines = iter(self.transcript)
        self._parser = protocol.FrameParser()

    def __enter__(self) -> ReplayGuest:
        evidence = self.request.evidence
        evidence.mkdir(parents=True, exist_ok=True)
        (evidence / "console.log").write_text(self.console)
        (evidence / "agent.log").write_text("\n".join(self.transcript) + "\n")
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _next_event(self) -> protocol.Event:
        for line in self._lines:
            event = self._parser.feed(line)
            if event is not None and not isinstance(event, protocol.Noise):
                return event
        if self.ending == "hung":
            raise GuestHung("no answer from the guest agent within the deadline (replayed)")
        raise GuestDied("QEMU exited (replayed)")

    def wait_ready(self, deadline: Deadline) -> str:
        while True:
            event = self._next_event()
            if isinstance(event, protocol.Ready):
                return event.release

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        self.commands.append(command)
        while True:
            event = self._next_event()
            if isinstance(event, protocol.Reply):
                return event

    def stop(self) -> None:
        self.stopped = True


def captured(name: str) -> tuple[list[str], str]:
    """(agent transcript lines, console text) of a capture in pytest/data."""
    def text(path: Path) -> str:  # as the real guest reads them: bad bytes replaced
        return path.read_bytes().decode("utf-8", "replace")
    agent = DATA / "agent" / f"{name}.log"
    console = DATA / "console" / f"{name}.log"
    return text(agent).splitlines(), text(console if console.exists() else DATA / "console" / "normal.log")
