"""Honest verdicts and bounded work: no run passes without testing
anything, no small input keeps the host busy, every crash is one line.

Each test names the defect it holds down; each fails on a386157 (the commit
the issue was probed at).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from replay_guest import ReplayGuest, frame, prepared

from sandbox.app import caller, cli, verbs
from sandbox.app.exit_codes import EXIT_ERROR, EXIT_INFRA, EXIT_STEP, exit_code
from sandbox.base.errors import InputError, shown
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest
from sandbox.judge.evaluate import evaluate
from sandbox.run.observations import Observation, program_observation
from sandbox.judge.judged import JudgedRun
from sandbox.run.record import STEP_FAILED, RunRecord
from sandbox.run.runner import run_scenario
from sandbox.scenario import patterns, suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.parser import parse_scenarios
from sandbox.scenario.steps import ALSO_PRINTS
from sandbox.scenario.userlands import load_userlands

FILE = "scenarios/hostile/case.toml"
HEAD = 'title = "hostile"\nrtc = "2038-01-19T03:13:50Z"\nmachines = ["x86_64"]\n'
PROBE = '[[step]]\nphase = "p"\nprobe = "clock"\n'
EXPECT = '[step.expect.time64.clock_gettime]\nerrno = "none"\n'
RUN = ('[[step]]\nphase = "r"\nrun = ["date", "+%s"]\nuserlands = ["debian12-amd64"]\n'
       '[step.expect.debian12-amd64.date]\nexit = 0\n')


def parse(text: str) -> tuple[Scenario, ...]:
    return parse_scenarios(text, FILE, suite.catalogue(), suite.machine_flavours(), load_userlands())


def refused(text: str) -> str:
    with pytest.raises(InputError) as caught:
        parse(text)
    message = str(caught.value)
    assert "\n" not in message and "\x1b" not in message and len(message) < 1100
    return message[len(FILE) + 2:]


def write(tmp_path: Path, text: str, name: str = "case.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------
# A run passes only if it tested something.


def test_a_file_that_judges_nothing_is_refused_unless_it_is_to_be_recorded(tmp_path: Path) -> None:
    for text in (HEAD + PROBE, HEAD + "[[step]]\nwait = 5\n"):
        with pytest.raises(InputError, match="nothing is judged on x86_64"):
            suite.load_all([write(tmp_path, text)])
    (scenario,) = suite.load_all([write(tmp_path, HEAD + PROBE)], recording=True)  # what `just record` fills
    assert scenario.expectations_for("x86_64") == ()


def test_a_machine_none_of_whose_flavours_is_expected_judges_nothing(tmp_path: Path) -> None:
    text = HEAD.replace('["x86_64"]', '["x86_64", "i386"]') + PROBE + EXPECT.replace("time64", "native64")
    with pytest.raises(InputError, match="nothing is judged on i386"):
        suite.load_all([write(tmp_path, text)])


def test_every_scenario_of_the_repository_judges_something_on_each_machine() -> None:
    for scenario in suite.load_all(suite.scenario_files()):  # pytest ids stay: nothing refused
        assert all(scenario.expectations_for(m) or scenario.expect_kernel for m in scenario.machines), scenario.name


def test_an_expectation_on_a_call_the_args_leave_out_is_refused_before_boot() -> None:
    assert refused(HEAD + PROBE + 'args = ["time"]\n' + EXPECT) == (
        "step[0].expect.time64.clock_gettime: the step's args ['time'] run only time: "
        "call 'clock_gettime' is never printed (name it in args too)")
    parse(HEAD + PROBE + 'args = ["time", "clock_gettime"]\n' + EXPECT)
    timers = '[[step]]\nphase = "p"\nprobe = "timers"\nargs = ["2038-01-19T03:20:00Z", "timer_settime"]\n'
    parse(HEAD + timers + '[step.expect.time64.timer_gettime]\nerrno = "none"\n')  # it prints timer_gettime too


def test_the_calls_a_call_also_prints_are_those_of_the_probe_sources() -> None:
    """ALSO_PRINTS is the C sources' PROBE_PRINTS where the word is a call of the catalogue."""
    catalogue = suite.catalogue()
    found = {}
    for source in sorted((REPO / "rootfs" / "probes").glob("*.c")):
        for word, printed in re.findall(r'\{\s*"(\w+)",\s*\w+,\s*PROBE_PRINTS\(([^)]*)\)', source.read_text()):
            probe = catalogue.get(source.stem)
            names = tuple(n for n in re.findall(r'"(\w+)"', printed) if n != word)
            if probe is not None and word in probe.calls:
                found[(source.stem, word)] = names
    assert found == dict(ALSO_PRINTS)


