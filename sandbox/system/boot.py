"""One system rehearsal boot, driven through its phases in guest time:

    boot (RTC at the start) -> settled (`systemctl is-system-running --wait`,
    or a quiet minute under another init) -> baseline -> the night, run under
    time warp (not a step) with a look at each mark (sandbox/system/phases.py
    marks) -> optionally a step to a later horizon (`at`) and STEP_SECONDS
    run there -> the final looks and the journal files.

Everything seen is written to the evidence folder as it comes; nothing is
judged here (sandbox/system/facts.py, verdict.py). Whatever ends the boot
(a panic, an init that never settles, a hang), QEMU is stopped and what was
seen is kept: Outcome says how it ended, in one line.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.base.timefmt import format_time, parse_time
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest, GuestDied, GuestHung
from sandbox.run import drive as drive_loop
from sandbox.run.drive import Asked, Driven
from sandbox.system import phases
from sandbox.system.machine import SystemBoot

READY_SECONDS = 120.0
SETTLE_SECONDS = 600.0
NIGHT_SECONDS = 1800.0
LOOK_SECONDS = 300.0
STEP_SECONDS = 300
"""After a step to a later horizon, the clock runs this long (guest seconds,
under warp): every once-a-minute job is due there a few times."""


@dataclass
class Seen:
    """What the boot saw, as text, and its wall figures."""

    init: str = ""
    settled: str = ""  # is-system-running's answer, or "quiet"
    start_clock: int = 0  # guest seconds at the baseline
    end_clock: int = 0
    night_end: int = 0  # guest seconds when the night ended (the step's start, when there is one)
    step_at: int = 0  # the horizon stepped to (0: no step)
    units_before: str = ""
    units_after: str = ""
    timeline: list[dict[str, object]] = field(default_factory=list)  # {"at": seconds, "states": text, "processes": text}
    looks: dict[str, str] = field(default_factory=dict)
    kernel_log: str = ""
    journal_files: dict[str, bytes] = field(default_factory=dict)
    wall: dict[str, float] = field(default_factory=dict)  # "settled" (from QEMU's start), "night", "collect"
    outcome: str = "completed"  # completed, or the one line that says why not
    failure: str = ""


class _Asker:
    """The guest as the phases speak to it: one command at a time within its
    share of the boot's deadline, through the drive loop (sandbox/run/drive.py ask)."""

    def __init__(self, guest: Guest, deadline: Deadline) -> None:
        self.guest, self.deadline, self.driven = guest, deadline, Driven[Asked]()

    def __call__(self, shell: str, seconds: float = LOOK_SECONDS) -> protocol.Reply:
        return drive_loop.ask(self.guest, shell, self.deadline, seconds, self.driven)


def _clock(ask: _Asker) -> int:
    reply = ask(phases.CLOCK)
    return int(json.loads(reply.text.strip().splitlines()[-1])["realtime_before"])


def _say(reply: protocol.Reply) -> str:
    err = reply.stderr.decode("utf-8", "replace")
    return reply.text + (f"\n[stderr]\n{err}" if err.strip() else "") + (
        f"\n[exit {reply.exit_code}]" if reply.exit_code else "")


def _look(ask: _Asker, seen: Seen, at: int) -> None:
    states = ask(phases.STATES)
    procs = ask(phases.PROCESSES)
    seen.timeline.append({"at": at, "time": format_time(at), "states": _say(states), "processes": procs.text})


def _step(ask: _Asker, seen: Seen, at: int) -> int:
    """The clock set to `at` (a step, as an NTP step or an admin would), then
    STEP_SECONDS run under warp, looked at on both sides; the clock after."""
    reply = ask(f"/tools/settime {at}")
    if reply.exit_code != 0:
        raise ValueError(f"the step to {format_time(at)} failed: {_say(reply).strip()}")
    seen.step_at = at
    _look(ask, seen, at)
    waited = ask(f"/tools/clockstep wait {STEP_SECONDS}", NIGHT_SECONDS)
    now = int(json.loads(waited.text.strip().splitlines()[-1])["realtime_after"])
    _look(ask, seen, now)
    return now


