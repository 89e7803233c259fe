"""Kernel source trees (sandbox/base/trees.py): the scenario key `tree`, which
scenarios a session of a tree runs or skips, and which kernels it needs."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from sandbox.base.errors import InputError
from sandbox.base.machines import FLAVOURS
from sandbox.base.paths import REPO
from sandbox.base.trees import TREES, not_built_for
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.parser import parse_scenario, parse_scenarios

from clock_catalogue import CATALOGUE, FILE

MACHINES = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3], "armhf": FLAVOURS[:3]}
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
STEP = '\n[[step]]\nphase = "p"\nprobe = "clock"\n'


def parse(head: str) -> Scenario:
    return parse_scenario(HEAD + textwrap.dedent(head) + STEP, FILE, CATALOGUE, MACHINES)


def test_a_scenario_pins_no_tree_unless_it_says_so() -> None:
    assert parse("").tree is None
    assert parse('tree = "6.12"\n').tree == "6.12"
    assert parse('tree = "6.1"\n').tree_on("6.12") == "6.1"
    assert parse("").tree_on("6.12") == "6.12"


@pytest.mark.parametrize("head, message", [
    ('tree = "5.10"\n', "unknown kernel tree '5.10' (known: 6.1, 6.12)"),
    ("tree = 6.12\n", "expected a string, got"),
    ('tree = ""\n', "must not be empty"),
])
def test_a_bad_tree_is_one_line_naming_file_and_key(head: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(head)
    text = str(caught.value)
    assert text.startswith(f"{FILE}: tree: ") and message in text and "\n" not in text


def test_a_variant_sets_the_tree_through_a_value() -> None:
    text = HEAD + 'tree = "$tree"\n' + STEP + textwrap.dedent("""
        [[variant]]
        name = "old"
        tree = "6.1"

        [[variant]]
        name = "new"
        tree = "6.12"
        """)
    scenarios = parse_scenarios(text, FILE, CATALOGUE, MACHINES)
    assert [(s.name, s.tree) for s in scenarios] == [("kernel/case[old]", "6.1"), ("kernel/case[new]", "6.12")]
    bad = text.replace('tree = "6.12"', 'tree = "6.13"')
    with pytest.raises(InputError, match=r"^scenarios/kernel/case.toml: tree: unknown kernel tree '6.13'"):
        parse_scenarios(bad, FILE, CATALOGUE, MACHINES)


def test_a_session_skips_other_trees_and_machines_its_tree_lacks() -> None:
    free, pinned = parse(""), parse('tree = "6.1"\n')
    assert free.skip_on("6.1", "i386") is None and free.skip_on("6.12", "x86_64") is None
    assert free.skip_on("6.12", "i386") == "the 6.12 tree is not built for i386 (only x86_64, armhf)"
    assert pinned.skip_on("6.1", "armhf") is None
    assert pinned.skip_on("6.12", "x86_64") == 'pinned to the 6.1 tree (tree = "6.1"); this session runs 6.12'
    assert not_built_for("6.1", "i386") is None
    assert set(TREES["6.12"].machines) < set(TREES["6.1"].machines)


def test_the_kernels_a_session_of_a_tree_needs() -> None:
    scenarios = [parse(""), parse('kernel = "strict"\n'), parse('kernel = "pristine"\nmachines = ["armhf"]\n'),
                 parse('tree = "6.1"\nmachines = ["x86_64"]\nkernel = "pristine"\n')]
    assert suite.kernels_needed(scenarios, "6.12") == [
        ("x86_64", "series"), ("x86_64", "strict"),
        ("armhf", "series"), ("armhf", "pristine"), ("armhf", "strict"),
    ]
    assert ("x86_64", "pristine") in suite.kernels_needed(scenarios)  # the 6.1 session's: pinned there
    assert ("i386", "series") in suite.kernels_needed(scenarios, "6.1")


def _collect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}")
    env["Y2038_RESULTS"] = env.get("TMPDIR", "/tmp") + "/y2038-test-trees-results"
    env.pop("Y2038_SESSION_RESULTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-c", "pytest/pytest.ini", "--rootdir", ".",
                           "-p", "no:cacheprovider", "-q", "-rs", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_plugin_skips_i386_on_6_12_before_any_boot() -> None:
    """The real plugin on a real scenario file: i386 is skipped with the
    reason under --tree 6.12 (a skip marked at collection: nothing builds or boots)."""
    proc = _collect("--tree", "6.12", "--machine", "i386", "scenarios/clock/rollover.toml")
    assert "1 skipped" in proc.stdout, proc.stdout + proc.stderr
    assert "the 6.12 tree is not built for i386 (only x86_64, armhf)" in proc.stdout
    listed = _collect("--tree", "6.12", "--collect-only", "scenarios/clock/rollover.toml")
    assert "scenarios/clock/rollover.toml::x86_64" in listed.stdout
    refused = _collect("--tree", "5.10", "--collect-only", "scenarios/clock/rollover.toml")
    assert refused.returncode != 0 and "invalid choice: '5.10'" in refused.stderr
