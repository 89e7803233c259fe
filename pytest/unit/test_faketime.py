"""Probe steps in a userland, under libfaketime: parsed, checked and planned
without booting (sandbox/scenario/faketime.py, steps.py, run/plan.py)."""
from __future__ import annotations

import shlex
import textwrap

import pytest

from sandbox.base.errors import InputError
from sandbox.base.machines import FLAVOURS
from sandbox.base.timefmt import parse_time
from sandbox.run.plan import plan, userland_commands
from sandbox.scenario.catalogue import parse_catalogue
from sandbox.scenario.faketime import FakeTimeError, parse_faketime
from sandbox.scenario.model import ProbeStep
from sandbox.scenario.parser import parse_scenario
from sandbox.scenario.userlands import parse_userlands

FILE = "scenarios/faketime/case.toml"
CATALOGUE = parse_catalogue(textwrap.dedent("""\
    [probe.clock]
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
    calls.time = { seconds = "time" }
    """), "manifest.toml")
MACHINES = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3]}
USERLANDS = parse_userlands(textwrap.dedent("""\
    mirror = "http://deb.debian.org/debian"
    keyring = "/k.gpg"
    packages = ["coreutils"]
    [userland.pc64]
    suite = "bookworm"
    arch = "amd64"
    packages = ["libfaketime"]
    [userland.pc32]
    suite = "bookworm"
    arch = "i386"
    packages = ["libfaketime"]
    [userland.bare32]
    suite = "bookworm"
    arch = "i386"
    [userland.arm]
    suite = "bookworm"
    arch = "armhf"
    packages = ["libfaketime"]
    """), "userlands.toml")
HEAD = 'title = "t"\nrtc = "2026-12-01T00:00:00Z"\nmachines = ["x86_64"]\n'
STEP = '[[step]]\nphase = "faked"\nprobe = "clock"\nuserland = "pc32"\nfaketime = "2038-01-19T03:14:30Z"\n'


def parse(text: str):
    return parse_scenario(text, FILE, CATALOGUE, MACHINES, USERLANDS)


def test_a_time_starts_the_clock_there_and_an_offset_is_passed_as_written() -> None:
    start = parse_faketime("2038-01-19T03:14:30Z")
    assert (start.value, start.start, start.offset) == ("@2038-01-19 03:14:30", parse_time("2038-01-19T03:14:30Z"),
                                                        None)
    assert parse_faketime("2106-02-07T06:28:20Z").value == "@2106-02-07 06:28:20"
    assert [(f.value, f.offset) for f in map(parse_faketime, ("+12y", "-3d", "+3600", "+90m"))] == [
        ("+12y", 12 * 365 * 86_400), ("-3d", -3 * 86_400), ("+3600", 3600), ("+90m", 5400)]
    assert parse_faketime("+1h").environment("i386-linux-gnu") == {
        "LD_PRELOAD": "/usr/lib/i386-linux-gnu/faketime/libfaketime.so.1", "FAKETIME": "+1h"}


@pytest.mark.parametrize("text", ["next tuesday", "2038-01-19 03:14:30", "@2038-01-19 03:14:30", "+12w", "12y",
                                  "+", "2038-01-19T03:14:30", "x2"])
def test_other_forms_are_refused_with_the_forms_named(text: str) -> None:
    with pytest.raises(FakeTimeError, match="expected \"YYYY-MM-DDTHH:MM:SSZ\""):
        parse_faketime(text)


def test_a_probe_step_in_a_userland_runs_its_abi_flavours_under_faketime() -> None:
    scenario = parse(HEAD + STEP)
    (step,) = scenario.steps
    assert isinstance(step, ProbeStep)
    assert step.userland == "pc32" and step.flavours == ("time32-syscall", "time32-libc", "time64")
    assert dict(step.environment) == {"LD_PRELOAD": "/usr/lib/i386-linux-gnu/faketime/libfaketime.so.1",
                                      "FAKETIME": "@2038-01-19 03:14:30"}
    assert scenario.userlands == scenario.probe_userlands == ("pc32",)
    amd64 = parse(HEAD + STEP.replace("pc32", "pc64")).steps[0]
    assert amd64.flavours == ("native64",) and dict(amd64.environment)["LD_PRELOAD"].startswith(
        "/usr/lib/x86_64-linux-gnu/")


