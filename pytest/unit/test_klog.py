"""Kernel console classification, fed with captured console logs."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.guest import klog
from sandbox.guest.qemu import GuestDied, GuestHung
from sandbox.guest.protocol import ProtocolError
from sandbox.run.observations import ProbeOutputError
from sandbox.run.runner import classify

DATA = Path(__file__).resolve().parent.parent / "data" / "console"


def console(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def test_a_normal_boot_has_no_findings() -> None:
    assert klog.scan(console("normal.log")) == []
    assert classify(None, ()) == ("completed", "")


def test_the_captured_panic_is_found() -> None:
    findings = klog.scan(console("panic.log"))
    assert [f.kind for f in findings] == ["panic"]
    panic = next(f for f in findings if f.kind == "panic")
    assert "sysrq triggered crash" in panic.line
    assert console("panic.log")[panic.line_number - 1].rstrip() == panic.line
    outcome, detail = classify(GuestDied("QEMU exited (code 0)"), tuple(findings))
    assert outcome == "panic" and "Kernel panic - not syncing" in detail


def test_a_hang_is_a_hang_not_a_failed_expectation() -> None:
    findings = tuple(klog.scan(console("hang.log")))
    assert findings == ()
    assert classify(GuestHung("no answer within 2s"), findings) == ("hang", "no answer within 2s")


def test_a_panic_explains_a_hang_too() -> None:
    findings = tuple(klog.scan(console("panic.log")))
    assert classify(GuestHung("no answer"), findings)[0] == "panic"


@pytest.mark.parametrize("failure, outcome", [
    (GuestDied("QEMU exited (code 1)"), "guest-exited"),
    (ProtocolError("bad base64"), "agent-error"),
    (ProbeOutputError(1, "not JSON"), "agent-error"),
])
def test_other_failures_are_named(failure: Exception, outcome: str) -> None:
    assert classify(failure, ()) == (outcome, str(failure))


def test_a_failing_set_clock_is_a_failed_step() -> None:
    assert classify(None, (), "step 1 exited 1: EPERM") == ("step-failed", "step 1 exited 1: EPERM")


@pytest.mark.parametrize("line, kind", [
    ("[    1.0] BUG: kernel NULL pointer dereference, address: 0000000000000000", "bug"),
    ("[    1.0] kernel BUG at mm/slub.c:123!", "bug"),
    ("[    1.0] WARNING: CPU: 0 PID: 1 at kernel/time/timekeeping.c:42 foo+0x1/0x2", "warning"),
    ("[    1.0] INFO: task probe:77 blocked for more than 120 seconds.", "hung-task"),
    ("[    1.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "rcu-stall"),
    ("[    1.0] general protection fault, probably for non-canonical address", "oops"),
    ("[    1.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!", "bug"),
])
def test_failure_table(line: str, kind: str) -> None:
    assert [f.kind for f in klog.scan([line])] == [kind]


def test_kernel_lines_drop_the_init_lines() -> None:
    lines = console("normal.log")
    kept = klog.kernel_lines(lines)
    assert any("Y2038-INIT: up" in line for line in lines)
    assert kept and all(line.startswith("[") for line in kept)
    assert not any("Y2038-INIT" in line for line in kept)