def _boot_replaying(tmp_path: Path, scenario: Scenario, replies: list[list[str]]) -> RunRecord:
    transcript = ["@@Y2038 READY 6.1.192+", *[line for reply in replies for line in reply]]

    def start(request: BootRequest) -> ReplayGuest:
        return ReplayGuest(request, transcript, "", "hung")
    return run_scenario(scenario, prepared(scenario, tmp_path / "evidence"), start)


def test_a_probe_that_did_not_run_is_a_failed_step_not_an_empty_pass(tmp_path: Path) -> None:
    """100,000 arguments: the shell cannot exec the probe (E2BIG), exit 127, no output."""
    (scenario,) = parse(HEAD + PROBE + 'flavours = ["time64"]\n' + EXPECT)
    record = _boot_replaying(tmp_path, scenario, [
        frame(1, "", "sh: /probes/time64/clock: Argument list too long", 127), frame(2, "dmesg")])
    assert record.outcome == STEP_FAILED
    assert "exited 127" in record.detail and "Argument list too long" in record.detail
    assert exit_code([JudgedRun(record, None)]) == EXIT_STEP


def test_run_of_a_file_for_other_machines_says_so_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--machine", "x86_64",
                     str(REPO / "scenarios" / "programs" / "old-vs-new.toml") + "[armhf]"])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR
    assert "nothing runs on x86_64 (the scenarios are for armhf): " in err and "give --machine armhf" in err


def test_without_machine_each_file_runs_on_a_machine_it_names() -> None:
    from sandbox.app.runs import machine_for
    (armhf_only,) = parse(HEAD.replace('["x86_64"]', '["armhf"]') + PROBE + 'flavours = ["time64"]\n' + EXPECT)
    (two,) = parse(HEAD.replace('["x86_64"]', '["i386", "x86_64"]') + PROBE + 'flavours = ["time64"]\n' + EXPECT)
    assert machine_for(armhf_only, None) == "armhf"  # never skipped for a machine nobody typed
    assert machine_for(two, None) == "x86_64"  # the default, when the file names it
    assert machine_for(armhf_only, "x86_64") is None  # asked for another: skipped, said
    assert machine_for(two, "i386") == "i386"


# --------------------------------------------------------------------------
# Bounded work.


def _bomb(levels: int, references: int) -> str:
    names = [f"v{i}" for i in range(levels)]
    values = "".join(f"{name} = [{', '.join([repr('$' + names[i + 1]).replace(chr(39), chr(34))] * references)}]\n"
                     if i + 1 < levels else f"{name} = [{', '.join(['1'] * references)}]\n"
                     for i, name in enumerate(names))
    return HEAD + 'kernel-args = "$v0"\n' + PROBE + EXPECT + "[values]\n" + values


def test_values_that_expand_without_end_are_refused_as_they_grow() -> None:
    """The issue's 789-byte file has seven levels (35.8 million leaves); five
    (250,000) are enough to pass the limit and still end on the old code."""
    text = _bomb(5, 12)
    assert len(text.encode()) < 800
    message = refused(text)
    assert message.startswith("kernel-args[") and "expand to more than 100000 values" in message


@pytest.mark.parametrize("pattern, why", [
    ("a{4294967296}", "a repetition bound past 1000"),
    ("a{1001}", "a repetition bound past 1000"),
    ("(" * 17 + "a" + ")" * 17, "groups nested more than 16 deep"),
    ("(" * 5000 + ")" * 5000, "10000 characters, more than 1000"),
    ("(", "not a regular expression: missing ), unterminated subpattern"),
], ids=["a{4294967296}", "a{1001}", "17 nested groups", "5000 nested groups", "unbalanced"])
def test_a_regular_expression_is_checked_at_validation(pattern: str, why: str) -> None:
    matches = HEAD + PROBE + f"[step.expect.time64.time]\nabsent = {{ matches = {pattern!r} }}\n"
    assert why in refused(matches.replace("'", '"'))
    time_pattern = HEAD + RUN.replace('userlands = [', f'time-pattern = {pattern!r}\nuserlands = ['.replace("'", '"'))
    assert why in refused(time_pattern)


def test_a_pattern_that_backtracks_without_end_fails_its_verdict_within_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MATCH_SECONDS", 0.05)
    (scenario,) = parse(HEAD + PROBE + '[step.expect.time64.time]\nabsent = { matches = "^(0|00)+x" }\n')
    observed = Observation(scenario.name, "x86_64", "p", "clock", "time64", "time", {"absent": "0" * 36})
    (verdict,) = evaluate(scenario, "x86_64", [observed]).verdicts
    assert not verdict.passed and "ran past its limit" in verdict.observed


