"""A run's charts kept next to its evidence, drawn once, as soon as it ends.

Drawing is the slow part of a page (matplotlib's import alone is over a
second, each chart a few tenths); a session that draws each run's charts
when the run ends (while other guests still run, or in its pytest worker)
leaves the page only HTML to write. The files:

    <run folder>/charts.json      {"key": ..., "charts": [{"file", "title", "alt"}]}
    <run folder>/chart-<n>.png    each chart

`key` covers everything a chart is drawn from (the observations, the
scenario as it ran, the run's name and machine) and the drawing code
itself: a page built from a folder whose charts are stale or missing draws
them again and never trusts them.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.report import timeline
from sandbox.report.evidence import RunEvidence

CHARTS_FILE = files.CHARTS


@functools.cache
def _drawing_code() -> bytes:
    """The digest of timeline.py, read once per process (a page asks for every run)."""
    return hashlib.sha256(Path(timeline.__file__).read_bytes()).digest()


def key(run: RunEvidence) -> str:
    """What the run's charts are drawn from, and how."""
    h = hashlib.sha256(_drawing_code())
    for part in (run.name.encode(), run.machine.encode(), run.scenario_text.encode(),
                 _bytes(run.folder / files.OBSERVATIONS)):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def load(run: RunEvidence) -> list[timeline.Chart] | None:
    """The charts kept for this run, or None when missing, unreadable or stale."""
    try:
        index = json.loads((run.folder / CHARTS_FILE).read_text())
        if index.get("key") != key(run):
            return None
        return [timeline.Chart(str(c["title"]), (run.folder / str(c["file"])).read_bytes(), str(c["alt"]))
                for c in index["charts"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(run: RunEvidence, charts: list[timeline.Chart]) -> None:
    """Write the charts, then the index naming them (a killed write leaves no index)."""
    evidence, entries = Evidence(run.folder), []
    for n, chart in enumerate(charts, 1):
        name = files.chart(n)
        evidence.write_bytes(name, chart.png)
        entries.append({"file": name, "title": chart.title, "alt": chart.alt})
    evidence.write(CHARTS_FILE, json.dumps({"key": key(run), "charts": entries}, indent=1) + "\n")
