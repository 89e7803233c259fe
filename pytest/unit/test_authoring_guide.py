"""The authoring guide: its example is the scenario file the tests run, its
probe reference is generated from rootfs/manifest.toml, and its sample
outputs are what the tool prints."""
from __future__ import annotations

import re
from pathlib import Path

import captured_results
import pytest

from sandbox.base import paths
from sandbox.base.errors import InputError
from sandbox.report import probe_reference, text
from sandbox.judge.judged import JudgedRun
from sandbox.run.observations import PROBE_KEYS
from sandbox.scenario import parser, suite
from sandbox.scenario.catalogue import load_catalogue

GUIDE = paths.REPO / "docs" / "scenario-authoring.md"
EXAMPLE = paths.SCENARIOS / "guide" / "clock-2040.toml"
CONTEXT_KEYS = {"scenario", "machine", "phase", *PROBE_KEYS}  # what the host adds to a probe's line, and its own


def test_the_guide_shows_the_example_file_unchanged() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text(), re.S)
    assert blocks and blocks[0] == EXAMPLE.read_text()


def test_the_example_validates_and_expects_every_flavour() -> None:
    scenario = suite.load(EXAMPLE)
    probe_step = scenario.probe_steps[0]
    assert {e.flavour for e in probe_step.expectations} == set(probe_step.flavours)


# --- the probe reference, generated from rootfs/manifest.toml ---------------

def test_the_probe_reference_is_the_generators_output() -> None:
    """Regenerate with `python3 -m sandbox.app.reference_docs` after changing a probe."""
    expected = probe_reference.markdown(load_catalogue())
    assert probe_reference.section_in(GUIDE.read_text()) == expected


def test_every_probe_says_what_it_does_and_every_call_is_listed() -> None:
    catalogue = load_catalogue()
    section = probe_reference.section_in(GUIDE.read_text())
    for probe in catalogue.probes:
        assert probe.about, f"rootfs/manifest.toml: probe.{probe.name}.about: missing (the guide needs it)"
        assert f"### {probe.name}\n" in section
        for call in probe.calls:
            assert f"| `{call}` |" in section


def test_the_reference_holds_what_the_probes_really_printed(tmp_path: Path) -> None:
    """Every observation of the captured demo (clock/rollover replayed from
    pytest/data/agent/normal.log, the other scenarios from pytest/data/demo
    and pytest/data/filetimes: probes' own lines from real x86_64 guests) is
    a call the reference lists, printed by a flavour it names, with fields it
    names."""
    catalogue = load_catalogue()
    _, runs = captured_results.build_results(tmp_path, failing=False)
    seen: set[str] = set()
    for run in runs:
        for observed in run.record.observations:
            probe = catalogue.get(observed.probe)
            if probe is None:  # a tool's line (settime of a reset-clock)
                continue
            call = probe.call_info[observed.call]
            assert observed.flavour in call.flavours, observed
            assert set(observed.values) <= set(call.fields), observed
            seen.add(observed.probe)
    assert {"clock", "ipc", "timers", "mqueue", "futex", "timeouts", "filetimes"} <= seen


# --- the guide's sample outputs, against what the tool prints -----------------

def _block_after(marker: str) -> str:
    text = GUIDE.read_text()
    return text.split(marker, 1)[1].split("```\n", 1)[1].split("```", 1)[0]


def test_the_error_sample_is_what_validation_prints() -> None:
    typo = EXAMPLE.read_text().replace(
        'seconds = { between = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"] }\n\n# The native',
        'seconds = { betwen = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"] }\n\n# The native')
    with pytest.raises(InputError) as refused:
        parser.parse_scenario(typo, "scenarios/guide/clock-2040.toml", suite.catalogue(),
                              suite.machine_flavours(), suite.load_userlands())
    # sandbox/app/cli.py prints an InputError as "error: <it>"
    assert _block_after("a mistake gives one line") == f"error: {refused.value}\n"


def _rollover_run(tmp: Path, failing: bool) -> tuple[JudgedRun, Path]:
    results, runs = captured_results.build_results(tmp, failing=failing)
    return next(run for run in runs if run.record.scenario == "clock/rollover"), results


def test_the_matrix_sample_is_what_report_text_renders_from_the_captured_demo(tmp_path: Path) -> None:
    run, _ = _rollover_run(tmp_path, failing=False)
    rendered = text.phase_tables(run.record, captured_results.rollover(tmp_path, False), run.result)
    assert _block_after("prints one table per probe step") == rendered + "\n"


def test_the_failure_sample_is_what_report_text_renders_from_the_captured_demo(tmp_path: Path) -> None:
    run, results = _rollover_run(tmp_path, failing=True)
    rendered = text.failure_report(run.record, run.result).replace(str(results), "results/<stamp>-demo")
    assert _block_after("A failing scenario prints") == rendered + "\n"
