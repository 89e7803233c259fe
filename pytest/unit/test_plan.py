"""Steps become guest commands without booting."""
from __future__ import annotations

from sandbox.run.plan import plan
from sandbox.scenario.model import ProbeStep, SetClockStep

ALL = ("time32-syscall", "time32-libc", "time64", "native64")


def test_a_probe_step_runs_once_per_flavour_the_machine_has() -> None:
    step = ProbeStep(index=0, phase="before", probe="clock", flavours=ALL, args=("time", "a b"))
    commands = plan((step,), ALL[:3])
    assert [c.shell for c in commands] == [
        f"/probes/{f}/clock time 'a b'" for f in ALL[:3]]
    assert {(c.phase, c.probe, c.must_succeed) for c in commands} == {("before", "clock", False)}


def test_a_probe_step_under_a_tool_is_its_program() -> None:
    step = ProbeStep(index=0, phase="deny", probe="time32", flavours=ALL, args=("clock_gettime",),
                     under=("seccomp32", "deny", "--"))
    assert [c.shell for c in plan((step,), ALL[:1])] == [
        "/tools/seccomp32 deny -- /probes/time32-syscall/time32 clock_gettime"]


def test_set_clock_uses_the_tool_and_must_succeed() -> None:
    commands = plan((SetClockStep(index=1, time=2147483670, via="clock_settime"),), ALL)
    assert len(commands) == 1
    assert commands[0].shell.endswith("settime 2147483670 clock_settime")
    assert commands[0].must_succeed and commands[0].step == 1


def test_steps_keep_their_order() -> None:
    steps = (ProbeStep(0, "before", "clock", ALL), SetClockStep(1, 2147483670),
             ProbeStep(2, "after", "clock", ALL))
    assert [c.step for c in plan(steps, ALL)] == [0] * 4 + [1] + [2] * 4
