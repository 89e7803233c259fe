"""sandbox.scenario: the parser, the model and the catalogue (rootfs/manifest.toml): parsing and validation."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sandbox.base.errors import InputError
from sandbox.base.paths import REPO
from sandbox.scenario.catalogue import FLAVOURS, load_catalogue, parse_catalogue
from sandbox.scenario.matchers import Between, Clamped, Elapsed, Equals, ErrnoIs, Wrapped
from sandbox.scenario.model import DEFAULT_TIMEOUT, Expectation, ProbeStep, Scenario, SetClockStep
from sandbox.scenario.parser import load_scenario, parse_scenario, scenario_name
from sandbox.scenario.suite import machine_flavours
from sandbox.base.timefmt import ROLLOVER, parse_time

FILE = "scenarios/demo/case.toml"
CALLS = ("time", "gettimeofday", "clock_gettime")
MANIFEST_TEXT = """\
[initramfs]
scripts = ["init"]

[probe.clock]
calls.time = { seconds = "time", nsec = "number" }
calls.gettimeofday = { seconds = "time", usec = "number" }
calls.clock_gettime = { seconds = "time", nsec = "number", label = "text", when = "time", limit = "time", took = "number" }
flavours = ["time32-syscall", "time32-libc", "time64", "native64"]

[probe.stat]
calls.stat = { mtime = "time" }
flavours = ["time32-libc", "time64"]

[tool.settime]
calls.settimeofday = { target = "time" }
"""
CATALOGUE = parse_catalogue(MANIFEST_TEXT, "rootfs/manifest.toml")
MACHINES = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3]}


def parse(text: str) -> Scenario:
    return parse_scenario(textwrap.dedent(text), FILE, CATALOGUE, MACHINES)


# --- catalogue --------------------------------------------------------------


def test_catalogue_reads_probes_and_tools() -> None:
    assert CATALOGUE.names() == ("clock", "stat")
    assert CATALOGUE.tools == ("settime",)
    clock, stat = CATALOGUE.probes
    assert (clock.calls, clock.flavours) == (CALLS, FLAVOURS)
    assert (stat.calls, stat.flavours) == (("stat",), ("time32-libc", "time64"))
    assert dict(clock.call_info["gettimeofday"].fields) == {"seconds": "time", "usec": "number"}
    assert clock.is_time("time", "seconds") and not clock.is_time("gettimeofday", "usec")
    assert CATALOGUE.tool("settime").is_time("settimeofday", "target")
    assert CATALOGUE.get("stat") is stat
    assert CATALOGUE.get("nope") is None


def test_a_call_printed_in_some_flavours_only() -> None:
    catalogue = parse_catalogue(MANIFEST_TEXT + '[probe.ipc]\ncalls.stat_raw = {}\ncalls.stat_libc = {}\n'
                                'only.stat_libc = ["time32-libc", "time64"]\n', "m.toml")
    ipc = catalogue.get("ipc")
    assert ipc.call_info["stat_raw"].flavours == FLAVOURS
    assert ipc.call_info["stat_libc"].flavours == ("time32-libc", "time64")


def test_catalogue_loads_from_a_file(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_TEXT)
    assert load_catalogue(manifest) == CATALOGUE


@pytest.mark.parametrize(
    "text, message",
    [
        ("[probe.clock]\nflavours = ['time64']\n", "m.toml: probe.clock.calls: missing (required)"),
        ("[probe.clock]\ncalls = ['time']\n", "m.toml: probe.clock.calls: expected a table, got a list"),
        ("[probe.clock]\ncalls.time = { seconds = 'date' }\n",
         "m.toml: probe.clock.calls.time.seconds: unknown field kind 'date' (known: time, number, text, errno)"),
        ("[probe.clock]\ncalls.time = { errno = 'errno' }\n",
         "m.toml: probe.clock.calls.time.errno: 'errno' is implicit for every call; do not declare it"),
        ("[probe.clock]\ncalls.time = {}\nonly.date = ['time64']\n", "m.toml: probe.clock.only.date: no call 'date' in calls"),
        (
            "[probe.clock]\ncalls.time = {}\nflavours = ['time65']\n",
            "m.toml: probe.clock.flavours[0]: unknown flavour 'time65' (known: time32-syscall, time32-libc, time64, native64)",
        ),
        ("[probe.clock\n", "m.toml: toml: Expected ']' at the end of a table declaration (at line 1, column 13)"),
    ],
)
def test_catalogue_errors(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_catalogue(text, "m.toml")
    assert str(caught.value) == message


# --- a valid scenario ---------------------------------------------------------

VALID = """\
title = "clock reads across the rollover"
description = "a demo"
machines = ["x86_64"]
rtc = "2038-01-19T03:13:50Z"
timeout = 60

