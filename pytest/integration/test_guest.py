"""Boot the real x86_64 guest: the agent channel, and how panics and hangs are
reported. These tests also refresh nothing: the golden logs in pytest/data/
were captured from runs like these (see pytest/data/README.md)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from sandbox.guest import klog
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest, GuestDied, GuestHung
from sandbox.run.runner import classify
from sandbox.guest.target import Target
from sandbox.base.timefmt import parse_time

RTC = "2038-01-19T03:13:50"


def boot(target: Target, evidence: Path) -> Guest:
    return Guest(target.boot(RTC, evidence))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_agent_returns_output_and_exit_code(y2038_target: Callable[..., Target],
                                            y2038_evidence: Path) -> None:
    with boot(y2038_target(), y2038_evidence) as guest:
        release = guest.wait_ready(Deadline(60))
        reply = guest.run("echo out; echo err >&2; cat /proc/sys/kernel/osrelease; exit 3",
                          Deadline(30))
    assert reply.exit_code == 3
    assert reply.text.splitlines() == ["out", release]
    assert reply.stderr == b"err\n"


def test_guest_clock_starts_at_the_rtc_base(y2038_target: Callable[..., Target],
                                            y2038_evidence: Path) -> None:
    with boot(y2038_target(), y2038_evidence) as guest:
        guest.wait_ready(Deadline(60))
        seconds = int(guest.run("date +%s", Deadline(30)).text)
    assert parse_time(RTC + "Z") <= seconds < parse_time(RTC + "Z") + 60  # the RTC base plus boot time


def test_panic_is_classified_and_qemu_is_gone(y2038_target: Callable[..., Target],
                                              y2038_evidence: Path) -> None:
    with boot(y2038_target(), y2038_evidence) as guest:
        guest.wait_ready(Deadline(60))
        with pytest.raises(GuestDied) as died:
            guest.run("echo c > /proc/sysrq-trigger", Deadline(30))
        pid = guest.pid
    findings = tuple(klog.scan((y2038_evidence / "console.log").read_text().splitlines()))
    outcome, detail = classify(died.value, findings)
    assert outcome == "panic"
    assert "sysrq triggered crash" in detail
    assert not alive(pid)


def test_hang_hits_the_deadline_and_qemu_is_killed(y2038_target: Callable[..., Target],
                                                   y2038_evidence: Path) -> None:
    with boot(y2038_target(), y2038_evidence) as guest:
        guest.wait_ready(Deadline(60))
        with pytest.raises(GuestHung) as hung:
            guest.run("sleep 600", Deadline(2))
        pid = guest.pid
    assert classify(hung.value, ())[0] == "hang"
    assert not alive(pid)


def test_an_exception_in_the_block_leaves_no_qemu(y2038_target: Callable[..., Target],
                                                  y2038_evidence: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        with boot(y2038_target(), y2038_evidence) as guest:
            pid = guest.pid
            raise KeyboardInterrupt
    assert not alive(pid)


def test_kernel_panic_on_the_command_line_is_no_panic(y2038_target: Callable[..., Target],
                                                      y2038_evidence: Path) -> None:
    """The kernel echoes its command line on the console ("Command line:",
    "Kernel command line:", "Unknown kernel command line parameters"): words
    a scenario adds must not turn a hang into a panic."""
    target = y2038_target()
    request = target.boot(RTC, y2038_evidence, append=("Kernel", "panic", "-", "not", "syncing"))
    with Guest(request) as guest:
        guest.wait_ready(Deadline(60))
        with pytest.raises(GuestHung) as hung:
            guest.run("sleep 600", Deadline(2))
    console = (y2038_evidence / "console.log").read_text()
    assert "Kernel panic - not syncing" in console  # echoed, and nothing else
    assert classify(hung.value, tuple(klog.scan(console.splitlines())))[0] == "hang"


def test_qemu_runs_in_its_own_process_group(y2038_target: Callable[..., Target], y2038_evidence: Path) -> None:
    """QEMU quits on SIGINT, SIGTERM and SIGHUP. In our process group a Ctrl-C
    could stop it before we record the run as interrupted (it then looked
    like a guest that died); in its own group only we stop it. The signals
    themselves: test_signals.py."""
    with boot(y2038_target(), y2038_evidence) as guest:
        guest.wait_ready(Deadline(60))
        assert os.getpgid(guest.pid) == guest.pid != os.getpgid(0)
        assert guest.run("echo still here", Deadline(30)).text == "still here\n"
    assert not alive(guest.pid)  # and stopping it is ours
