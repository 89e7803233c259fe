"""Scenario runs side by side, one per core, each in its own results folder;
a signal stops every guest at once and each run still records itself.

    scope = StopScope()
    run_side_by_side(work, items, jobs, scope, on_done)

`work(item, start)` runs in a worker thread and boots through `start`
(scope.starter(Guest)): a guest started that way is stopped when the main
thread is interrupted (the signal handlers of sandbox/app/signals.py raise
Interrupted there), and its next or pending wait raises Interrupted in the
worker, so sandbox/run/runner.py records the run as `interrupted`, as it
does when one run is interrupted in the main thread. `on_done(item, result)`
runs in the main thread, in the items' order, as soon as that item and
every one before it are done: output stays in the order of the files.
"""
from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from sandbox.base.errors import Interrupted
from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest
from sandbox.run.runner import GuestPort, StartGuest

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_DEFAULT_JOBS = 4
"""A guest takes about one core (TCG) and 256 MiB or more: at most this many
side by side unless --jobs says otherwise."""
_POLL_SECONDS = 0.2  # how often the main thread looks up from waiting (signals land between)


def default_jobs() -> int:
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_JOBS))


class StopScope:
    """The guests started in it, and whether the whole run was told to stop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._guests: dict[int, GuestPort] = {}  # by id(): a Guest is not hashable
        self._stopped = threading.Event()
        self.signum = 0

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self, signum: int) -> None:
        """Stop every guest of the scope; later waits and boots raise Interrupted(signum)."""
        with self._lock:
            self.signum = signum
            self._stopped.set()
            guests = list(self._guests.values())
        for guest in guests:
            guest.stop()

    def check(self) -> None:
        if self._stopped.is_set():
            raise Interrupted(self.signum)

    def starter(self, start: StartGuest) -> StartGuest:
        """`start`, with each guest it starts known to the scope while it runs."""
        @contextmanager
        def started(request: BootRequest) -> Iterator[GuestPort]:
            self.check()
            with start(request) as guest:
                with self._lock:
                    self._guests[id(guest)] = guest
                try:
                    self.check()  # stopped while QEMU started
                    yield _Stoppable(guest, self)
                finally:
                    with self._lock:
                        self._guests.pop(id(guest), None)
        return started


class _Stoppable:
    """A guest whose waits end in Interrupted once its scope is stopped
    (stopping QEMU ends them as GuestDied: that is not the guest's fault)."""

    def __init__(self, guest: GuestPort, scope: StopScope) -> None:
        self._guest = guest
        self._scope = scope

    @property
    def boot_seconds(self) -> float:
        return self._guest.boot_seconds

    @property
    def boot_phases(self) -> Mapping[str, float]:
        return self._guest.boot_phases

    def wait_ready(self, deadline: Deadline) -> str:
        self._scope.check()
        try:
            return self._guest.wait_ready(deadline)
        except Exception:
            self._scope.check()
            raise

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        self._scope.check()
        try:
            return self._guest.run(command, deadline)
        except Exception:
            self._scope.check()
            raise

    def stop(self) -> object:
        return self._guest.stop()


def _result(future: Future[Result]) -> Result:
    """The future's result; the main thread wakes up every _POLL_SECONDS, so a
    signal's handler runs (and raises) while it waits."""
    while not future.done():
        wait([future], timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
    return future.result()


def run_side_by_side(work: Callable[[Item, StartGuest], Result], items: Sequence[Item], jobs: int,
                     scope: StopScope, start: StartGuest, on_done: Callable[[Item, Result], None]) -> None:
    """work(item, start) for every item, `jobs` at a time, on_done in order.

    A signal (KeyboardInterrupt, Interrupted) in the main thread stops every
    running guest (each run records itself as interrupted), drops the runs
    not started, waits for the workers and raises again. Any other error
    drops the runs not started, lets the running ones end and raises."""
    starter = scope.starter(start)
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="scenario-run") as pool:
        futures = [pool.submit(work, item, starter) for item in items]
        try:
            for item, future in zip(items, futures):
                on_done(item, _result(future))
        except BaseException as err:
            for future in futures:
                future.cancel()
            if isinstance(err, KeyboardInterrupt):
                scope.stop(getattr(err, "signum", signal.SIGINT))
            raise