[[step]]
phase = "before"
probe = "clock"
flavours = ["time32-syscall", "time32-libc"]
args = ["time", "clock_gettime"]

[step.expect.time32-syscall.time]
seconds = { wrapped = ["2038-01-19T03:14:30Z", "2038-01-19T03:15:30Z"] }
nsec = 0
[step.expect.time32-libc.time]
errno = "EOVERFLOW"
[step.expect.time32-libc.clock_gettime]
errno = "none"
seconds = { between = ["2038-01-19T03:13:50Z", 2147483647] }
label = "plain text"
when = "2038-01-19T03:14:07Z"
limit = { clamped = "2038-01-19T03:14:07Z" }
took = { elapsed = [0.5, 2] }

[[step]]
set-clock = "2038-01-19T03:14:30Z"
via = "clock_settime"

[[step]]
phase = "after"
probe = "clock"
"""


def test_valid_scenario_parses_to_the_model() -> None:
    assert parse(VALID) == Scenario(
        file=FILE,
        name="demo/case",
        title="clock reads across the rollover",
        description="a demo",
        rtc=parse_time("2038-01-19T03:13:50Z"),
        timeout=60,
        warp=True,  # the default: no disk image
        machines={"x86_64": FLAVOURS},
        steps=(
            ProbeStep(
                index=0,
                phase="before",
                probe="clock",
                flavours=("time32-syscall", "time32-libc"),
                args=("time", "clock_gettime"),
                expectations=(
                    Expectation("time32-syscall", "time", "seconds", Wrapped(ROLLOVER + 22, ROLLOVER + 82)),
                    Expectation("time32-syscall", "time", "nsec", Equals(0)),
                    Expectation("time32-libc", "time", "errno", ErrnoIs("EOVERFLOW")),
                    Expectation("time32-libc", "clock_gettime", "errno", ErrnoIs(None)),
                    Expectation(
                        "time32-libc", "clock_gettime", "seconds", Between(ROLLOVER - 18, ROLLOVER - 1, as_time=True)
                    ),
                    Expectation("time32-libc", "clock_gettime", "label", Equals("plain text")),
                    Expectation("time32-libc", "clock_gettime", "when", Equals(ROLLOVER - 1, as_time=True)),
                    Expectation("time32-libc", "clock_gettime", "limit", Clamped(ROLLOVER - 1, as_time=True)),
                    Expectation("time32-libc", "clock_gettime", "took", Elapsed(0.5, 2.0)),
                ),
            ),
            SetClockStep(index=1, time=ROLLOVER + 22, via="clock_settime"),
            ProbeStep(index=2, phase="after", probe="clock", flavours=FLAVOURS),
        ),
    )


def test_defaults_every_machine_all_flavours_settimeofday_and_timeout() -> None:
    scenario = parse(
        """\
        title = "t"
        rtc = 2038-01-19T03:13:50Z
        [[step]]
        set-clock = 2038-01-19T03:14:30Z
        [[step]]
        phase = "p"
        probe = "stat"
        """
    )
    assert dict(scenario.machines) == MACHINES
    assert scenario.timeout == DEFAULT_TIMEOUT
    assert scenario.description == ""
    assert scenario.rtc == ROLLOVER - 18  # TOML date-time literals work as well as strings
    assert scenario.steps == (
        SetClockStep(index=0, time=ROLLOVER + 22, via="settimeofday"),
        ProbeStep(index=1, phase="p", probe="stat", flavours=("time32-libc", "time64")),
    )


def test_describe_texts() -> None:
    assert Wrapped(ROLLOVER + 22, ROLLOVER + 82).describe() == (
        "wrapped into [2038-01-19T03:14:30Z, 2038-01-19T03:15:30Z]"
    )
    assert Between(1, 5).describe() == "in [1, 5]"
    assert Between(0, ROLLOVER - 1, as_time=True).describe() == "in [1970-01-01T00:00:00Z, 2038-01-19T03:14:07Z]"
    assert Clamped(ROLLOVER - 1, as_time=True).describe() == "clamped at 2038-01-19T03:14:07Z"
    assert Equals("x").describe() == "= 'x'"
    assert ErrnoIs("EOVERFLOW").describe() == "errno EOVERFLOW"
    assert ErrnoIs(None).describe() == "no errno (call succeeded)"
    assert Elapsed(0.5, 2.0).describe() == "elapsed in [0.5 s, 2.0 s]"


@pytest.mark.parametrize(
    "file, name",
    [("scenarios/clock/rollover.toml", "clock/rollover"), ("/x/scenarios/ipc/sem.toml", "ipc/sem"), ("/tmp/t.toml", "t")],
)
def test_scenario_name(file: str, name: str) -> None:
    assert scenario_name(file) == name


# --- bad inputs: each gives one exact line naming the file and the key --------

HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
PROBE = '[[step]]\nphase = "p"\nprobe = "clock"\n'


def expect_block(field: str) -> str:
    return HEAD + PROBE + f"[step.expect.time64.time]\nseconds = {field}\n"


BAD = [
    ("unknown top key", HEAD + "colour = 1\n" + PROBE,
     "colour: unknown key 'colour' (known: description, disk, expect-kernel, kernel, kernel-args, machines, rtc, step, "
     "time-server, timeout, title, tree, varying, warp)"),
    ("warp not a boolean", HEAD + 'warp = "yes"\n' + PROBE, "warp: expected true or false, got a string"),
    ("missing title", 'rtc = "2038-01-19T03:13:50Z"\n' + PROBE, "title: missing (required)"),
    ("empty title", 'title = ""\nrtc = "2038-01-19T03:13:50Z"\n' + PROBE, "title: must not be empty"),
    ("missing rtc", 'title = "t"\n' + PROBE, "rtc: missing (required)"),
    ("no steps", HEAD, "step: missing (required)"),
    ("toml syntax error", HEAD + "[[step]\n", "toml: Expected ']]' at the end of an array declaration (at line 3, column 7)"),
    ("unparsable rtc", 'title = "t"\nrtc = "2038-01-19T3:13:50Z"\n' + PROBE,
     "rtc: not a time: '2038-01-19T3:13:50Z' (expected YYYY-MM-DDTHH:MM:SSZ, in UTC)"),
    ("rtc out of range", 'title = "t"\nrtc = "2106-02-07T06:28:16Z"\n' + PROBE,
     "rtc: 2106-02-07T06:28:16Z is outside 1970-01-01T00:00:00Z..2099-12-31T23:59:59Z: QEMU's -rtc base sets "
     "the emulated CMOS/RTC clock, which only holds 1970..2099; reach later times with a set-clock step"),
    ("rtc before 1970", 'title = "t"\nrtc = "1969-12-31T23:59:59Z"\n' + PROBE,
     "rtc: 1969-12-31T23:59:59Z is outside 1970-01-01T00:00:00Z..2099-12-31T23:59:59Z: QEMU's -rtc base sets "
     "the emulated CMOS/RTC clock, which only holds 1970..2099; reach later times with a set-clock step"),
    ("unknown machine", HEAD + 'machines = ["x86_64", "sparc"]\n' + PROBE,
     "machines[1]: unknown machine 'sparc' (known: x86_64, i386)"),
    ("bad timeout", HEAD + "timeout = 0\n" + PROBE, "timeout: expected a positive number of seconds, got 0"),
    ("unknown step key", HEAD + PROBE + "colour = 1\n",
     "step[0].colour: unknown key 'colour' for a probe step (known: args, expect, expect-on, faketime, flavours, linkage, phase, probe, reset-clock, under, userland)"),
    ("key of another action", HEAD + '[[step]]\nset-clock = "2038-01-19T03:14:30Z"\nphase = "p"\n',
     "step[0].phase: unknown key 'phase' for a set-clock step (known: set-clock, via)"),
    ("two actions in a step", HEAD + PROBE + 'set-clock = "2038-01-19T03:14:30Z"\n',
     "step[0]: more than one action (probe, set-clock); a step has exactly one of: probe, run, set-clock, hwclock, wait, sysctl, ntp-sync"),
    ("no action in a step", HEAD + '[[step]]\nphase = "p"\n', "step[0]: no action; a step has exactly one of: probe, run, set-clock, hwclock, wait, sysctl, ntp-sync"),
    ("unparsable set-clock", HEAD + '[[step]]\nset-clock = "2038-01-19T03:14:61Z"\n',
     "step[0].set-clock: not a time: '2038-01-19T03:14:61Z' (second 61 out of range 0..59)"),
    ("unknown via", HEAD + '[[step]]\nset-clock = "2038-01-19T03:14:30Z"\nvia = "hwclock"\n',
     "step[0].via: unknown way to set the clock 'hwclock' (known: settimeofday, clock_settime)"),
    ("unknown probe", HEAD + '[[step]]\nphase = "p"\nprobe = "clk"\n', "step[0].probe: unknown probe 'clk' (known: clock, stat)"),
    ("missing phase", HEAD + '[[step]]\nprobe = "clock"\n', "step[0].phase: missing (required)"),
    ("duplicate phase", HEAD + PROBE + PROBE, "step[1].phase: phase 'p' already names step[0]"),
    ("unknown step flavour", HEAD + PROBE + 'flavours = ["time64", "time65"]\n',
     "step[0].flavours[1]: unknown flavour 'time65' (known: time32-syscall, time32-libc, time64, native64)"),
    ("flavour the probe lacks", HEAD + '[[step]]\nphase = "p"\nprobe = "stat"\nflavours = ["native64"]\n',
     "step[0].flavours[0]: unknown flavour 'native64' (known: time32-libc, time64)"),
    ("unknown expect flavour", HEAD + PROBE + "[step.expect.time65.time]\nseconds = 1\n",
     "step[0].expect.time65: unknown flavour 'time65' (probe clock has: time32-syscall, time32-libc, time64, native64)"),
    ("expect flavour not in step", HEAD + PROBE + 'flavours = ["time64"]\n[step.expect.native64.time]\nseconds = 1\n',
     "step[0].expect.native64: flavour 'native64' is not among this step's flavours (time64)"),
    ("unknown call", HEAD + PROBE + "[step.expect.time64.tme]\nseconds = 1\n",
     "step[0].expect.time64.tme: unknown call 'tme' (probe clock has: time, gettimeofday, clock_gettime)"),
    ("unknown matcher", expect_block("{ betwen = [1, 2] }"),
     "step[0].expect.time64.time.seconds: unknown matcher 'betwen' (known: between, clamped, elapsed, matches, outside, wrapped)"),
    ("two matchers", expect_block("{ between = [1, 2], clamped = 3 }"),
     "step[0].expect.time64.time.seconds: a matcher table has exactly one key, got: between, clamped"),
    ("lo greater than hi", expect_block('{ between = ["2038-01-19T03:15:00Z", "2038-01-19T03:14:00Z"] }'),
     "step[0].expect.time64.time.seconds.between: lo 2038-01-19T03:15:00Z is greater than hi 2038-01-19T03:14:00Z"),
    ("between not a pair", expect_block("{ between = [1] }"),
     "step[0].expect.time64.time.seconds.between: expected [lo, hi] (two items, each a number or a time)"),
    ("unparsable time in matcher", expect_block('{ between = ["2038-01-19T03:14", 5] }'),
     "step[0].expect.time64.time.seconds.between: not a time: '2038-01-19T03:14' (expected YYYY-MM-DDTHH:MM:SSZ, in UTC)"),
    ("unparsable bare time", expect_block('"2038-01-32T00:00:00Z"'),
     "step[0].expect.time64.time.seconds: not a time: '2038-01-32T00:00:00Z' (day 32 out of range 1..31)"),
    ("wrapped before the rollover", expect_block('{ wrapped = ["2038-01-19T03:14:00Z", "2038-01-19T03:15:00Z"] }'),
     "step[0].expect.time64.time.seconds.wrapped: a wrapped 32-bit time lies in [2038-01-19T03:14:08Z, 2106-02-07T06:28:15Z]"),
    ("negative elapsed", expect_block("{ elapsed = [-1, 2] }"),
     "step[0].expect.time64.time.seconds.elapsed: a duration cannot be negative: -1"),
    ("boolean value", expect_block("true"),
     "step[0].expect.time64.time.seconds: expected a number or a time string, got a boolean"),
    ("unknown errno", HEAD + PROBE + '[step.expect.time64.time]\nerrno = "EOVERFLW"\n',
     "step[0].expect.time64.time.errno: unknown errno name 'EOVERFLW'"),
    ("errno as a table", HEAD + PROBE + "[step.expect.time64.time]\nerrno = { between = [1, 2] }\n",
     "step[0].expect.time64.time.errno: expected an errno name such as 'EOVERFLOW', or 'none'"),
    ("empty field table", HEAD + PROBE + "[step.expect.time64.time]\n", "step[0].expect.time64.time: no fields to check"),
    ("args not strings", HEAD + PROBE + "args = [1]\n", "step[0].args[0]: expected a string, got an integer"),
    ("under nothing", HEAD + PROBE + "under = []\n",
     'step[0].under: expected a tool and its arguments, e.g. ["seccomp32", "deny", "--"]'),
    ("under a probe", HEAD + PROBE + 'under = ["clock", "--"]\n', "step[0].under[0]: unknown tool 'clock' (known: settime)"),
    ("under not a list", HEAD + PROBE + 'under = "settime"\n', "step[0].under: expected a list of strings, got a string"),
]


@pytest.mark.parametrize("text, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_input_gives_one_line_naming_file_and_key(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_scenario(text, FILE, CATALOGUE, MACHINES)
    assert str(caught.value) == f"{FILE}: {message}"
    assert "\n" not in str(caught.value)


def test_a_probe_step_runs_under_a_tool() -> None:
    step = parse(HEAD + PROBE + 'under = ["settime", "--"]\n').probe_steps[0]
    assert step.under == ("settime", "--")
    assert parse(HEAD + PROBE).probe_steps[0].under == ()


def test_numbered_errno_names_are_accepted() -> None:
    scenario = parse(HEAD + PROBE + '[step.expect.time64.time]\nerrno = "E150"\n')
    assert scenario.probe_steps[0].expectations == (Expectation("time64", "time", "errno", ErrnoIs("E150")),)


def test_load_scenario_reports_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.toml"
    with pytest.raises(InputError) as caught:
        load_scenario(missing, CATALOGUE, MACHINES)
    assert str(caught.value) == f"{missing}: file: cannot read: No such file or directory"


# --- the real scenario --------------------------------------------------------

ROLLOVER_FILE = REPO / "scenarios" / "clock" / "rollover.toml"
REAL_MANIFEST = REPO / "rootfs" / "manifest.toml"


def check_rollover(scenario: Scenario) -> None:
    assert scenario.file == "scenarios/clock/rollover.toml"
    assert scenario.rtc == parse_time("2038-01-19T03:13:50Z")
    before, set_clock, after = scenario.steps
    assert set_clock == SetClockStep(index=1, time=parse_time("2038-01-19T03:14:30Z"), via="settimeofday")
    assert (before.phase, after.phase) == ("before", "after")
    assert len(before.expectations) == 12
    assert {e.matcher for e in before.expectations} == {Between(ROLLOVER - 18, ROLLOVER - 1, as_time=True)}
    by_flavour = {(e.flavour, e.call): e.matcher for e in after.expectations}
    for call in CALLS:
        assert by_flavour["time32-syscall", call] == Wrapped(ROLLOVER + 22, ROLLOVER + 142)
        assert by_flavour["time32-libc", call] == ErrnoIs("EOVERFLOW")
        assert by_flavour["time64", call] == Between(ROLLOVER + 22, ROLLOVER + 142, as_time=True)
        assert by_flavour["native64", call] == Between(ROLLOVER + 22, ROLLOVER + 142, as_time=True)


def test_rollover_scenario_validates_against_a_manifest_of_that_shape() -> None:
    check_rollover(load_scenario(ROLLOVER_FILE, CATALOGUE, machine_flavours()))


def test_rollover_scenario_validates_against_the_real_catalogue() -> None:
    check_rollover(load_scenario(ROLLOVER_FILE, load_catalogue(REAL_MANIFEST), machine_flavours()))
