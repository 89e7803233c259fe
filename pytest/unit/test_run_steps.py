"""Run steps: real programs from Debian userlands (rootfs/userlands.toml),
parsed, planned and observed without booting."""
from __future__ import annotations

import sys
import textwrap

import pytest

from sandbox.base.errors import InputError
from sandbox.base.machines import FLAVOURS
from sandbox.build.userland import compile_python
from sandbox.judge.evaluate import evaluate
from sandbox.report.programs import broke, side_by_side
from sandbox.run.observations import program_observation, program_status
from sandbox.run.plan import PROGRAM, plan, userland_commands
from sandbox.scenario.catalogue import parse_catalogue
from sandbox.scenario.model import RunStep
from sandbox.scenario.parser import parse_scenario
from sandbox.scenario.userlands import load_userlands, parse_userlands

FILE = "scenarios/programs/case.toml"
CATALOGUE = parse_catalogue('[probe.clock]\ncalls.time = { seconds = "time" }\n', "manifest.toml")
MACHINES = {"x86_64": FLAVOURS, "armhf": FLAVOURS[:3]}
USERLANDS = parse_userlands(textwrap.dedent("""\
    mirror = "http://deb.debian.org/debian"
    keyring = "/k.gpg"
    packages = ["coreutils"]
    [userland.old]
    suite = "bookworm"
    arch = "armhf"
    [userland.new]
    suite = "trixie"
    arch = "armhf"
    packages = ["sqlite3"]
    [userland.pc]
    suite = "bookworm"
    arch = "i386"
    """), "userlands.toml")
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\nmachines = ["armhf"]\n'
STEP = '[[step]]\nphase = "after"\nrun = ["date", "+%s"]\nuserlands = ["old", "new"]\ntime-pattern = \'^(-?\\d+)$\'\n'


def parse(text: str):
    return parse_scenario(text, FILE, CATALOGUE, MACHINES, USERLANDS)


def test_the_repository_userlands_are_five_and_name_their_suites() -> None:
    table = load_userlands()
    assert {(u.name, u.suite, u.arch) for u in table.by_name.values()} == {
        ("debian12-armhf", "bookworm", "armhf"), ("debian13-armhf", "trixie", "armhf"),
        ("debian12-i386", "bookworm", "i386"), ("debian13-i386", "trixie", "i386"),
        ("debian12-amd64", "bookworm", "amd64")}
    assert USERLANDS.get("new").packages == ("coreutils", "sqlite3")


def test_a_run_step_is_parsed_with_its_userlands_as_flavours() -> None:
    scenario = parse(HEAD + STEP + '[step.expect.old]\nstatus = "ok"\ntime = { outside = ["2038-01-19T03:14:00Z", "2038-01-19T03:20:00Z"] }\n'
                     '[step.expect.new]\nstdout = { matches = "^2147" }\n')
    (step,) = scenario.steps
    assert isinstance(step, RunStep) and step.program == "date" and step.flavours == ("old", "new")
    assert scenario.userlands == ("old", "new")
    assert [(e.flavour, e.call, e.field, e.matcher.describe()) for e in step.expectations] == [
        ("old", "date", "status", "= 'ok'"),
        ("old", "date", "time", "a number outside [2038-01-19T03:14:00Z, 2038-01-19T03:20:00Z]"),
        ("new", "date", "stdout", "matches /^2147/")]


