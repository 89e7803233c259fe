"""A whole system's boot driven through the drive loop (sandbox/run/drive.py)
against a replayed guest: the phases in order, each command within its share
of the deadline, what was seen kept whatever ends the boot."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace, TracebackType
from typing import Any

import pytest

from sandbox.base.timefmt import parse_time
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import GuestHung
from sandbox.system import boot as system_boot
from sandbox.system import phases
from sandbox.system.rehearse import observed_from

START = "2038-01-19T02:30:00"
END = parse_time("2038-01-19T04:00:00Z")
JOURNAL = "/proc/1/root/var/log/journal/m/system.journal"


class SystemGuest:
    """A systemd system whose clock moves as the agent's tools say."""

    hang_on = ""

    def __init__(self, request: object) -> None:
        self.now = parse_time(f"{START}Z")
        self.sent: list[tuple[str, float]] = []
        self.boot_seconds, self.boot_phases = 1.5, {"qemu": 0.5}

    def __enter__(self) -> "SystemGuest":
        SystemGuest.last = self
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        pass

    def stop(self) -> None:
        pass

    def wait_ready(self, deadline: Deadline) -> str:
        self.sent.append(("READY", deadline.seconds))
        return "6.1.0-y2038"

    def _answer(self, command: str) -> bytes:
        if command == phases.INIT_KIND:
            return b"systemd\n"
        if command == phases.SETTLE_SYSTEMD:
            return b"running\n"
        if command == phases.CLOCK:
            return json.dumps({"realtime_before": self.now}).encode()
        if command.startswith("/tools/clockstep wait "):
            self.now += int(float(command.split()[-1]))
            return json.dumps({"realtime_after": self.now}).encode()
        if command == phases.LIST_JOURNALS:
            return f"{JOURNAL}\n".encode()
        if command == f"cat {JOURNAL}":
            return b"\x00LPKSHHRH\xff"
        return f"answer to {command[:20]}\n".encode()

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        self.sent.append((command, deadline.seconds))
        if self.hang_on and command == self.hang_on:
            raise GuestHung("no answer from the guest agent within 600s")
        return protocol.Reply(len(self.sent), self._answer(command), b"", 0)

    last: "SystemGuest"


@pytest.fixture
def guest(monkeypatch: pytest.MonkeyPatch) -> type[SystemGuest]:
    monkeypatch.setattr(system_boot, "Guest", SystemGuest)
    monkeypatch.setattr(SystemGuest, "hang_on", "")
    return SystemGuest


def drive(tmp_path: Path) -> system_boot.Seen:
    boot: Any = SimpleNamespace(rtc=START, request=lambda: None)
    return system_boot.drive(boot, END, tmp_path)


def test_a_night_goes_through_every_phase_in_order(guest: type[SystemGuest], tmp_path: Path) -> None:
    seen = drive(tmp_path)
    assert (seen.outcome, seen.init, seen.settled) == ("completed", "systemd", "running")
    start = parse_time(f"{START}Z")
    assert (seen.start_clock, seen.night_end, seen.end_clock) == (start, END, END)
    assert [look["at"] for look in seen.timeline] == [start, *phases.marks(start, END)]
    assert seen.journal_files == {JOURNAL: b"\x00LPKSHHRH\xff"}  # the bytes, not their text
    assert set(seen.looks) == {look.name for look in phases.FINAL_LOOKS}
    sent = [command for command, _ in guest.last.sent]
    assert sent[:6] == ["READY", phases.INIT_KIND, phases.SETTLE_SYSTEMD, phases.CLOCK, phases.UNITS, phases.STATES]
    assert sent[-1] == f"cat {JOURNAL}"


def test_each_command_waits_within_its_share_of_the_deadline(guest: type[SystemGuest], tmp_path: Path) -> None:
    drive(tmp_path)
    waits = dict(guest.last.sent)
    assert waits["READY"] <= system_boot.READY_SECONDS
    assert waits[phases.SETTLE_SYSTEMD] <= system_boot.SETTLE_SECONDS
    assert waits[phases.UNITS] <= system_boot.LOOK_SECONDS
    assert all(s <= system_boot.NIGHT_SECONDS for c, s in guest.last.sent if c.startswith("/tools/clockstep"))


def test_a_system_that_never_settles_is_a_hang_with_what_was_seen(guest: type[SystemGuest], tmp_path: Path) -> None:
    guest.hang_on = phases.SETTLE_SYSTEMD
    seen = drive(tmp_path)
    assert seen.outcome == "hang" and seen.init == "systemd"
    assert seen.failure == "the system never settled: no answer from the guest agent within 600s"


def test_what_was_seen_is_written_and_read_back(guest: type[SystemGuest], tmp_path: Path) -> None:
    seen = drive(tmp_path)
    evidence = tmp_path / "ev"
    system_boot.write_evidence(seen, evidence)
    names = {p.relative_to(evidence).as_posix() for p in evidence.rglob("*") if p.is_file()}
    assert names == {"units-before.txt", "units-after.txt", "timeline.json", "kernel.log", "boot.json",
                     "journal/system.journal", *(look.name for look in phases.FINAL_LOOKS)}
    assert (evidence / "journal" / "system.journal").read_bytes() == seen.journal_files[JOURNAL]
    assert json.loads((evidence / "boot.json").read_text())["outcome"] == "completed"
    (evidence / "journal.json").write_text("")
    observed = observed_from(evidence)
    assert (observed.start, observed.end, observed.timeline) == (seen.start_clock, seen.end_clock, seen.timeline)
