"""Runs side by side (sandbox/app/parallel.py) without QEMU: guests that
answer at once or block until stopped, driven by the real run loop
(sandbox.run.runner.run_scenario). The runs overlap, their output comes in
the items' order, and a signal in the main thread stops every guest at once
and leaves each run recorded as interrupted, in its own folder."""
from __future__ import annotations

import json
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import pytest
from replay_guest import BASE, prepared

from sandbox.app.parallel import StopScope, run_side_by_side
from sandbox.base.errors import Interrupted
from sandbox.base.paths import REPO
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest, GuestDied
from sandbox.run.record import RunRecord
from sandbox.run.runner import StartGuest, run_scenario
from sandbox.scenario import suite

ROLLOVER = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
BOOT = BASE
WAIT = 10.0  # seconds a test waits for a thread at most; it never takes that long when it passes


@dataclass
class BlockingGuest:
    """READY at once; its first command blocks until stop(), which ends it
    as QEMU's end would (GuestDied). `blocked` is set when it blocks."""

    request: BootRequest
    block: bool = True
    boot_seconds: float = 0.1
    boot_phases: dict[str, float] = field(default_factory=lambda: {"qemu": 0.05})
    blocked: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> BlockingGuest:
        self.request.evidence.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def wait_ready(self, deadline: Deadline) -> str:
        return "6.1.0-fake"

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        if self.block:
            self.blocked.set()
            if not self.stopped.wait(WAIT):
                raise AssertionError("never stopped")
        if self.stopped.is_set():
            raise GuestDied("QEMU exited (stopped)")
        return protocol.Reply(0, b"", b"", 0)

    def stop(self) -> None:
        self.stopped.set()


def run_json(evidence: Path) -> dict[str, object]:
    return json.loads((evidence / "run.json").read_text())


def test_runs_overlap_and_report_in_the_items_order(tmp_path: Path) -> None:
    both_running = threading.Barrier(2, timeout=WAIT)  # broken (an error) unless the two runs overlap
    done_order: list[int] = []
    lock = threading.Lock()

    def work(item: int, start: StartGuest) -> int:
        if item < 2:
            both_running.wait()
        if item == 0:  # the first item ends last
            threading.Event().wait(0.2)
        with lock:
            done_order.append(item)
        return item * 10

    seen: list[tuple[int, int]] = []
    run_side_by_side(work, [0, 1, 2], 2, StopScope(), BlockingGuest, lambda i, r: seen.append((i, r)))
    assert seen == [(0, 0), (1, 10), (2, 20)]
    assert done_order.index(1) < done_order.index(0)  # 1 ended first, and was still shown after 0


def test_a_signal_stops_every_guest_and_each_run_records_itself_interrupted(tmp_path: Path) -> None:
    guests: list[BlockingGuest] = []
    lock = threading.Lock()

    def start(request: BootRequest) -> BlockingGuest:
        with lock:
            guests.append(BlockingGuest(request, block=request.evidence.name != "0"))
            return guests[-1]

    def work(item: int, starter: StartGuest) -> RunRecord:
        return run_scenario(ROLLOVER, prepared(ROLLOVER, tmp_path / str(item), BOOT), starter)

    def on_done(item: int, record: RunRecord) -> None:  # the signal lands while runs 1 and 2 wait
        assert record.outcome == "completed"
        for _ in range(100):
            with lock:
                blocking = [g for g in guests if g.block]
            if len(blocking) == 2 and all(g.blocked.is_set() for g in blocking):
                break
            threading.Event().wait(0.05)
        raise Interrupted(signal.SIGTERM)

    with pytest.raises(Interrupted):
        run_side_by_side(work, [0, 1, 2], 3, StopScope(), start, on_done)
    assert len(guests) == 3 and all(g.stopped.is_set() for g in guests)
    for item in (1, 2):
        run = run_json(tmp_path / str(item))
        assert (run["outcome"], run["detail"]) == ("interrupted", "interrupted by SIGTERM")
    assert run_json(tmp_path / "0")["outcome"] == "completed"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers run in the main thread only")
def test_a_real_signal_while_waiting_stops_the_guest_and_the_queued_run_never_boots(tmp_path: Path) -> None:
    guests: list[BlockingGuest] = []

    def start(request: BootRequest) -> BlockingGuest:
        guests.append(BlockingGuest(request))
        return guests[-1]

    def work(item: int, starter: StartGuest) -> RunRecord:
        return run_scenario(ROLLOVER, prepared(ROLLOVER, tmp_path / str(item), BOOT), starter)

    def send_when_blocked() -> None:
        for _ in range(int(WAIT / 0.01)):
            if guests and guests[0].blocked.is_set():
                break
            threading.Event().wait(0.01)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)

    def on_signal(signum: int, frame: object) -> None:  # as sandbox/app/signals.py's handlers do
        raise Interrupted(signal.SIGTERM)

    previous = signal.signal(signal.SIGUSR1, on_signal)
    sender = threading.Thread(target=send_when_blocked)
    try:
        sender.start()
        with pytest.raises(Interrupted):
            run_side_by_side(work, [0, 1], 1, StopScope(), start, lambda i, r: None)
    finally:
        sender.join(WAIT)
        signal.signal(signal.SIGUSR1, previous)
    assert len(guests) == 1 and guests[0].stopped.is_set()  # run 1 was queued: never booted
    assert run_json(tmp_path / "0")["outcome"] == "interrupted"
    assert not (tmp_path / "1").exists()
