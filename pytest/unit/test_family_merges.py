"""The family files that replaced near-copies: each row expands to exactly the
scenario of the file it replaced (read from git, at the commit before the
merge), step for step and expectation for expectation; only the file, the
name and the row differ."""
from __future__ import annotations

import dataclasses
import subprocess

import pytest

from sandbox.base.paths import REPO
from sandbox.scenario import suite
from sandbox.scenario.comments import parse_comments
from sandbox.scenario.model import ProbeStep, RunStep, Scenario
from sandbox.scenario.parser import parse_scenarios
from sandbox.scenario.userlands import load_userlands

BEFORE = "9531957"  # main before the merge
MERGED = {  # family file -> {row: the file it replaced}
    "scenarios/faketime/userlands-32bit.toml": {
        "i386": "scenarios/faketime/i386.toml",
        "i386-debian13": "scenarios/faketime/i386-debian13.toml",
        "armhf": "scenarios/faketime/armhf.toml",
        "armhf-debian13": "scenarios/faketime/armhf-debian13.toml",
    },
    "scenarios/programs/old-vs-new.toml": {
        "x86_64": "scenarios/programs/x86_64-i386-vs-amd64.toml",
        "i386": "scenarios/programs/i386-debian12-vs-debian13.toml",
        "armhf": "scenarios/programs/armhf-debian12-vs-debian13.toml",
    },
}
ROWS = [(family, row, old) for family, rows in MERGED.items() for row, old in rows.items()]


def _old_text(path: str) -> str:
    shown = subprocess.run(["git", "-C", str(REPO), "show", f"{BEFORE}:{path}"],
                           capture_output=True, text=True)
    assert shown.returncode == 0, f"git show {BEFORE}:{path}: {shown.stderr.strip()}"
    return shown.stdout


def _old(path: str) -> Scenario:
    (scenario,) = parse_scenarios(_old_text(path), path, suite.catalogue(), suite.machine_flavours(),
                                  load_userlands())
    return scenario


def _content(scenario: Scenario) -> Scenario:
    """What a run does and judges: all but the file, the name and the row."""
    return dataclasses.replace(scenario, file="", name="", variant="")


@pytest.mark.parametrize(("family", "row", "old"), ROWS, ids=[f"{row}<-{old}" for _, row, old in ROWS])
def test_each_row_expands_to_the_scenario_of_the_file_it_replaced(family: str, row: str, old: str) -> None:
    (new,) = suite.load_all([REPO / f"{family}[{row}]"])
    before = _old(old)
    assert new.variant == row
    for index, (now, then) in enumerate(zip(new.steps, before.steps, strict=True)):
        assert now == then, (index, getattr(then, "phase", ""))
    assert _content(new) == _content(before)


@pytest.mark.parametrize(("family", "row", "old"), ROWS, ids=[f"{row}<-{old}" for _, row, old in ROWS])
def test_each_row_explains_every_expectation_as_the_file_it_replaced(family: str, row: str, old: str) -> None:
    """What the report shows behind each cell (sandbox/scenario/comments.py)."""
    then, now = parse_comments(_old_text(old)), parse_comments((REPO / family).read_text())
    scenario = _old(old)
    explained = 0
    for step in scenario.steps:
        assert now.step(step.index, row) == then.step(step.index), step.index
        if not isinstance(step, (ProbeStep, RunStep)):
            continue
        for machine in scenario.machines:
            for e in step.expectations_on(machine):
                assert now.explain(step.index, e.flavour, e.call, machine, row) == \
                    then.explain(step.index, e.flavour, e.call, machine), (step.index, e.flavour, e.call, machine)
                explained += bool(then.explain(step.index, e.flavour, e.call, machine))
    assert explained > 90


@pytest.mark.parametrize("family", MERGED)
def test_a_family_has_the_rows_of_the_files_it_replaced_and_they_are_gone(family: str) -> None:
    assert [s.variant for s in suite.load_all([REPO / family])] == list(MERGED[family])
    assert not [old for old in MERGED[family].values() if (REPO / old).exists()]


def test_the_demo_opens_with_the_programs_row_of_its_machine() -> None:
    from sandbox.app.verbs import DEMO_PROGRAMS
    for machine, name in DEMO_PROGRAMS.items():
        (scenario,) = suite.load_all([REPO / "scenarios" / name])
        assert list(scenario.machines) == [machine], name