@pytest.mark.parametrize("text, key, message", [
    (HEAD + STEP.replace('"old", "new"', '"old", "nope"'), "step[0].userlands[1]", "unknown userland 'nope'"),
    (HEAD.replace('["armhf"]', '["x86_64", "armhf"]') + STEP, "step[0].userlands[0]",
     "userland 'old' is armhf; machine 'x86_64' cannot run it"),
    (HEAD + STEP + '[step.expect.old]\nseconds = 1\n', "step[0].expect.old.seconds", "unknown field 'seconds'"),
    (HEAD + STEP + '[step.expect.pc]\nexit = 0\n', "step[0].expect.pc", "not among this step's userlands"),
    (HEAD + STEP.replace("'^(-?\\d+)$'", "'no group'"), "step[0].time-pattern", "needs a group"),
    (HEAD + STEP.replace("'^(-?\\d+)$'", "'('"), "step[0].time-pattern", "not a regular expression"),
    (HEAD + STEP.replace('run = ["date", "+%s"]', "run = []"), "step[0].run", "expected the program"),
    (HEAD + STEP + "timeout = 0\n", "step[0].timeout", "expected a number of seconds"),
    (HEAD + STEP + '[step.expect.old]\nstdout = { matches = "(" }\n', "step[0].expect.old.stdout.matches",
     "not a regular expression"),
])
def test_bad_run_steps_name_file_and_key(text: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert str(caught.value).startswith(f"{FILE}: {key}: ")
    assert message in str(caught.value)


def test_a_run_step_is_planned_once_per_userland_in_its_root() -> None:
    scenario = parse(HEAD + STEP + '\n[[step]]\nphase = "in"\nrun = ["cat"]\nuserlands = ["new"]\nstdin = "a b"\n')
    commands = plan(scenario.steps, FLAVOURS[:3], "time64")
    assert [(c.phase, c.flavour, c.output, c.call) for c in commands] == [
        ("after", "old", PROGRAM, "date"), ("after", "new", PROGRAM, "date"), ("in", "new", PROGRAM, "cat")]
    assert commands[0].shell == ("/tools/inroot /userlands/old 10 PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "
                                 "HOME=/root TZ=UTC0 LC_ALL=C -- date +%s </dev/null")
    assert commands[2].shell == ("printf '%s' 'a b' | /tools/inroot /userlands/new 10 "
                                 "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root TZ=UTC0 LC_ALL=C -- cat")
    assert [c.shell for c in userland_commands(("old",))] == [
        "mount -t proc proc /userlands/old/proc && mount -o bind /dev /userlands/old/dev"
        " && mount -t tmpfs tmp /userlands/old/tmp"]


@pytest.mark.parametrize("code, status", [(0, "ok"), (1, "exit 1"), (137, "timeout"), (139, "signal SIGSEGV")])
def test_a_programs_exit_code_is_named(code: int, status: str) -> None:
    assert program_status(code) == status


def observe(userland: str, stdout: str, code: int = 0, stderr: str = ""):
    return program_observation(scenario="programs/case", machine="armhf", phase="after", userland=userland,
                               call="date", exit_code=code, stdout=stdout, stderr=stderr,
                               time_pattern=r"^(-?\d+)$")


def test_an_old_program_that_breaks_is_judged_and_marked() -> None:
    scenario = parse(HEAD + STEP + '[step.expect.old]\ntime = { outside = ["2038-01-19T03:14:00Z", "2038-01-19T03:20:00Z"] }\n'
                     '[step.expect.new]\ntime = { between = ["2038-01-19T03:14:00Z", "2038-01-19T03:20:00Z"] }\n')
    old, new = observe("old", "-1092244600\n"), observe("new", "2147483670\n")
    assert (old.values["time"], new.values["time"]) == (-1092244600, 2147483670)
    assert evaluate(scenario, "armhf", [old, new]).passed
    assert not evaluate(scenario, "armhf", [new.__class__(**{**old.__dict__, "values": new.values}), new]).passed
    rtc = scenario.rtc  # no clock step: the guest clock runs from the RTC
    assert broke(old, rtc) and not broke(new, rtc)
    assert broke(observe("old", "", 1, "OSError: [Errno 75] Value too large"), rtc)
    assert broke(observe("new", "2147483670\n"), rtc + 3600)  # a right time, but an hour early
    table = side_by_side(scenario, [old, new])
    row = table.splitlines()[2]
    assert row.startswith("after") and "! 1935-05-23" in row and "  2038-01-19T03:14:30Z" in row
    assert all(len(line) <= 100 for line in table.splitlines())


def test_a_program_that_prints_no_time_has_no_time_field() -> None:
    assert "time" not in observe("new", "no number here\n").values


def test_a_program_is_found_in_a_userland_through_its_links(tmp_path) -> None:
    from sandbox.build.userland import UserlandArtifact, has_program
    root = tmp_path / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "etc" / "alternatives").mkdir(parents=True)
    (root / "usr" / "bin" / "gawk").write_text("#!")
    (root / "usr" / "bin" / "gawk").chmod(0o755)
    (root / "usr" / "bin" / "readme").write_text("not a program")
    (root / "bin").symlink_to("usr/bin")  # merged /usr, relative
    (root / "etc" / "alternatives" / "awk").symlink_to("/usr/bin/gawk")  # absolute: inside the root
    (root / "usr" / "bin" / "awk").symlink_to("/etc/alternatives/awk")
    (root / "usr" / "bin" / "loop").symlink_to("/usr/bin/loop")
    artifact = UserlandArtifact(USERLANDS.get("old"), "k", root, tmp_path / "x.cpio", ())
    assert has_program(artifact, "gawk") and has_program(artifact, "awk") and has_program(artifact, "/bin/gawk")
    assert not has_program(artifact, "readme")  # not executable
    assert not has_program(artifact, "python3") and not has_program(artifact, "loop")


def test_the_userlands_python_modules_are_compiled_as_an_installed_debian_has_them(tmp_path) -> None:
    """compile_python: the host's own minor version only, as unchecked
    hash-based .pyc files (PEP 552 flags 0b01), which the guest loads
    whatever the archive makes the sources' mtime."""
    ours = tmp_path / "usr" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    other = tmp_path / "usr" / "lib" / "python3.99"
    for folder in (ours / "encodings", other):
        folder.mkdir(parents=True)
        (folder / "mod.py").write_text("X = 1\n")
    assert compile_python(tmp_path) == [ours]
    pyc = ours / "encodings" / "__pycache__" / f"mod.{sys.implementation.cache_tag}.pyc"
    assert pyc.is_file() and int.from_bytes(pyc.read_bytes()[4:8], "little") == 0b01
    assert not (other / "__pycache__").exists()
