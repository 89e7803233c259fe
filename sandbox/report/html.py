"""One self-contained HTML page per results folder: results/<run>/report.html.

    write_report(folder) -> ReportStats

Read from the evidence alone (sandbox/report/evidence.py), so `just report`
rebuilds it without booting: failures first, with the expected and the
observed values; per scenario and machine the matrix of calls x flavours,
each cell coloured by what happened (sandbox/report/cells.py) and opening
onto its values, the expected ones and the comment of the scenario file that
names the function behind it (sandbox/scenario/comments.py); the clock and the
file times drawn (sandbox/report/timeline.py); the run's facts and links to
its evidence files. Styles and images are inline, nothing is fetched, no
script runs: it reads the same offline and as an attachment.

Over 400 lines because it is the page itself: its styles and each of its
sections (failures, matrices, facts, evidence links) as small functions.
"""
from __future__ import annotations

import base64
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from sandbox.base import evidence as files
from sandbox.base import evidence_read as read
from sandbox.base.evidence import KILLED, Session
from sandbox.base.timefmt import format_time
from sandbox.report import chart_files, timeline
from sandbox.report.cells import KINDS, Cell, Phase, all_fields, headline, matrix
from sandbox.run.record import INTERRUPTED
from sandbox.scenario.comments import ScenarioComments, lines_naming, parse_comments
from sandbox.report.evidence import (EVIDENCE_FILES, ResultsEvidence, RunEvidence, ScenarioReader,
                                     default_reader, read_results, read_run)

