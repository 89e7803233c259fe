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
from sandbox.base import evidence_read as read
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
                 read.read_bytes(run.folder, files.OBSERVATIONS) or b""):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()


def load(run: RunEvidence) -> list[timeline.Chart] | None:
    """The charts kept for this run, or None when missing, cut short or stale
    (drawn again). Read through the bounded reader (sandbox/base/evidence_read.py):
    a chart or index that is a link, a FIFO, past its cap, or a "file" that is
    not one plain name inside the folder ("/etc/shadow", "../x") is an
    InputError, never read."""
    index_file = str(run.folder / CHARTS_FILE)
    try:
        index = read.read_json(run.folder, CHARTS_FILE)
    except read.NotJson:
        return None
    if not isinstance(index, dict) or index.get("key") != key(run) or not isinstance(index.get("charts"), list):
        return None
    charts = []
    for n, entry in enumerate(index["charts"]):
        if not isinstance(entry, dict) or not {"file", "title", "alt"} <= entry.keys():
            return None
        name = read.plain_name(entry["file"], index_file, f"charts[{n}].file")
        png = read.read_bytes(run.folder, name)
        if png is None:
            return None
        charts.append(timeline.Chart(str(entry["title"]), png, str(entry["alt"])))
    return charts


def save(run: RunEvidence, charts: list[timeline.Chart]) -> None:
    """Write the charts, then the index naming them (a killed write leaves no index)."""
    evidence, entries = Evidence(run.folder), []
    for n, chart in enumerate(charts, 1):
        name = files.chart(n)
        evidence.write_bytes(name, chart.png)
        entries.append({"file": name, "title": chart.title, "alt": chart.alt})
    evidence.write(CHARTS_FILE, json.dumps({"key": key(run), "charts": entries}, indent=1) + "\n")