def test_a_time_pattern_that_backtracks_finds_no_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MATCH_SECONDS", 0.05)
    observation = program_observation(scenario="s", machine="x86_64", phase="r", userland="u", call="date",
                                      exit_code=0, stdout="0" * 36, stderr="", time_pattern="^(0|00)+(x)")
    assert "time" not in observation.values


def test_judging_stops_at_its_deadline() -> None:
    (scenario,) = parse(HEAD + PROBE + EXPECT)
    observed = Observation(scenario.name, "x86_64", "p", "clock", "time64", "clock_gettime", {})
    (verdict,) = evaluate(scenario, "x86_64", [observed] * 3, seconds=-1).verdicts
    assert not verdict.passed and verdict.observed.startswith("not judged: judging ran past")


# --------------------------------------------------------------------------
# Times, crashes, budgets.


@pytest.mark.parametrize("rtc, why", [
    ('"２０３８-01-19T03:00:00Z"', "not a time: '２０３８-01-19T03:00:00Z'"),
    ("2038-01-19T03:00:00", "2038-01-19T03:00:00 is a local date-time (no offset): write it in UTC with a Z"),
    ("2038-01-19T04:00:00+01:00", "is not in UTC: write it in UTC with a Z"),
    ('"' + "2" * 5000 + '-01-19T03:00:00Z"', "22222... (5018 characters)"),
], ids=["fullwidth digits", "a local date-time", "another offset", "a 5000-digit year"])
def test_times_are_ascii_digits_in_utc_with_a_z(rtc: str, why: str) -> None:
    message = refused(HEAD.replace('"2038-01-19T03:13:50Z"', rtc) + PROBE + EXPECT)
    assert message.startswith("rtc: ") and why in message
    assert "set_int_max_str_digits" not in message


def test_a_number_of_thousands_of_digits_is_one_line() -> None:
    assert refused("timeout = " + "2" * 5000 + "\n" + HEAD + PROBE + EXPECT) == (
        "toml: a number with thousands of digits: not a value a scenario holds")


def test_waits_are_budgeted_under_time_warp_too() -> None:
    assert refused(HEAD + PROBE + EXPECT + "[[step]]\nwait = 1\n" * 20_000).startswith(
        "step: 20001 steps, more than 1000")
    assert "times the timeout" in refused(HEAD + PROBE + EXPECT + "[[step]]\nwait = 432000\n")
    parse(HEAD + PROBE + EXPECT + "[[step]]\nwait = 86400\n")  # a day under warp, as scenarios/timers do


def test_warp_off_on_the_command_line_checks_the_waits_before_any_boot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, HEAD + PROBE + EXPECT + "[[step]]\nwait = 21600\n")
    assert cli.main(["run", "--warp", "off", str(path)]) == EXIT_ERROR
    assert "step[1].wait: the waits add up to 21600 s here" in capsys.readouterr().err


# --------------------------------------------------------------------------
# What is printed, where evidence goes, which folder a path is from.


@pytest.mark.parametrize("name, slug", [("..", "scenario"), ("../x", "x"), ("...", "scenario"),
                                        ("clock/rollover", "clock-rollover"),
                                        ("filetimes/filesystems[ext4-128]", "filetimes-filesystems-ext4-128")])
def test_an_evidence_folder_is_one_plain_name(name: str, slug: str) -> None:
    assert Scenario(FILE, name, "t", 0, {}, ()).slug == slug


def test_a_file_named_dot_dot_names_its_evidence_from_its_id(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (scenario,) = suite.load_all([write(folder, HEAD + PROBE + EXPECT, "...toml")])
    assert scenario.slug == "scenario"


def test_printed_values_are_escaped_and_cut() -> None:
    text = shown("argv \x1b[2J\x07 ok\n\tnext " + "x" * 900_000)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text
    assert text.splitlines()[1].startswith("\tnext ") and len(text) < 600
    assert text.endswith("(899506 more characters)")


def test_report_refuses_a_folder_that_is_not_a_results_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["report", str(tmp_path)]) == EXIT_ERROR
    assert "not a results folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_relative_path_is_from_the_folder_just_was_typed_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # where just runs its recipes
    monkeypatch.setenv(caller.CALLER_DIR, str(tmp_path))
    assert caller.caller_path("a.toml") == tmp_path / "a.toml"
    assert caller.caller_path("/abs/a.toml") == Path("/abs/a.toml")
    monkeypatch.chdir(tmp_path)  # `just --working-directory DIR`, or Python run directly
    assert caller.caller_path("a.toml") == Path("a.toml")


