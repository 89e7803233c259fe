"""The PC's local APIC timer rate we give the kernel (kernel-series/aids/0001,
lapic_timer_khz=) is the rate the kernel measures itself when it is not
given: one boot with the machine's own arguments, one without the rate, both
with apic=verbose so that the kernel prints what it used. Both boots are
warped: under -icount the PIT and the APIC both count the guest's
instructions, so the calibration is exact (9,999,227 of 10,000,000 measured);
without warp a loaded host delays the PIT's interrupts and the calibration
is off by as much as 1% (10,104,998 in one `just test` on i386)."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Callable

import pytest

from sandbox.base.machines import QEMU_APIC_KHZ
from sandbox.build.kconfig import parse_config
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest
from sandbox.guest.target import Target

RTC = "2038-01-19T03:13:50"
PRESET = re.compile(r"lapic timer already calibrated (\d+)")
CALIBRATED = re.compile(r"calibration result: (\d+)")


def hz(config: Path) -> int:
    return int(next(r.value for r in reversed(parse_config(config.read_text())) if r.option == "CONFIG_HZ"))


def apic_period(target: Target, evidence: Path, with_rate: bool) -> tuple[str, int]:
    """Boot until the agent answers; which way the kernel got its APIC timer
    period ("preset" or "calibrated") and the period, from the console."""
    machine = target.machine
    if not with_rate:
        machine = replace(machine, qemu=replace(machine.qemu, boot_append=tuple(
            a for a in machine.qemu.boot_append if not a.startswith("lapic_timer_khz="))))
    evidence.mkdir(parents=True, exist_ok=True)
    request = replace(target, machine=machine).boot(RTC, evidence, append=("apic=verbose",), warp=True)
    with Guest(request) as guest:
        guest.wait_ready(Deadline(60))
    console = (evidence / "console.log").read_text()
    found = [(way, int(m[1])) for way, pattern in (("preset", PRESET), ("calibrated", CALIBRATED))
             for m in pattern.finditer(console)]
    assert len(found) == 1, f"expected one APIC timer period in {evidence / 'console.log'}: {found}"
    return found[0]


@pytest.mark.parametrize("name", ["x86_64", "i386"])
def test_the_apic_rate_we_give_is_the_rate_the_kernel_measures(
        name: str, y2038_target: Callable[..., Target], y2038_evidence: Path) -> None:
    target = y2038_target(name)
    given = apic_period(target, y2038_evidence / "given", with_rate=True)
    measured = apic_period(target, y2038_evidence / "measured", with_rate=False)
    assert given == ("preset", QEMU_APIC_KHZ * 1000 // hz(target.kernel.config))
    assert measured[0] == "calibrated"
    assert abs(measured[1] - given[1]) <= given[1] // 1000, (measured, given)  # within 0.1%
