"""The clock-moving steps (hwclock, wait) and a probe step's reset-clock:
parsing, validation and the guest commands they plan, without booting."""
from __future__ import annotations

import textwrap

import pytest

from sandbox.base.errors import InputError
from sandbox.scenario.catalogue import FLAVOURS, parse_catalogue
from sandbox.run.plan import plan
from sandbox.scenario.model import HWCLOCK
from sandbox.scenario.model import HwclockStep, ProbeStep, Scenario, SetClockStep, WaitStep
from sandbox.scenario.parser import parse_scenario
from sandbox.base.timefmt import parse_time

FILE = "scenarios/demo/steps.toml"
CATALOGUE = parse_catalogue(
    """\
[probe.timers]
calls.timer_settime = { elapsed = "number", woke = "time" }
calls.clock_nanosleep = { elapsed = "number", woke = "time" }
flavours = ["time32-syscall", "time32-libc", "time64", "native64"]

[host-binaries.x86_64]
"/usr/sbin/hwclock" = "util-linux-extra"
[host-binaries.i386]
"/usr/sbin/hwclock" = "util-linux-extra"
""",
    "rootfs/manifest.toml",
)
MACHINES = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3]}
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'


def parse(steps: str) -> Scenario:
    return parse_scenario(HEAD + textwrap.dedent(steps), FILE, CATALOGUE, MACHINES)


def error(steps: str) -> str:
    with pytest.raises(InputError) as caught:
        parse(steps)
    return str(caught.value)


# --- parsing ----------------------------------------------------------------


def test_hwclock_and_wait_steps_parse_in_order() -> None:
    scenario = parse("""
        [[step]]
        hwclock = "2038-01-19T03:15:00Z"
        [[step]]
        wait = 2.5
        [[step]]
        wait = 3
    """)
    assert scenario.steps == (
        HwclockStep(0, parse_time("2038-01-19T03:15:00Z")),
        WaitStep(1, 2.5),
        WaitStep(2, 3),
    )
    assert scenario.probe_steps == ()


def test_hwclock_on_a_machine_without_it_is_refused_before_boot() -> None:
    machines = {**MACHINES, "armhf": FLAVOURS[:3]}
    text = HEAD + 'machines = ["x86_64", "armhf"]\n[[step]]\nhwclock = "2038-01-19T03:15:00Z"\n'
    with pytest.raises(InputError) as caught:
        parse_scenario(text, FILE, CATALOGUE, machines)
    assert str(caught.value) == (
        f"{FILE}: step[0].hwclock: machine 'armhf' has no /usr/sbin/hwclock (rootfs/manifest.toml "
        "[host-binaries.<machine>]); list only machines that have it in `machines`")


def test_hwclock_takes_a_toml_date_time_too() -> None:
    scenario = parse("[[step]]\nhwclock = 2038-01-19T03:15:00Z\n")
    assert scenario.steps == (HwclockStep(0, 2147483700),)


def test_reset_clock_belongs_to_the_probe_step() -> None:
    scenario = parse("""
        [[step]]
        phase = "across"
        probe = "timers"
        args = ["2038-01-19T03:14:09Z"]
        reset-clock = "2038-01-19T03:14:06Z"
    """)
    (step,) = scenario.steps
    assert isinstance(step, ProbeStep)
    assert step.reset_clock == parse_time("2038-01-19T03:14:06Z")
    assert step.args == ("2038-01-19T03:14:09Z",)


def test_a_probe_step_without_reset_clock_has_none() -> None:
    (step,) = parse('[[step]]\nphase = "p"\nprobe = "timers"\n').steps
    assert isinstance(step, ProbeStep) and step.reset_clock is None