def drive(boot: SystemBoot, end: int, evidence: Path, at: int | None = None) -> Seen:
    seen = Seen()
    step = (NIGHT_SECONDS + 2 * LOOK_SECONDS) if at is not None else 0.0
    deadline = Deadline(READY_SECONDS + SETTLE_SECONDS + NIGHT_SECONDS + 4 * LOOK_SECONDS + step)
    started = time.monotonic()
    try:
        with Guest(boot.request()) as guest:
            ask = _Asker(guest, deadline)
            drive_loop.boot(guest, deadline, ask.driven, READY_SECONDS)
            seen.init = ask(phases.INIT_KIND).text.strip()
            if seen.init == phases.OURS:
                seen.outcome = "no-init"
                seen.failure = _system_line(evidence) or "our /init could not start the system's init"
                return seen
            if seen.init == "systemd":
                settle = ask(phases.SETTLE_SYSTEMD, SETTLE_SECONDS)
                seen.settled = settle.text.strip() or f"exit {settle.exit_code}"
            else:
                ask(f"/tools/clockstep wait {phases.SETTLE_QUIET_SECONDS}", SETTLE_SECONDS)
                seen.settled = "quiet"
            seen.wall["settled"] = time.monotonic() - started
            seen.start_clock = _clock(ask)
            seen.units_before = _say(ask(phases.UNITS))
            _look(ask, seen, seen.start_clock)
            night = time.monotonic()
            now = seen.start_clock
            moved = phases.clock_moved(now, parse_time(f"{boot.rtc}Z"), end)
            if moved:  # a night from 2026 to 2038 would never end: the evidence so far, and why
                seen.outcome, seen.failure = "clock-moved", moved
            for mark in () if moved else phases.marks(seen.start_clock, end):
                if mark > now:
                    reply = ask(f"/tools/clockstep wait {mark - now}", NIGHT_SECONDS)
                    now = int(json.loads(reply.text.strip().splitlines()[-1])["realtime_after"])
                _look(ask, seen, now)
            seen.night_end = now
            if at is not None and not moved:
                now = _step(ask, seen, at)
            seen.wall["night"] = time.monotonic() - night
            collect = time.monotonic()
            seen.end_clock = now
            seen.units_after = _say(ask(phases.UNITS))
            for look in phases.FINAL_LOOKS:
                seen.looks[look.name] = _say(ask(look.command))
            seen.kernel_log = ask(phases.KERNEL_LOG).text
            files = ask(phases.LIST_JOURNALS).text.split()
            for path in files:
                seen.journal_files[path] = ask(f"cat {path}").stdout
            seen.wall["collect"] = time.monotonic() - collect
    except GuestDied as err:
        seen.outcome, seen.failure = "died", _system_line(evidence) or str(err)
    except GuestHung as err:
        seen.outcome = "hang"
        seen.failure = ("the system never settled: " if "settled" not in seen.wall else "") + str(err)
    except (protocol.ProtocolError, ValueError, KeyError, IndexError) as err:
        seen.outcome, seen.failure = "agent-error", f"{type(err).__name__}: {err}"
    return seen


def _console(evidence: Path) -> str:
    try:
        return Evidence(evidence).console.read_text("utf-8", "replace")
    except OSError:
        return ""


def _system_line(evidence: Path) -> str:
    """Our /init's "Y2038-SYSTEM: <cause>" line, or the kernel's panic line."""
    lines = _console(evidence).splitlines()
    for line in lines:
        if "Y2038-SYSTEM:" in line and "mounted" not in line and "exec /sbin/init" not in line:
            return line.split("Y2038-SYSTEM:", 1)[1].strip()
    for line in lines:
        if "Kernel panic" in line:
            return line.split("]", 1)[-1].strip()
    return ""


def write_evidence(seen: Seen, evidence: Path) -> None:
    folder = Evidence(evidence)
    folder.write(files.UNITS_BEFORE, seen.units_before)
    folder.write(files.UNITS_AFTER, seen.units_after)
    folder.write(files.TIMELINE, json.dumps(seen.timeline, indent=1) + "\n")
    folder.write(files.KERNEL_LOG, seen.kernel_log)
    for name, text in seen.looks.items():
        folder.write(name, text)
    for path, data in seen.journal_files.items():
        folder.write_bytes(f"{files.JOURNAL}/{Path(path).name}", data)
    folder.write(files.SYSTEM_BOOT, json.dumps({
        "outcome": seen.outcome, "failure": seen.failure, "init": seen.init, "settled": seen.settled,
        "start": format_time(seen.start_clock) if seen.start_clock else "",
        "end": format_time(seen.end_clock) if seen.end_clock else "",
        **({"night_end": format_time(seen.night_end), "step_at": format_time(seen.step_at)} if seen.step_at else {}),
        "wall_seconds": {k: round(v, 2) for k, v in seen.wall.items()}}, indent=1) + "\n")