REPORT_FILE = files.PAGE
NOTE_LINES_SHOWN = 8  # a cell shows its comment whole up to this many lines, else the lines naming its call

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:18px 22px 60px}
h1{font-size:24px;margin:8px 0 2px}h2{font-size:19px;margin:30px 0 6px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.sub{color:#555;margin:0 0 12px}
code,pre,.mono{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;margin:4px 0}
a{color:#1f5fa8}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;vertical-align:middle}
.PASSED{background:#1e8449}.FAILED{background:#b00020}.INFRA{background:#6c3483}.STEP{background:#b9770e}
.counts span{margin-right:14px}
table{border-collapse:collapse;margin:6px 0 14px;background:#fff}
th,td{border:1px solid #d8d8d8;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}
table.matrix td{min-width:118px;max-width:260px}
table.matrix td.call{font-family:"DejaVu Sans Mono",monospace;font-size:12.5px;background:#f7f7f7;min-width:0}
td.k-right{background:#dff2df}td.k-wrapped{background:#ffd9a6}td.k-error{background:#f7c9c4}
td.k-clamped{background:#fff2a8}td.k-wrong{background:#f5b7a0}td.k-early{background:#e2d2f6}td.k-none{background:#eee;color:#888}
td.fail{outline:3px solid #b00020;outline-offset:-3px}
td.fail summary::before{content:"\\2717  ";color:#b00020;font-weight:700}
td.ok summary::after{content:" \\2713";color:#1e8449;font-size:11px}
details.cell>summary{list-style:none;text-decoration:underline dotted #888}
details.cell>summary::-webkit-details-marker{display:none}
details>summary{cursor:pointer;font-family:"DejaVu Sans Mono",monospace;font-size:12.5px;word-break:break-word}
details.cell[open]{min-width:230px}
details .more{font-size:12px;margin-top:4px;border-top:1px dashed #bbb;padding-top:3px}
details .more dl{display:grid;grid-template-columns:auto 1fr;gap:0 8px;margin:2px 0}
details .more dt{color:#555}details .more dd{margin:0;font-family:"DejaVu Sans Mono",monospace;word-break:break-all}
.why{background:#fff;border-left:3px solid #888;padding:2px 6px;margin:4px 0;white-space:pre-wrap;font-family:"DejaVu Sans Mono",monospace;font-size:11.5px}
.legend span.sw{display:inline-block;width:14px;height:14px;border:1px solid #aaa;vertical-align:-2px;margin:0 4px 0 12px}
.sw.k-right{background:#dff2df}.sw.k-wrapped{background:#ffd9a6}.sw.k-error{background:#f7c9c4}.sw.k-clamped{background:#fff2a8}.sw.k-wrong{background:#f5b7a0}.sw.k-early{background:#e2d2f6}
.sw.fail{outline:3px solid #b00020;outline-offset:-3px;background:#fff}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:1px 14px;margin:6px 0 10px;font-size:13px}
.facts dt{color:#555}.facts dd{margin:0}
figure{margin:8px 0 14px;background:#fff;border:1px solid #e2e2e2;display:inline-block;padding:6px}
figure img{display:block;max-width:100%}figcaption{font-size:12px;color:#555;max-width:740px}
.failure{background:#fff;border:1px solid #e6b8b8;border-left:5px solid #b00020;padding:6px 12px;margin:10px 0}
.run{background:#fff;border:1px solid #e2e2e2;border-radius:4px;padding:4px 16px 10px;margin:18px 0}
.notes ol{padding-left:22px}.notes li{margin:6px 0}
.desc{color:#333;max-width:900px}
footer{color:#666;font-size:12px;margin-top:40px}
"""


@dataclass(frozen=True)
class ReportStats:
    path: Path
    seconds: float
    size: int
    runs: int
    charts: int
    unsound: tuple[str, ...] = ()  # a line per run killed or interrupted, or whose evidence is damaged


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _state_class(run: RunEvidence) -> str:
    if run.state in ("PASSED", "FAILED"):
        return run.state
    return "STEP" if run.outcome == "step-failed" else "INFRA"


def _badge(run: RunEvidence) -> str:
    return f'<span class="badge {_state_class(run)}">{_e(run.state)}</span>'


def _run_id(run: RunEvidence) -> str:
    return "run-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in run.slug)


def _link(results: Path, run: RunEvidence, name: str) -> str:
    return f'<a href="{_e((run.folder / name).relative_to(results).as_posix())}">{_e(name)}</a>'


def _evidence_links(results: Path, run: RunEvidence) -> str:
    present = [n for n in EVIDENCE_FILES if read.regular(run.folder, n)]  # a link to a host file is not linked
    return " · ".join(_link(results, run, n) for n in present)


def _commands_by_step(run: RunEvidence) -> dict[tuple[int, str], str]:
    """(step, flavour) -> the guest command, from run.json (the flavour is the probe's folder)."""
    found: dict[tuple[int, str], str] = {}
    for command in run.info.get("commands", []):
        shell = str(command.get("shell", ""))
        parts = shell.split(" ", 1)[0].split("/")
        flavour = parts[2] if len(parts) > 3 and parts[1] == "probes" else ""
        found.setdefault((int(command.get("step", -1)), flavour), shell)
    return found


# ---- the parts of the page

def _summary_counts(runs: Sequence[RunEvidence]) -> str:
    passed = sum(r.passed for r in runs)
    failed = sum(r.state == "FAILED" for r in runs)
    other = len(runs) - passed - failed
    return (f'<p class="counts"><span><b>{len(runs)}</b> run(s)</span>'
            f'<span class="badge PASSED">{passed} passed</span> '
            f'<span class="badge FAILED">{failed} failed</span> '
            f'<span class="badge INFRA">{other} did not complete</span></p>')


def _legend() -> str:
    parts = [f'<span class="sw k-{k}"></span>{_e(k)}' for k in KINDS]
    parts.append('<span class="sw fail"></span>an expectation failed (&#x2717;); &#x2713;: every expectation held')
    titles = "; ".join(f"{k}: {v}" for k, v in KINDS.items())
    return (f'<p class="legend" title="{_e(titles)}">What each cell shows:{"".join(parts)}.'
            ' Open a cell for its values, what the scenario expected and the function behind it.</p>')


def _failures(results: Path, runs: Sequence[RunEvidence]) -> str:
    bad = [r for r in runs if not r.passed]
    if not bad:
        return '<h2 id="failures">Failures</h2><p>None: every run completed and every expectation held.</p>'
    out = [f'<h2 id="failures">Failures ({len(bad)})</h2>']
    for run in bad:
        out.append(f'<div class="failure"><h3>{_badge(run)} <a href="#{_run_id(run)}">{_e(run.name)}</a>'
                   f' on {_e(run.machine)}</h3>')
        if not run.completed:
            out.append(f'<p><b>{_e(run.outcome)}</b>: {_e(run.info.get("detail", ""))}</p>')
            findings = run.info.get("findings", [])
            if findings:
                out.append("<p>kernel:</p><pre>" + _e("\n".join(map(str, findings))) + "</pre>")
        else:
            commands = _commands_by_step(run)
            out.append("<table><tr><th>step</th><th>phase</th><th>flavour</th><th>call.field</th>"
                       "<th>expected</th><th>observed</th><th>guest command</th></tr>")
            for v in run.failures:
                out.append(f"<tr><td>{v.step}</td><td>{_e(v.phase)}</td><td>{_e(v.flavour)}</td>"
                           f'<td class="mono">{_e(v.call)}.{_e(v.field)}</td><td>{_e(v.expected)}</td>'
                           f"<td><b>{_e(v.observed)}</b></td>"
                           f'<td class="mono">{_e(commands.get((v.step, v.flavour), "?"))}</td></tr>')
            out.append("</table>")
        if run.problem:
            out.append(f"<p>{_e(run.problem)}</p>")
        for reason in run.damage:
            out.append(f"<p>damaged evidence: {_e(reason)}</p>")
        out.append(f"<p>evidence: {_evidence_links(results, run)}</p></div>")
    return "\n".join(out)


def _runs_table(runs: Sequence[RunEvidence]) -> str:
    rows = []
    for run in runs:
        verdicts = run.verdicts or ()
        passed = sum(v.passed for v in verdicts)
        wall = run.facts.get("wall_seconds")
        rows.append(f'<tr><td><a href="#{_run_id(run)}">{_e(run.name)}</a></td><td>{_e(run.machine)}</td>'
                    f"<td>{_badge(run)}</td><td>{passed}/{len(verdicts)}</td>"
                    f'<td>{_e(run.info.get("boot_seconds", "?"))} s</td>'
                    f'<td>{_e(f"{wall:.1f} s" if isinstance(wall, (int, float)) else "")}</td></tr>')
    return ('<h2 id="runs">Runs</h2><table><tr><th>scenario</th><th>machine</th><th>result</th>'
            "<th>expectations held</th><th>boot</th><th>run</th></tr>" + "".join(rows) + "</table>")


def _kernel_facts(run: RunEvidence) -> list[tuple[str, str]]:
    kernel: dict[str, Any] = run.facts.get("kernel", {}) or {}
    variant = run.scenario.kernel if run.scenario else kernel.get("variant", "?")
    release = run.info.get("release", "") or "?"
    tree = run.facts.get("tree") or kernel.get("tree")
    source = f"Debian linux-source {kernel.get('debian_version', '?')}" + (f", tree {tree}" if tree else "")
    facts = [("kernel", f"{release} ({variant}), {source}")]
    if kernel:
        series = kernel.get("series", [])
        facts.append(("kernel build", f"key {kernel.get('key', '?')}, branch {kernel.get('branch', '?')}, "
                                      f"{len(series)} patch(es), built {kernel.get('built_at', '?')}"))
        facts.append(("config", " + ".join(map(str, kernel.get("fragments", [])))))
    return facts


def _facts(results: Path, run: RunEvidence) -> str:
    s = run.scenario
    facts = [("machine", run.machine), ("accelerator", str(run.info.get("accel", "?")))]
    facts += _kernel_facts(run)
    if s is not None:
        facts.append(("clock at boot", format_time(s.rtc)))
        if s.kernel_args:
            facts.append(("kernel arguments", " ".join(s.kernel_args)))
        if s.disks:
            facts.append(("disks", ", ".join(f"{d.name} ({d.fs})" for d in s.disks)))
    initramfs = run.facts.get("initramfs", {})
    if initramfs:
        facts.append(("initramfs", str(initramfs.get("key", initramfs.get("path", "?")))))
    timing = f"boot {run.info.get('boot_seconds', '?')} s"
    if isinstance(run.facts.get("wall_seconds"), (int, float)):
        timing += f", whole run {run.facts['wall_seconds']:.1f} s"
    if run.facts.get("started"):
        timing += f", started {run.facts['started']}"
    facts.append(("timings", timing))
    userlands = run.info.get("userlands") or []
    for u in userlands if isinstance(userlands, list) else []:
        if isinstance(u, dict):
            facts.append((f"userland {u.get('name', '?')}", _packages_html(u.get("packages", []))))
    facts.append(("evidence", _evidence_links(results, run)))
    body = "".join(f"<dt>{_e(k)}</dt><dd>{v if k == 'evidence' or k.startswith('userland ') else _e(v)}</dd>"
                   for k, v in facts)
    return f'<dl class="facts">{body}</dl>'


def _packages_html(packages: object) -> str:
    """A userland's packages: how many, the list on demand."""
    if isinstance(packages, dict):
        names = [f"{k}={v}" for k, v in packages.items()]
    elif isinstance(packages, list):
        names = [str(p) for p in packages]
    else:
        return _e(packages)
    return (f"<details><summary>{len(names)} Debian package(s)</summary>"
            f'<div class="mono">{_e(", ".join(names))}</div></details>')


class _Notes:
    """The comments a run's cells point to, numbered once each."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.texts: list[str] = []

    def number(self, text: str) -> int:
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1

    def anchor(self, n: int) -> str:
        return f"{self.prefix}-note-{n}"


def _cell_note(comments: ScenarioComments | None, run: RunEvidence, cell: Cell) -> str:
    if comments is None:
        return ""
    row = run.scenario.variant if run.scenario else ""
    own = comments.explain(cell.step, cell.flavour, cell.call, run.machine, row)
    if own:
        return own
    return "\n\n".join(filter(None, (comments.step(cell.step, row), comments.variant(row)))) or comments.header


def _cell_html(run: RunEvidence, cell: Cell | None, comments: ScenarioComments | None, notes: _Notes) -> str:
    if cell is None:
        return '<td class="k-none">-</td>'
    classes = [f"k-{cell.kind or 'none'}"]
    classes += ["fail"] if cell.failed else (["ok"] if cell.checked else [])
    expected = "; ".join(f"{v.field}: {v.expected}" for v in cell.verdicts)
    title = f"{cell.flavour} {cell.call}: {cell.kind or 'not observed'}" + (f"; expected {expected}" if expected else "")
    more = []
    fields = all_fields(cell)
    if fields:
        more.append("<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in fields) + "</dl>")
    if cell.verdicts:
        more.append("<dl>" + "".join(
            f"<dt>{'&#x2713;' if v.passed else '<b>&#x2717;</b>'} {_e(v.field)}</dt>"
            f"<dd>expected {_e(v.expected)}" + ("" if v.passed else f"; observed <b>{_e(v.observed)}</b>") + "</dd>"
            for v in cell.verdicts) + "</dl>")
    else:
        more.append("<div>not checked by the scenario</div>")
    note = _cell_note(comments, run, cell)
    if note:
        n = notes.number(note)
        lines = note.splitlines()
        shown = note if len(lines) <= NOTE_LINES_SHOWN else "\n".join(lines_naming(note, cell.call)) or "\n".join(
            lines[:3]) + "\n…"
        more.append(f'<div class="why">{_e(shown)}</div><a href="#{notes.anchor(n)}">note {n}</a>')
    summary = _e(headline(cell)) if cell.observed else "no observation"
    return (f'<td class="{" ".join(classes)}" title="{_e(title)}"><details class="cell"><summary>{summary}'
            f'</summary><div class="more">{"".join(more)}</div></details></td>')


def _matrix_html(run: RunEvidence, phases: Sequence[Phase], comments: ScenarioComments | None,
                 notes: _Notes) -> str:
    out = []
    for phase in phases:
        if not phase.cells:
            continue
        head = "".join(f"<th>{_e(f)}</th>" for f in phase.flavours)
        rows = []
        for call in phase.calls:
            cells = "".join(_cell_html(run, phase.cell(call, f), comments, notes) for f in phase.flavours)
            rows.append(f'<tr><td class="call">{_e(call)}</td>{cells}</tr>')
        mark = " &#x2717;" if phase.failed else ""
        out.append(f'<h3>[{_e(phase.phase)}] {_e(phase.probe)}{mark}</h3><table class="matrix">'
                   f"<tr><th>call</th>{head}</tr>{''.join(rows)}</table>")
    return "\n".join(out)


def _notes_html(notes: _Notes, comments: ScenarioComments | None) -> str:
    if comments is None or not (notes.texts or comments.header):
        return ""
    items = "".join(f'<li id="{notes.anchor(n)}"><pre>{_e(t)}</pre></li>' for n, t in enumerate(notes.texts, 1))
    header = (f"<p>The file's own header:</p><pre>{_e(comments.header)}</pre>"
              if comments.header and comments.header not in notes.texts else "")
    return (f'<details class="notes"><summary>The scenario file\'s comments: the functions behind the cells'
            f"</summary>{header}<ol>{items}</ol></details>")


_DRAWING = threading.Lock()


def _draw(run: RunEvidence) -> list[timeline.Chart] | None:
    """The run's charts; None without python3-matplotlib."""
    if run.scenario is None:
        return []
    phases = [s.phase for s in run.scenario.judged_steps]
    title = f"{run.name} on {run.machine}"
    try:
        with _DRAWING:  # pyplot is one state per process: worker threads draw one at a time
            charts = [timeline.clock_chart(timeline.clock_readings(run.observations, phases), title + ": clock"),
                      timeline.filetimes_chart(timeline.file_times(run.observations), title + ": file times")]
    except ImportError:
        return None
    return [c for c in charts if c is not None]


def _charts(run: RunEvidence) -> list[timeline.Chart]:
    """The charts kept with the run when they are current, else drawn now
    (no python3-matplotlib: the page without its charts)."""
    kept = chart_files.load(run)
    return kept if kept is not None else (_draw(run) or [])


def keep_charts(folder: Path, reader: ScenarioReader | None = None) -> None:
    """Draw a finished run's charts into its folder, for the page to take
    (sandbox/report/chart_files.py); one thread of a process draws at a
    time (_DRAWING: pyplot is not thread-safe). Never raises: the runs are
    judged, and a page that finds no kept charts draws them itself."""
    if not folder.is_dir():  # no run there: nothing to keep, and no folder made
        return
    try:
        run = read_run(folder, reader or default_reader())
        charts = _draw(run)
        if charts is not None:
            chart_files.save(run, charts)
    except Exception:  # noqa: BLE001 - the page is a view of the runs
        return


def _figure(chart: timeline.Chart) -> str:
    data = base64.b64encode(chart.png).decode()
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{_e(chart.alt)}">'
            f"<figcaption>{_e(chart.alt)}</figcaption></figure>")


def _run_section(results: Path, run: RunEvidence, draw: bool) -> tuple[str, int]:
    s = run.scenario
    title = s.title if s else run.name
    out = [f'<section class="run" id="{_run_id(run)}"><h2>{_badge(run)} {_e(run.name)} on {_e(run.machine)}</h2>',
           f"<p><b>{_e(title)}</b></p>"]
    if s is not None and s.description:
        out += [f'<p class="desc">{_e(" ".join(p.split()))}</p>' for p in s.description.strip().split("\n\n")]
    if run.problem:
        out.append(f"<p><b>Cannot show the matrix:</b> {_e(run.problem)}</p>")
    if not run.completed:
        out.append(f'<p><b>{_e(run.outcome)}</b>: {_e(run.info.get("detail", ""))}</p>')
    out.append(_facts(results, run))
    charts = _charts(run) if draw else []
    out += [_figure(c) for c in charts]
    if s is not None:
        comments = parse_comments(run.scenario_text) if run.scenario_text else None
        notes = _Notes(_run_id(run))
        out.append(_matrix_html(run, matrix(s, run.machine, run.observations, run.verdicts or ()), comments, notes))
        out.append(_notes_html(notes, comments))
    out.append("</section>")
    return "\n".join(out), len(charts)


def _session(session: dict[str, Any], results: ResultsEvidence) -> str:
    facts: list[tuple[str, str]] = [("results folder", str(results.folder))]
    for key in ("command", "started", "host", "python"):
        if session.get(key):
            facts.append((key, str(session[key])))
    git = session.get("git", {})
    if isinstance(git, dict) and git.get("commit"):
        facts.append(("repository", f"{git['commit']}" + (" (with uncommitted changes)" if git.get("dirty") else "")))
    if results.junit is not None:
        facts.append(("JUnit XML", files.JUNIT))
    packages = session.get("packages", {})
    body = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    table = ""
    if isinstance(packages, dict) and packages:
        table = ("<details><summary>Debian packages on the host</summary><table><tr><th>package</th><th>version</th>"
                 "</tr>" + "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in packages.items())
                 + "</table></details>")
    return f'<h2 id="session">This invocation</h2><dl class="facts">{body}</dl>{table}'


def render(results: ResultsEvidence, draw: bool = True, now: float | None = None) -> tuple[str, int]:
    """(the page, how many charts it holds)."""
    runs = sorted(results.runs, key=lambda r: (r.passed, 0))  # failures first, otherwise in folder order
    sections, charts = [], 0
    for run in runs:
        html, n = _run_section(results.folder, run, draw)
        sections.append(html)
        charts += n
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now))
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>y2038 report: {_e(results.folder.name)}</title><style>{STYLE}</style></head>
<body><main>
<h1>y2038 rollover report</h1>
<p class="sub">{_e(results.folder.name)} · built {stamp} from the evidence in this folder</p>
{_summary_counts(results.runs)}
{_legend()}
{_failures(results.folder, runs)}
{_runs_table(runs)}
{"".join(sections)}
{_session(results.session, results)}
<footer>Rebuild with <code>just report {_e(results.folder)}</code>. Every value comes from the run's
observations.jsonl and verdicts.json; the comments from the scenario file as it ran.</footer>
</main></body></html>
"""
    return page, charts


def write_report(folder: Path, reader: ScenarioReader | None = None, draw: bool = True) -> ReportStats:
    """Build results/<run>/report.html from the evidence in `folder`."""
    start = time.monotonic()
    results = read_results(folder, reader or default_reader())
    page, charts = render(results, draw)
    path = Session(folder).write(REPORT_FILE, page)
    unsound = tuple(f"{reason} ({folder})" for reason in results.damage) + tuple(
        unsound_line(run) for run in results.runs if run.ended_badly)
    return ReportStats(path, time.monotonic() - start, len(page.encode()), len(results.runs), charts, unsound)


def unsound_line(run: RunEvidence) -> str:
    """'<scenario> on <machine>: killed (...)' or its damaged evidence, one line."""
    why = ([f"killed: run.json still says {run.info.get('state')}, and process {run.info.get('pid')} is gone"]
           if run.outcome == KILLED else
           [f"did not complete: {run.info.get('detail') or 'interrupted'}"] if run.outcome == INTERRUPTED
           else []) + list(run.damage)
    return f"{run.name} on {run.machine}: {'; '.join(why)} ({run.folder})"


def describe(stats: ReportStats) -> str:
    """The error lines (unsound runs), then the page's line."""
    return "".join(f"error: {line}\n" for line in stats.unsound) + page_line(stats)


def page_line(stats: ReportStats) -> str:
    return (f"report: {stats.path} ({stats.runs} run(s), {stats.charts} chart(s), "
            f"{stats.size / 1024:.0f} KiB, built in {stats.seconds:.2f} s)")