@pytest.mark.parametrize(
    "steps, message",
    [
        ('[[step]]\nhwclock = "2100-01-01T00:00:00Z"\n',
         "step[0].hwclock: 2100-01-01T00:00:00Z is outside 1970-01-01T00:00:00Z..2099-12-31T23:59:59Z, "
         "what the emulated RTC holds; reach later times with a set-clock step"),
        ('[[step]]\nhwclock = "soon"\n',
         "step[0].hwclock: not a time: 'soon' (expected YYYY-MM-DDTHH:MM:SSZ, in UTC)"),
        ("[[step]]\nhwclock = 5\n",
         'step[0].hwclock: expected a time such as "2038-01-19T03:14:08Z", got an integer'),
        ('[[step]]\nhwclock = "2038-01-19T03:15:00Z"\nvia = "settimeofday"\n',
         "step[0].via: unknown key 'via' for a hwclock step (known: hwclock)"),
        ("[[step]]\nwait = 0\n", "step[0].wait: expected a number of seconds in (0, 2592000], got 0"),
        ("[[step]]\nwait = -1.5\n", "step[0].wait: expected a number of seconds in (0, 2592000], got -1.5"),
        ("[[step]]\nwait = 2592001\n", "step[0].wait: expected a number of seconds in (0, 2592000], got 2592001"),
        ('[[step]]\nwait = "5s"\n', "step[0].wait: expected a number of seconds in (0, 2592000], got '5s'"),
        ("[[step]]\nwait = true\n", "step[0].wait: expected a number of seconds in (0, 2592000], got True"),
        ('[[step]]\nwait = 1\nhwclock = "2038-01-19T03:15:00Z"\n',
         "step[0]: more than one action (wait, hwclock); a step has exactly one of: "
         "probe, run, set-clock, hwclock, wait, sysctl, ntp-sync"),
        ('[[step]]\nphase = "p"\nprobe = "timers"\nreset-clock = "later"\n',
         "step[0].reset-clock: not a time: 'later' (expected YYYY-MM-DDTHH:MM:SSZ, in UTC)"),
    ],
)
def test_bad_clock_steps_name_file_and_key(steps: str, message: str) -> None:
    assert error(steps) == f"{FILE}: {message}"


# --- planning ---------------------------------------------------------------


def test_hwclock_sets_the_rtc_then_the_clock_then_reports() -> None:
    (command,) = plan((HwclockStep(3, parse_time("2038-01-19T03:15:00Z")),), FLAVOURS)
    assert command.shell == (
        f"export TZ=UTC0; {HWCLOCK} --utc --set --date '2038-01-19 03:15:00'"
        f" && {HWCLOCK} --utc --hctosys && /tools/clockstep hwclock 2147483700")
    assert (command.step, command.phase, command.probe, command.flavour, command.must_succeed) == (
        3, "step3-hwclock", "clockstep", "native64", True)


def test_clock_steps_run_in_the_machines_tools_flavour() -> None:
    steps = (HwclockStep(0, 2147483700), WaitStep(1, 2))
    assert {c.flavour for c in plan(steps, FLAVOURS[:3], "time64")} == {"time64"}


@pytest.mark.parametrize("seconds, shell", [
    (2.5, "/tools/clockstep wait 2.5"), (3, "/tools/clockstep wait 3"), (0.25, "/tools/clockstep wait 0.25")])
def test_wait_sleeps_through_the_tool(seconds: float, shell: str) -> None:
    (command,) = plan((WaitStep(1, seconds),), FLAVOURS)
    assert (command.shell, command.phase, command.must_succeed) == (shell, "step1-wait", True)


def test_reset_clock_comes_before_each_flavour() -> None:
    step = ProbeStep(2, "across", "timers", FLAVOURS, ("+3",), reset_clock=2147483646)
    commands = plan((step,), FLAVOURS)
    assert [(c.probe, c.flavour) for c in commands] == [
        (probe, flavour) for flavour in FLAVOURS for probe in ("settime", "timers")]
    resets = commands[0::2]
    assert {c.shell for c in resets} == {"/tools/settime 2147483646 settimeofday"}
    assert all(c.must_succeed and c.phase == "step2-reset-clock" for c in resets)
    assert [c.shell for c in commands[1::2]] == [f"/probes/{f}/timers +3" for f in FLAVOURS]


def test_reset_clock_is_left_out_with_a_flavour_the_machine_lacks() -> None:
    step = ProbeStep(0, "across", "timers", FLAVOURS, reset_clock=2147483646)
    commands = plan((step,), FLAVOURS[:3], "time64")
    assert len(commands) == 6
    assert "native64" not in {c.flavour for c in commands}


def test_without_reset_clock_a_probe_step_plans_only_probes() -> None:
    step = ProbeStep(0, "p", "timers", FLAVOURS)
    assert [c.probe for c in plan((step,), FLAVOURS)] == ["timers"] * 4


def test_clock_steps_keep_their_place_among_the_others() -> None:
    steps = (SetClockStep(0, 2147483640), HwclockStep(1, 2147483700), WaitStep(2, 1),
             ProbeStep(3, "after", "timers", FLAVOURS[:1]))
    assert [c.phase for c in plan(steps, FLAVOURS)] == [
        "step0-set-clock", "step1-hwclock", "step2-wait", "after"]