# --------------------------------------------------------------------------
# QEMU without capabilities.


def test_what_the_guest_hook_starts_runs_without_capabilities() -> None:
    """The hook QEMU is started with (sandbox/guest/qemu.py): no capability
    survives the exec, and no setuid binary can give one back."""
    import subprocess

    from sandbox.guest import privileges, qemu
    child = subprocess.Popen(["sleep", "30"], preexec_fn=qemu._die_with_parent)
    try:
        status = Path(f"/proc/{child.pid}/status").read_text()
        assert privileges.effective(child.pid) == 0
        assert "CapBnd:\t0000000000000000" in status and "NoNewPrivs:\t1" in status
    finally:
        child.kill()
        child.wait()


def test_a_deb_that_unpacks_past_its_bound_is_refused_before_unpacking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 157 KB .deb unpacked to 1 GiB; here the bound is lowered instead."""
    import subprocess

    from sandbox.audit import inputs
    from sandbox.audit.static import audit_static
    tree = tmp_path / "pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "usr").mkdir()
    (tree / "usr" / "zeros").write_bytes(bytes(20_000))
    (tree / "DEBIAN" / "control").write_text("Package: bomb\nVersion: 1\nArchitecture: all\n"
                                              "Maintainer: nobody <n@example.org>\nDescription: test\n")
    subprocess.run(["dpkg-deb", "--build", "-Zxz", str(tree), str(tmp_path / "bomb.deb")], check=True,
                   capture_output=True)
    monkeypatch.setattr(inputs, "MAX_DEB_BYTES", 10_000)
    monkeypatch.chdir(tmp_path)
    result = audit_static([str(tmp_path / "bomb.deb")])
    (rejected,) = result.rejected
    assert "unpacks to more than" in rejected.line() and "not unpacked" in rejected.line()


def test_a_full_disk_is_one_line_of_infrastructure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    def full(folder: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "report.html"))
    (tmp_path / "session.json").write_text("{}")
    monkeypatch.setattr(verbs.html_report, "write_report", full)
    assert cli.main(["report", str(tmp_path)]) == EXIT_INFRA
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: No space left on device writing {tmp_path}/report.html: the host's disk")


# --------------------------------------------------------------------------
# `just reliability`'s files: the valid ones accepted, the others one line.

RELIABILITY_GROUPS = ("wait", "nothing tested", "bounded work", "budget", "times", "long values")


def test_the_reliability_files_of_these_groups_are_judged_as_the_table_says(tmp_path: Path) -> None:
    """Its wait rows once all failed on a leftover `via` key, so no valid wait
    was ever tried; here every valid row loads and every other is refused."""
    from sandbox.app import reliability_files
    cases = [c for c in reliability_files.malformed() if c.group in RELIABILITY_GROUPS and c.verb == ("validate",)]
    assert sum(c.valid for c in cases) >= 5 and len(cases) >= 30
    for case in cases:
        path = case.make(tmp_path)
        if case.valid:
            suite.load_all([path])
        else:
            with pytest.raises(InputError) as caught:
                suite.load_all([path])
            assert "\n" not in str(caught.value) and len(str(caught.value)) <= 1100, case.name


@pytest.mark.skipif(__import__("shutil").which("just") is None, reason="`just` is not installed")
def test_just_takes_a_relative_path_from_the_folder_it_was_typed_in(tmp_path: Path) -> None:
    """just runs its recipes from the repository root; the file is the caller's."""
    import shutil
    import subprocess
    shutil.copy(REPO / "scenarios" / "clock" / "rollover.toml", tmp_path / "mine.toml")
    result = subprocess.run([shutil.which("just") or "just", "--justfile", str(REPO / "justfile"), "validate",
                             "mine.toml"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "1 scenario file(s) valid" in result.stderr


def test_an_escape_sequence_in_args_reaches_report_txt_escaped(tmp_path: Path) -> None:
    from sandbox.app.jobs import write_judgement
    (scenario,) = parse(HEAD + PROBE + 'flavours = ["time64"]\nargs = ["\\u001b[2J"]\n' + EXPECT)
    line = '{"probe":"clock","flavour":"time64","call":"clock_gettime","errno":"EINVAL"}\n'
    record = _boot_replaying(tmp_path, scenario, [frame(1, line), frame(2, "dmesg")])
    judged = JudgedRun(record, evaluate(scenario, "x86_64", record.observations))
    assert not judged.passed
    write_judgement(judged)
    report = (record.evidence / "report.txt").read_text()
    assert "\x1b" not in report and "\\x1b[2J" in report
