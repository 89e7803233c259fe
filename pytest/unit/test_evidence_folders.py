"""A results folder someone sent, given to `just report`: the shared table of
hostile evidence folders (sandbox/app/reliability_evidence.py CASES), each
refused with one line and the host file never in report.html; the run keeps
its scenario copy from its start and the report reads only that copy."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from captured_results import MACHINE, fake_target
from replay_guest import ReplayGuest, captured

from sandbox.app import reliability_evidence as hostile
from sandbox.app.jobs import run_and_judge
from sandbox.base import evidence as files
from sandbox.base import evidence_read as read
from sandbox.base.errors import InputError
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest
from sandbox.scenario import suite


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile.baseline(tmp_path_factory.mktemp("evidence") / "results")


def test_the_sound_folder_reports_clean(base: Path, tmp_path: Path) -> None:
    outcome = hostile.try_case(hostile.EvidenceCase("none", lambda w: None, 0, ""), tmp_path, base)
    assert outcome.code == 0 and outcome.lines == [] and not outcome.leaked


@pytest.mark.parametrize("case", hostile.CASES, ids=[c.name for c in hostile.CASES])
def test_a_hostile_evidence_folder_is_refused_with_one_line(case: hostile.EvidenceCase, base: Path,
                                                            tmp_path: Path) -> None:
    outcome = hostile.try_case(case, tmp_path, base)  # in a process of its own: a FIFO must not block the suite
    assert outcome.code is not None, "no answer: it blocked"
    assert not outcome.traceback, outcome.error
    assert not outcome.leaked, "the host file's bytes are in report.html"
    assert outcome.code == case.exit and len(outcome.lines) == 1, outcome.error
    assert outcome.lines[0].startswith("error: ") and case.says in outcome.lines[0], outcome.lines


def test_the_section_counts_nothing_wrong_and_shows_every_case(tmp_path: Path) -> None:
    section = hostile.measure(tmp_path, boot=False)
    assert section.tally == hostile.Tally()
    assert [row[0] for row in section.rows] == [c.name for c in hostile.CASES]
    assert all(row[3] == "right" for row in section.rows), [r for r in section.rows if r[3] != "right"]


@pytest.mark.parametrize("raw", ["/etc/shadow", "../x", "a/b", "..", ".", "", "x\0y", 5, None])
def test_a_name_from_a_file_is_one_plain_name(raw: object) -> None:
    with pytest.raises(InputError, match=r"charts.json: charts\[0\].file: "):
        read.plain_name(raw, "charts.json", "charts[0].file")


def test_bounded_json_names_the_key() -> None:
    assert read.loads('{"a": [1, 2.5, "NaN"]}', "f.json") == {"a": [1, 2.5, "NaN"]}
    for text, message in [('{"a": {"b": [1, NaN]}}', "f.json: a.b[1]: NaN is not a JSON number"),
                          ('{"a": -Infinity}', "f.json: a: -Infinity is not a JSON number"),
                          ('{"a": 1e400}', "f.json: a: 1e400 is past a float's range"),
                          ('[' + "1" * 309 + ']', "f.json: [0]: an integer of 309 digits"),
                          ("[" * 65 + "]" * 65, "f.json: json: nested more than 64")]:
        with pytest.raises(InputError) as err:
            read.loads(text, "f.json")
        assert str(err.value).startswith(message)
    assert read.loads("[" * 64 + "]" * 64, "f.json") is not None  # the limit itself
    assert read.loads('["' + "[" * 100 + '"]', "f.json") == ["[" * 100]  # brackets in strings do not count


def test_a_run_keeps_its_scenario_copy_from_its_start(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL, after the guest started) still has its scenario.toml."""
    scenario = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
    transcript, console = captured("normal")
    evidence = tmp_path / "results" / "s" / scenario.slug / MACHINE
    seen: list[bool] = []
    source = Path(scenario.file) if Path(scenario.file).is_absolute() else REPO / scenario.file

    def start(request: BootRequest) -> ReplayGuest:
        seen.append((request.evidence / files.SCENARIO_COPY).read_text() == source.read_text()
                    if (request.evidence / files.SCENARIO_COPY).is_file() else False)
        return ReplayGuest(request, transcript, console)

    run_and_judge(fake_target(), scenario, evidence, start)
    assert seen == [True]


def test_the_report_reads_no_scenario_from_the_repository(base: Path, tmp_path: Path) -> None:
    """A folder without its copy, and a run.json naming another scenario: shown
    without a matrix, never looked up in scenarios/ by name."""
    def make(w: hostile.Where) -> None:
        (w.run / files.SCENARIO_COPY).unlink()
        (w.run / files.FACTS).unlink()  # no scenario_file either: the name alone
        info = json.loads((w.run / files.RUN).read_text())
        (w.run / files.RUN).write_text(json.dumps({**info, "scenario": "guide/clock-2040"}))
    outcome = hostile.try_case(hostile.EvidenceCase("no copy", make, 0, ""), tmp_path, base)
    page = (tmp_path / "results" / files.PAGE).read_text()
    assert outcome.code == 0 and "kept no copy of its scenario file" in page
    title = suite.load(REPO / "scenarios" / "guide" / "clock-2040.toml").title
    assert title not in page  # the repository's file of that name is not read
