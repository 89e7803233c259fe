"""The authoring guide's example is the scenario file the tests run."""
from __future__ import annotations

import re

from sandbox.base import paths
from sandbox.scenario import suite

GUIDE = paths.REPO / "docs" / "scenario-authoring.md"
EXAMPLE = paths.SCENARIOS / "guide" / "clock-2040.toml"


def test_the_guide_shows_the_example_file_unchanged() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), re.S)
    assert blocks and blocks[0] == EXAMPLE.read_text()


def test_the_example_validates_and_expects_every_flavour() -> None:
    scenario = suite.load(EXAMPLE)
    probe_step = scenario.probe_steps[0]
    assert {e.flavour for e in probe_step.expectations} == set(probe_step.flavours)
