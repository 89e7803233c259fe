"""`just demo --live`: the clock crossing the rollover, watched as it happens.

scenarios/clock/live.toml sets the clock 5 s before 03:14:08 once the guest
is up and reads clock_gettime() in every flavour about once a second while the
clock runs on by itself. The
run is an ordinary one (sandbox.app.jobs.run_and_judge: the same evidence,
verdicts and page); the guest is wrapped so that each round of readings is
printed side by side the moment its last flavour answers, with the rollover
marked where the 64-bit clock passes it:

    guest time  time32-syscall        time32-libc           time64                native64
    03:14:06    2038-01-19 03:14:06   2038-01-19 03:14:06   2038-01-19 03:14:06   2038-01-19 03:14:06
    ---- 03:14:08Z: a signed 32-bit time_t runs out --------------------------------------------
    03:14:09    1901-12-13 20:45:53 * EOVERFLOW             2038-01-19 03:14:09   2038-01-19 03:14:09
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType
from collections.abc import Mapping
from typing import Any, TextIO

from sandbox.app.jobs import run_and_judge
from sandbox.base import paths
from sandbox.base.machines import Machine
from sandbox.base.progress import say
from sandbox.base.timefmt import INT32_MIN, ROLLOVER, format_time
from sandbox.guest.deadline import Deadline
from sandbox.guest.protocol import Reply
from sandbox.guest.qemu import BootRequest, Guest
from sandbox.guest.target import prepare_target
from sandbox.judge.judged import JudgedRun
from sandbox.run.runner import StartGuest
from sandbox.scenario import suite

LIVE_SCENARIO = paths.SCENARIOS / "clock" / "live.toml"
PROBE = "clock"
CELL = 22
WRAPPED_MARK = " *"
RED, GREEN, RESET = "\033[31m", "\033[32m", "\033[0m"


class LiveView:
    """Rounds of clock readings, printed as they complete."""

    def __init__(self, flavours: tuple[str, ...], out: TextIO = sys.stdout, colour: bool | None = None) -> None:
        self.flavours = flavours
        self.out = out
        self.colour = (out.isatty() and "NO_COLOR" not in os.environ) if colour is None else colour
        self.pending: dict[str, dict[str, Any]] = {}
        self.crossed = False
        self.rounds = 0  # rounds read
        self.shown = 0  # rounds printed: one per guest second
        self.last_second: int | None = None

    def _print(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def start(self, release: str) -> None:
        self._print(f"\nlive: clock_gettime() in every flavour, about once a second (guest kernel {release})")
        self._print("guest time".ljust(12) + "".join(f.ljust(CELL) for f in self.flavours).rstrip())

    def reply(self, reply: Reply) -> None:
        lines = []
        for text in reply.text.splitlines():
            try:
                record = json.loads(text)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("probe") == PROBE:
                lines.append(record)
        if not lines:
            self.flush()  # a wait, dmesg: the round is over
        for record in lines:
            flavour = str(record.get("flavour"))
            if flavour in self.pending:
                self.flush()
            self.pending[flavour] = record
            if all(f in self.pending for f in self.flavours):
                self.flush()

    def _cell(self, record: dict[str, Any] | None) -> str:
        if record is None:
            return "-".ljust(CELL)
        seconds = record.get("seconds")
        if record.get("errno"):
            text, bad = str(record["errno"]), True
        elif isinstance(seconds, int):
            wrapped = INT32_MIN <= seconds < 0
            text, bad = format_time(seconds).replace("T", " ").rstrip("Z") + (WRAPPED_MARK if wrapped else ""), wrapped
        else:
            text, bad = "?", True
        padded = text.ljust(CELL)
        if self.colour:
            return (RED if bad else GREEN) + text + RESET + " " * (CELL - len(text))
        return padded

    def _truth(self) -> int | None:
        seen = [r.get("seconds") for f, r in self.pending.items() if f in ("time64", "native64")]
        readings = [s for s in seen if isinstance(s, int)]
        return max(readings) if readings else None

    def flush(self) -> None:
        if not self.pending:
            return
        truth = self._truth()
        if truth is not None and truth >= ROLLOVER and not self.crossed:
            self.crossed = True
            mark = f"---- {format_time(ROLLOVER)[11:]}: a signed 32-bit time_t runs out "
            self._print(mark.ljust(12 + CELL * len(self.flavours) - 2, "-"))
        self.rounds += 1
        if truth is None or truth != self.last_second:  # a second already shown is not shown again
            when = format_time(truth)[11:19] if truth is not None else "?"
            self._print(when.ljust(12) + "".join(self._cell(self.pending.get(f)) for f in self.flavours).rstrip())
            self.shown += 1
        self.last_second = truth
        self.pending = {}

    def end(self) -> None:
        self.flush()
        if self.rounds:
            self._print(f"* wrapped: the 32-bit tv_sec read as a date. {self.rounds} rounds read, "
                        "one per second shown")


class LiveGuest:
    """A guest (anything with the runner's GuestPort) whose replies are also shown live."""

    def __init__(self, inner: Any, view: LiveView) -> None:
        self.inner = inner
        self.view = view

    def __enter__(self) -> LiveGuest:
        self.inner.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> Any:
        self.view.end()
        return self.inner.__exit__(kind, err, tb)

    @property
    def boot_seconds(self) -> float:
        return float(self.inner.boot_seconds)

    @property
    def boot_phases(self) -> Mapping[str, float]:
        return dict(self.inner.boot_phases)

    def wait_ready(self, deadline: Deadline) -> str:
        release = self.inner.wait_ready(deadline)
        self.view.start(release)
        return str(release)

    def run(self, command: str, deadline: Deadline) -> Reply:
        reply: Reply = self.inner.run(command, deadline)
        self.view.reply(reply)
        return reply

    def stop(self) -> object:
        self.view.flush()
        return self.inner.stop()


def live_start(view: LiveView, start: StartGuest = Guest) -> StartGuest:
    def started(request: BootRequest) -> LiveGuest:
        return LiveGuest(start(request), view)
    return started


def run_live(target_machine: Machine, start: StartGuest = Guest, out: TextIO = sys.stdout) -> tuple[JudgedRun, Path]:
    """Run scenarios/clock/live.toml on the machine with the live view; (the run, its results folder)."""
    scenario = suite.load(LIVE_SCENARIO)
    target = prepare_target(target_machine, scenario.kernel)
    results = paths.new_results_dir("live")
    say(f"live: {scenario.title} on {target_machine.name} ({target.accel.name})")
    flavours = tuple(f for f in scenario.probe_steps[0].flavours if f in scenario.machines[target_machine.name])
    view = LiveView(flavours, out)
    began = time.monotonic()
    judged = run_and_judge(target, scenario, results / scenario.slug / target_machine.name, live_start(view, start))
    say(f"live: {view.rounds} rounds in {time.monotonic() - began:.1f} s; evidence: {results}")
    return judged, results
