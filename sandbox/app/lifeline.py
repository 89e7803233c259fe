"""The sandbox stops when the `just` that started it dies.

`just` here is a chain: the npm package's Node.js wrapper starts the just
binary, whose recipe `exec`s Python. A SIGKILL to the wrapper (what a CI
runner's timeout or `kill -9` does) ends the wrapper alone: the just binary
and Python were left running, QEMU with them, and nobody would read their
output. So Python watches the `just` processes above it (the ones whose
command line names just, at most MAX_LEVELS up) and, when one is gone, sends
itself SIGTERM: the handler of sandbox/app/cli.py unwinds, every QEMU is
stopped and each run is recorded as `interrupted`, as for a signal.

Under the parent of sandbox/app/supervisor.py (every `python3 -m sandbox`),
the process watched first is that parent, then the `just` processes above it:
a SIGKILL to the parent stops the child as one to `just` does.

A watcher thread rather than prctl(PR_SET_PDEATHSIG): that fires when the
parent *thread* that forked us ends, not only its process, and it reaches the
parent alone, not the wrapper above it.
"""
from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from sandbox.app import supervisor

MAX_LEVELS = 3
"""How far up the wrapper chain is looked for (node, the just binary, a shell)."""
POLL_SECONDS = 0.25


@dataclass(frozen=True)
class Ancestor:
    pid: int
    start: str  # /proc/<pid>/stat's start time: a pid reused later is another process


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _names_just(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(b"just" in os.path.basename(arg) for arg in argv[:2])  # node /usr/bin/just, .../bin/just


def just_ancestors(pid: int | None = None) -> tuple[Ancestor, ...]:
    """The processes above `pid` (default: this one) whose command line names
    just, up to the first that does not."""
    found: list[Ancestor] = []
    current = os.getpid() if pid is None else pid
    for _ in range(MAX_LEVELS):
        fields = _stat(current)
        if fields is None:
            break
        parent = int(fields[1])  # the field after the state
        parent_fields = _stat(parent)
        if parent <= 1 or parent_fields is None or not _names_just(parent):
            break
        found.append(Ancestor(parent, parent_fields[19]))  # starttime, field 22 of stat
        current = parent
    return tuple(found)


def watched() -> tuple[Ancestor, ...]:
    """What this process watches: its supervising parent (when it has one)
    and the `just` processes above that, else the `just` processes above it."""
    if not supervisor.supervised():
        return just_ancestors()
    parent = os.getppid()
    fields = _stat(parent)
    return () if fields is None else (Ancestor(parent, fields[19]), *just_ancestors(parent))


def alive(ancestor: Ancestor) -> bool:
    fields = _stat(ancestor.pid)
    return fields is not None and fields[0] != "Z" and fields[19] == ancestor.start


def watch(ancestors: tuple[Ancestor, ...], signum: int = signal.SIGTERM,
          poll: float = POLL_SECONDS) -> threading.Thread | None:
    """Start a daemon thread that sends this process `signum` once any of
    `ancestors` is gone; None when there is nothing to watch."""
    if not ancestors:
        return None

    def run() -> None:
        stop = threading.Event()
        while not stop.wait(poll):
            if not all(alive(a) for a in ancestors):
                os.kill(os.getpid(), signum)
                return
    thread = threading.Thread(target=run, name="lifeline", daemon=True)
    thread.start()
    return thread