def test_the_guest_command_changes_root_into_the_userland_with_the_environment() -> None:
    (step,) = parse(HEAD + STEP + 'flavours = ["time64"]\nargs = ["a b"]\n').steps
    (command,) = plan((step,), FLAVOURS)
    assert (command.flavour, command.phase, command.must_succeed) == ("time64", "faked", False)
    assert shlex.split(command.shell) == [
        "cd", "/", "&&", "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "TZ=UTC0", "LC_ALL=C",
        "LD_PRELOAD=/usr/lib/i386-linux-gnu/faketime/libfaketime.so.1", "FAKETIME=@2038-01-19 03:14:30",
        "chroot", "/userlands/pc32", "/probes/time64/clock", "a b"]
    (plain,) = plan(parse(HEAD + STEP.replace('faketime = "2038-01-19T03:14:30Z"\n', 'flavours = ["time64"]\n')
                          ).steps, FLAVOURS)
    assert "FAKETIME" not in plain.shell and plain.shell.endswith("chroot /userlands/pc32 /probes/time64/clock")
    (mount,) = userland_commands(("pc32",))
    assert "mount -t tmpfs tmp /userlands/pc32/tmp" in mount.shell


def test_a_static_linkage_runs_the_initramfs_probe_outside_the_chroot_with_the_same_environment() -> None:
    (step,) = parse(HEAD + STEP + 'flavours = ["time64"]\nlinkage = "static"\n').steps
    assert step.static and dict(step.environment)["LD_PRELOAD"] == \
        "/userlands/pc32/usr/lib/i386-linux-gnu/faketime/libfaketime.so.1"
    (command,) = plan((step,), FLAVOURS)
    assert shlex.split(command.shell)[-3:] == [
        "LD_PRELOAD=/userlands/pc32/usr/lib/i386-linux-gnu/faketime/libfaketime.so.1",
        "FAKETIME=@2038-01-19 03:14:30", "/probes/time64/clock"]
    assert "chroot" not in command.shell
    assert not parse(HEAD + STEP + 'linkage = "dynamic"\n').steps[0].static


def test_a_static_probe_step_is_unchanged() -> None:
    (command,) = plan(parse(HEAD + '[[step]]\nphase = "p"\nprobe = "clock"\nflavours = ["time64"]\n').steps, FLAVOURS)
    assert command.shell == "/probes/time64/clock"


@pytest.mark.parametrize("text, key, message", [
    (HEAD + STEP.replace("2038-01-19T03:14:30Z", "next tuesday"), "step[0].faketime", "unknown faketime 'next tuesday'"),
    (HEAD + STEP.replace('"pc32"', '"bare32"'), "step[0].faketime", "userland 'bare32' has no libfaketime"),
    (HEAD + STEP.replace('userland = "pc32"\n', ""), "step[0].faketime", "needs a `userland`"),
    (HEAD + STEP.replace('"pc32"', '"arm"'), "step[0].userland", "machine 'x86_64' cannot run it"),
    (HEAD + STEP.replace('"pc32"', '"nope"'), "step[0].userland", "unknown userland 'nope'"),
    (HEAD.replace('["x86_64"]', '["i386"]') + STEP.replace('"pc32"', '"pc64"'), "step[0].userland",
     "userland 'pc64' is amd64; machine 'i386' cannot run it"),
    (HEAD + STEP + 'flavours = ["native64"]\n', "step[0].flavours[0]", "unknown flavour 'native64'"),
    (HEAD + STEP.replace('"2038-01-19T03:14:30Z"', "2038"), "step[0].faketime", "expected a string"),
    (HEAD + STEP + 'linkage = "shared"\n', "step[0].linkage", "unknown linkage 'shared' (known: dynamic, static)"),
    (HEAD + '[[step]]\nphase = "p"\nprobe = "clock"\nlinkage = "static"\n', "step[0].linkage", "needs a `userland`"),
])
def test_bad_faketime_steps_name_file_and_key(text: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    line = str(caught.value)
    assert line.startswith(f"{FILE}: {key}: ") and message in line and "\n" not in line


def test_a_step_in_a_userland_cannot_run_under_a_tool() -> None:
    catalogue = parse_catalogue(textwrap.dedent("""\
        [probe.clock]
        calls.time = { seconds = "time" }
        [tool.seccomp32]
        """), "manifest.toml")
    text = HEAD + STEP.replace('faketime = "2038-01-19T03:14:30Z"\n', "") + 'under = ["seccomp32", "deny", "--"]\n'
    with pytest.raises(InputError) as caught:
        parse_scenario(text, FILE, catalogue, MACHINES, USERLANDS)
    assert str(caught.value) == (f"{FILE}: step[0].under: not with a `userland`: the tools are in /tools, "
                                 "outside the userland's root")
