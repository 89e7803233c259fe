"""The runtime audit's lossless channel on armhf: /tools/forks starts 1,000
processes at once, each making one 32-bit clock_gettime system call, under
/tools/time32count, which reads every process's Time32_syscalls from
/proc/<pid>/status as it exits. All 1,000 are found, where the `log`
policy's kernel lines (200 per 5 s) name only some; `-s` prints the figures.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from sandbox.audit.runtime.facts import process_counts
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest
from sandbox.guest.target import Target

RTC = "2038-01-19T03:00:00"
CHILDREN = 1000


def uptime_around(command: str) -> str:
    """The shell that runs command between two readings of /proc/uptime."""
    return (f"read a _ < /proc/uptime; {command}; code=$?; read b _ < /proc/uptime; "
            "echo \"seconds $a $b\"; exit $code")


def seconds_of(text: str) -> float:
    _, start, end = next(line for line in text.splitlines() if line.startswith("seconds ")).split()
    return float(end) - float(start)


def test_time32count_finds_every_one_of_1000_processes(y2038_target: Callable[..., Target],
                                                       y2038_evidence: Path) -> None:
    target = y2038_target("armhf")
    request = target.boot(RTC, y2038_evidence)
    with Guest(request) as guest:
        guest.wait_ready(Deadline(120))
        guest.run("/tools/sysctl kernel.time32_syscalls log && dmesg -c >/dev/null", Deadline(30))
        traced = guest.run(uptime_around(f"/tools/time32count /tmp/counts /tools/forks {CHILDREN}"),
                           Deadline(300))
        logged = guest.run("dmesg -c | grep -c 'forks.* called clock_gettime32'", Deadline(30))
        lines = guest.run("cat /tmp/counts", Deadline(60))
        untraced = guest.run(uptime_around(f"/tools/forks {CHILDREN}"), Deadline(300))
    assert untraced.exit_code == 0 and traced.exit_code == 0
    counts = process_counts(lines.text)
    children = [c for c in counts if c.comm == "forks" and c.calls == 1]
    print(f"\n{CHILDREN} processes: {seconds_of(untraced.text):.2f} s untraced, {seconds_of(traced.text):.2f} s "
          f"traced; time32count found {len(children)} with one time32 call each ({len(counts)} lines, the "
          f"parent's too); the log policy's lines named {logged.text.strip()}")
    assert len(children) == CHILDREN
    assert len({c.pid for c in children}) == CHILDREN
