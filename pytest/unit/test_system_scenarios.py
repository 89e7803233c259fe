"""Whole-system scenarios (scenarios/system/*.toml): each one's expectations
judged against a real run's evidence, trimmed into pytest/data/system/<stem>/
(no boot), the same expectations failing when the evidence says otherwise,
and the one-line errors of a bad file, before anything boots."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.base.errors import InputError
from sandbox.base.paths import REPO, SYSTEM_SCENARIOS
from sandbox.base.timefmt import parse_time
from sandbox.scenario import suite
from sandbox.system import side_by_side
from sandbox.system.catalogue import load_systems
from sandbox.system.expect import log_lines
from sandbox.system.facts import unit_facts
from sandbox.system.rehearse import observed_from
from sandbox.system.scenario import (JournalExpectation, SystemScenario, TimerExpectation, UnitExpectation,
                                     is_system_scenario,
                                     load_system_scenario, parse_system_scenario, system_scenario_files)
from sandbox.system.scenario_run import judge_evidence
from sandbox.system.timers import shown_time
from sandbox.system.verdict import judge

DATA = REPO / "pytest" / "data" / "system"
FILES = system_scenario_files()
SYSTEMS = load_systems()


def captured(path: Path) -> Path:
    return DATA / path.stem


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_system_scenario_holds_on_its_captured_run(path: Path) -> None:
    scenario = load_system_scenario(path)
    folder = captured(path)
    assert folder.is_dir(), f"{path.name}: no captured run in {folder}"
    checks = judge_evidence(scenario, folder)
    assert len(checks) == 1 + len(scenario.units) + len(scenario.journal) + len(scenario.timers)
    assert checks[0].what == "outcome"
    failed = [c.line() for c in checks if not c.passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_expectation_fails_when_turned_around(path: Path) -> None:
    """Every expectation of the file, turned into its opposite, fails on the
    same evidence: none of them holds whatever the run shows."""
    scenario = load_system_scenario(path)
    folder = captured(path)

    def judged(turned: SystemScenario) -> list[bool]:
        return [c.passed for c in judge_evidence(turned, folder)[1:]]  # [0]: the outcome, unchanged

    other = "completed" if scenario.outcome != "completed" else "died"
    assert not judge_evidence(dataclasses.replace(scenario, outcome=other), folder)[0].passed
    for unit in scenario.units:
        other = "ok" if unit.verdict != "ok" else "broke"
        turned = dataclasses.replace(scenario, units=(UnitExpectation(unit.unit, other),), journal=(), timers=())
        assert not any(judged(turned)), unit
        if unit.line:
            wrong = dataclasses.replace(turned, units=(UnitExpectation(unit.unit, unit.verdict, "^no such line$"),))
            assert not any(judged(wrong)), unit
    for line in scenario.journal:
        turned = dataclasses.replace(scenario, units=(), timers=(),
                                     journal=(JournalExpectation(line.pattern, not line.present),))
        assert not any(judged(turned)), line
    for timer in scenario.timers:
        turned = dataclasses.replace(scenario, units=(), journal=(),
                                     timers=(TimerExpectation(timer.timer, not timer.ran_after_rollover),))
        assert not any(judged(turned)), timer


def test_the_three_debian_runs_are_there() -> None:
    assert {p.stem for p in FILES} >= {"debian12-armhf-night", "debian13-armhf-night", "debian12-armhf-booted-past"}


def test_a_unit_missing_from_the_run_fails() -> None:
    scenario = load_system_scenario(SYSTEM_SCENARIOS / "debian12-armhf-night.toml")
    scenario = dataclasses.replace(scenario, units=(UnitExpectation("nginx.service", "ok"),), journal=(),
                                   timers=(TimerExpectation("nginx-reload.timer", True),))
    checks = judge_evidence(scenario, DATA / "debian12-armhf-night")[1:]
    assert [c.passed for c in checks] == [False, False]
    assert "no row" in checks[0].observed and "no such timer" in checks[1].observed


def test_the_log_holds_journal_syslog_and_console_lines() -> None:
    lines = log_lines(observed_from(DATA / "debian12-armhf-night"))
    assert any(line.startswith("kernel[0]: time32: ") for line in lines)  # the journal's kernel transport
    assert any("systemd[1]: chrony.service: Failed" in line for line in lines)  # syslog
    assert any(line.startswith("systemd-journald[83]: Assertion") for line in lines)  # the console


def test_shown_times() -> None:
    assert shown_time("Tue 2038-01-19 03:15:00 UTC") == 2147483700
    assert shown_time("n/a") is None and shown_time("") is None


def test_the_probe_suite_leaves_the_system_folder_out() -> None:
    assert FILES and not set(FILES) & set(suite.scenario_files())
    assert all(is_system_scenario(p) for p in FILES)
    assert not is_system_scenario(REPO / "scenarios" / "clock" / "rollover.toml")


def test_side_by_side_fits_100_columns() -> None:
    systems = []
    for name in ("debian12-armhf-night", "debian13-armhf-night"):
        observed = observed_from(DATA / name)
        systems.append((name, [judge(f) for f in unit_facts(observed)]))
    lines = side_by_side.table(systems) + side_by_side.broke(systems)
    assert all(len(line) <= 100 for line in lines)
    assert any(line.startswith("chrony.service ") and "broke" in line for line in lines)
    assert any(line.startswith("  broke systemd-journald.service: assertion") for line in lines)


GOOD = """title = "t"
system = "debian12-armhf"
[units]
"cron.service" = "broke"
"""


def top(lines: str) -> str:
    """GOOD with top-level keys added (before its first table)."""
    return GOOD.replace("[units]", lines + "[units]")


BAD = [
    # (what, the file's text, the key named, a part of the message)
    ("unknown top key", top('sytem = "x"\n'), "sytem", "unknown key 'sytem'"),
    ("unknown unit key", 'title = "t"\nsystem = "debian12-armhf"\n[units]\n'
     '"cron.service" = { verdict = "broke", lines = "x" }\n', "units.cron.service.lines", "unknown key 'lines'"),
    ("unknown verdict", GOOD.replace('"broke"', '"brok"'), "units.cron.service.verdict", "unknown verdict 'brok'"),
    ("not a unit", GOOD.replace('"cron.service"', '"cron"'), "units.cron", "not a unit the table judges"),
    ("a mount has no verdict", GOOD.replace('"cron.service"', '"-.mount"'), "units.-.mount", "not a unit"),
    ("bad regex", GOOD.replace('"broke"', '{ verdict = "broke", line = "missed (" }'),
     "units.cron.service.line", "not a regular expression"),
    ("bad journal regex", GOOD + '[journal]\nmust = ["a[b"]\n', "journal.must[0]", "not a regular expression"),
    ("unknown journal key", GOOD + '[journal]\nshould = ["a"]\n', "journal.should", "unknown key"),
    ("unknown image", GOOD.replace("debian12-armhf", "debian14-armhf"), "system", "unknown system 'debian14-armhf'"),
    ("end before start", top('start = "2038-01-19T04:00:00Z"\nend = "2038-01-19T03:00:00Z"\n'), "end",
     "not after start"),
    ("start past the RTC", top('start = "2100-01-01T00:00:00Z"\n'), "start", "outside 1970-01-01"),
    ("not a time", top('start = "tomorrow"\n'), "start", ""),
    ("a span too long", top('end = "2038-01-21T00:00:00Z"\n'), "end", "more than 24 hours"),
    ("a timer on a span before the rollover", top('start = "2038-01-18T22:00:00Z"\n'
         'end = "2038-01-19T03:00:00Z"\n') + '[timers]\n"y2038-tick.timer" = { ran-after-rollover = true }\n',
     "timers.y2038-tick.timer", "no run can come after it"),
    ("a timer not a boolean", GOOD + '[timers]\n"y2038-tick.timer" = { ran-after-rollover = "yes" }\n',
     "timers.y2038-tick.timer.ran-after-rollover", "expected true or false"),
    ("not a timer", GOOD + '[timers]\n"cron.service" = { ran-after-rollover = true }\n', "timers.cron.service",
     "not a timer"),
    ("expects nothing", 'title = "t"\nsystem = "debian12-armhf"\n', "(file)", "expects nothing"),
    ("no system", 'title = "t"\n[units]\n"cron.service" = "ok"\n', "system", "missing"),
    ("toml", GOOD + "[units\n", "toml", ""),
    ("unknown outcome", top('outcome = "crashed"\n'), "outcome", "unknown outcome 'crashed'"),
    ("units of a boot that died", top('outcome = "died"\n'), "units", "no unit table when the boot ends 'died'"),
]


@pytest.mark.parametrize("what,text,key,message", BAD, ids=[b[0] for b in BAD])
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(what: str, text: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_system_scenario(text, "scenarios/system/x.toml", "system/x", SYSTEMS)
    assert err.value.file == "scenarios/system/x.toml" and err.value.key == key, str(err.value)
    assert message in err.value.message and "\n" not in str(err.value)


def test_a_good_file_reads() -> None:
    scenario = parse_system_scenario(GOOD, "x.toml", "system/x", SYSTEMS)
    assert (scenario.start, scenario.end) == ("2038-01-18T22:00:00Z", "2038-01-19T06:00:00Z")
    assert scenario.units == (UnitExpectation("cron.service", "broke"),)


def _sandbox(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "sandbox", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_validate_takes_system_scenarios_and_refuses_a_bad_one_before_boot(tmp_path: Path) -> None:
    result = _sandbox("validate", *map(str, FILES))
    assert result.returncode == 0, result.stderr
    assert f"{len(FILES)} of whole systems" in result.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace('"broke"', '{ verdict = "broke", why = "x" }'))
    for verb in ("validate", "system"):
        result = _sandbox(verb, str(bad))
        assert result.returncode == 2, (verb, result.stderr)
        assert f"{bad}: units.cron.service.why: unknown key 'why'" in result.stderr, result.stderr
        assert not (tmp_path / "results").exists()


def test_the_suite_deselects_system_scenarios_without_the_option() -> None:
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'pytest'}", "Y2038_RESULTS": "/tmp/y2038-collect-only"}
    base = [sys.executable, "-m", "pytest", "-c", "pytest/pytest.ini", "--rootdir", ".", "--collect-only", "-q",
            "-p", "no:cacheprovider", "scenarios/system"]
    plain = subprocess.run(base, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert f"{len(FILES)} deselected" in plain.stdout, plain.stdout + plain.stderr
    chosen = subprocess.run(base + ["--system"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
                            check=False)
    assert f"{len(FILES)} test" in chosen.stdout and "deselected" not in chosen.stdout, chosen.stdout + chosen.stderr
    assert all(f"{p.name}::" in chosen.stdout for p in FILES)


def test_the_captured_evidence_is_a_run_of_the_scenario_span() -> None:
    """Each captured run is of its scenario's span: its baseline within ten
    minutes after the scenario's start (the boot and settling), its last
    look within ten minutes after the end; a boot that died has neither."""
    for path in FILES:
        scenario = load_system_scenario(path)
        boot = json.loads((captured(path) / "boot.json").read_text())
        assert boot["outcome"] == scenario.outcome, path.name
        if scenario.outcome != "completed":
            assert boot["start"] == boot["end"] == "", path.name
            continue
        for ours, theirs in ((scenario.start, boot["start"]), (scenario.end, boot["end"])):
            assert 0 <= parse_time(theirs) - parse_time(ours) <= 600, (path.name, ours, theirs)


def test_the_system_demo_runs_two_captured_scenarios_and_refuses_other_options() -> None:
    from sandbox.app.system_verb import DEMO_SYSTEM_SCENARIOS
    names = [SYSTEM_SCENARIOS / name for name in DEMO_SYSTEM_SCENARIOS]
    assert set(names) <= set(FILES) and all(captured(p).is_dir() for p in names)
    assert [load_system_scenario(p).system for p in names] == ["debian12-armhf", "debian13-armhf"]
    for extra in (["--live"], ["--machine", "armhf"]):
        result = _sandbox("demo", "system", *extra)
        assert result.returncode == 2 and "demo system: the systems are armhf's" in result.stderr, result.stderr


def test_the_docs_example_is_a_valid_system_scenario() -> None:
    text = (REPO / "docs" / "system-rehearsal.md").read_text()
    example = text.split("## System scenarios", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    scenario = parse_system_scenario(example, "docs/system-rehearsal.md", "system/example", SYSTEMS)
    assert scenario.system == "debian12-armhf" and len(scenario.units) == 2 and scenario.timers
