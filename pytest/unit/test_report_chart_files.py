"""A run's charts drawn when it ends and taken by the page (sandbox/report/chart_files.py)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from captured_results import build_results

from sandbox.report import chart_files
from sandbox.report.evidence import default_reader, read_run, run_folders
from sandbox.report.html import REPORT_FILE, keep_charts, write_report

ROLLOVER_RUN = "clock-rollover/x86_64"
MARK = b"\x89PNG kept, not drawn again"


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    folder, _ = build_results(tmp_path, failing=True, panic=True)
    return folder


def test_kept_charts_are_what_the_page_would_draw(results: Path) -> None:
    run = results / ROLLOVER_RUN
    keep_charts(run)
    index = json.loads((run / chart_files.CHARTS_FILE).read_text())
    assert [c["file"] for c in index["charts"]] == ["chart-1.png"]
    kept = chart_files.load(read_run(run, default_reader()))
    assert kept is not None and kept[0].png.startswith(b"\x89PNG") and "Clock readings" in kept[0].alt
    write_report(results)
    assert base64.b64encode(kept[0].png).decode() in (results / REPORT_FILE).read_text()


def test_the_page_takes_kept_charts_without_drawing(results: Path) -> None:
    run = results / ROLLOVER_RUN
    keep_charts(run)
    (run / "chart-1.png").write_bytes(MARK)  # what the page shows is the file, not a new drawing
    write_report(results)
    assert base64.b64encode(MARK).decode() in (results / REPORT_FILE).read_text()


@pytest.mark.parametrize("change", ["observations", "index", "missing png"])
def test_stale_or_broken_charts_are_drawn_again(results: Path, change: str) -> None:
    run = results / ROLLOVER_RUN
    keep_charts(run)
    (run / "chart-1.png").write_bytes(MARK)
    if change == "observations":  # a run whose evidence changed after its charts were drawn
        with (run / "observations.jsonl").open("a") as out:
            out.write((run / "observations.jsonl").read_text().splitlines()[0] + "\n")
    elif change == "index":
        (run / chart_files.CHARTS_FILE).write_text("{not json")
    else:
        (run / "chart-1.png").unlink()
    assert chart_files.load(read_run(run, default_reader())) is None
    write_report(results)
    page = (results / REPORT_FILE).read_text()
    assert base64.b64encode(MARK).decode() not in page and "Clock readings against true time" in page


def test_a_run_without_charts_keeps_an_empty_list(results: Path) -> None:
    reader = default_reader()
    for folder in run_folders(results):
        keep_charts(folder, reader)
        kept = chart_files.load(read_run(folder, reader))
        assert kept is not None  # every run has its index, even with nothing to draw
    assert sum(len(chart_files.load(read_run(f, reader)) or []) for f in run_folders(results)) == 3


def test_keeping_never_raises(tmp_path: Path) -> None:
    keep_charts(tmp_path / "no such run")
    assert not (tmp_path / "no such run").exists()
