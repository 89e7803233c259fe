"""The one drive loop of a guest, whatever booted it (a scenario, its time
server, the runtime audit, KUnit, a whole system): boot to the agent within
BOOT_SECONDS of the deadline, then each command under the same deadline,
recorded, until one that must succeed fails (run_commands), or one command
at a time whose answer decides the next (ask: a whole system's boot, its
configuration). Kernel findings come from the console watcher
(sandbox/guest/qemu.py) and the evidence; stopping is the caller's `with`.

The guest is anything with the small GuestPort interface: QEMU in real runs,
a replayed transcript in the unit tests.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol

from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.run.record import C, CommandRecord

BOOT_SECONDS = 60.0
"""Boot to agent ready, within the run's deadline."""


class GuestPort(Protocol):
    """The guest as the drive loop sees it."""

    @property
    def boot_seconds(self) -> float: ...

    @property
    def boot_phases(self) -> Mapping[str, float]: ...  # guest.qemu BOOT_PHASES: wall seconds each, as far as seen

    def wait_ready(self, deadline: Deadline) -> str: ...

    def run(self, command: str, deadline: Deadline) -> protocol.Reply: ...

    def stop(self) -> object: ...


@dataclass
class Driven(Generic[C]):
    """What a guest did so far; kept whatever ends the drive."""

    release: str = ""
    boot_seconds: float = 0.0
    boot_phases: Mapping[str, float] = field(default_factory=dict)
    records: list[CommandRecord[C]] = field(default_factory=list)
    failed: CommandRecord[C] | None = None  # the command that had to succeed and did not


def boot(guest: GuestPort, deadline: Deadline, driven: Driven[C], seconds: float = BOOT_SECONDS) -> None:
    """Wait for the agent, within `seconds` of the deadline."""
    driven.release = guest.wait_ready(deadline.within(seconds))
    driven.boot_seconds = guest.boot_seconds
    driven.boot_phases = guest.boot_phases


def must_have_succeeded(record: CommandRecord[C]) -> bool:
    """A command that must succeed (a clock move, a mount) and did not."""
    return record.command.must_succeed and record.exit_code != 0


def run_one(guest: GuestPort, command: C, deadline: Deadline, driven: Driven[C]) -> protocol.Reply:
    """One command under the deadline, recorded in `driven`; the guest's reply
    itself, for a caller that reads its bytes (a journal file, a tar)."""
    sent = time.monotonic()
    reply = guest.run(command.shell, deadline)
    driven.records.append(CommandRecord(command, reply.exit_code, reply.text, reply.stderr.decode("utf-8", "replace"),
                                        time.monotonic() - sent))
    return reply


@dataclass(frozen=True)
class Asked:
    """A command whose answer decides what is sent next (a whole system's
    boot: its init, its clock, each look), sent by ask()."""

    shell: str
    must_succeed: bool = False


def ask(guest: GuestPort, shell: str, deadline: Deadline, seconds: float, driven: Driven[Asked]) -> protocol.Reply:
    """One command within `seconds` of the run's deadline, recorded; its reply."""
    return run_one(guest, Asked(shell), deadline.within(seconds), driven)


def run_commands(guest: GuestPort, commands: Iterable[C], deadline: Deadline, driven: Driven[C],
                 each: Callable[[CommandRecord[C]], None] | None = None,
                 failed: Callable[[CommandRecord[C]], bool] = must_have_succeeded) -> None:
    """Each command in turn, recorded in `driven`; `each` gets every record of
    a command that did not fail. The first that `failed` (by default: one that
    must succeed and did not) stops the loop (driven.failed): its output is
    the error, not a result."""
    for command in commands:
        run_one(guest, command, deadline, driven)
        record = driven.records[-1]
        if failed(record):
            driven.failed = record
            return
        if each is not None:
            each(record)
