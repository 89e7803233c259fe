"""A rehearsal as one HTML page (--html FILE): the verdict of every file,
and with more than two moments (--horizons) a chart of programs against
horizons: each cell the run at that horizon judged against the first, the
first one it broke at outlined (pure: the --json document in, text out;
inline SVG, no script, nothing fetched).
"""
from __future__ import annotations

from html import escape

COLOURS = {"broke": "#c62828", "calls-time32": "#f9a825", "not-exercised": "#9e9e9e", "safe": "#2e7d32"}
CELL, ROW, NAME = 84, 22, 260  # pixels: a horizon's column, a program's row, the names' column
STYLE = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;font-size:13px}")


def _rows(document: dict) -> list[dict]:
    return [a for a in document.get("audits", []) if (a.get("runtime") or {}).get("at_each")]


def horizon_chart(document: dict) -> str:
    """The SVG chart, or "" when no program ran at more than two moments."""
    rows = _rows(document)
    labels = list(dict.fromkeys(label for a in rows for label in a["runtime"]["at_each"]))
    if not rows or len(labels) < 2:
        return ""
    width, height = NAME + CELL * len(labels), ROW * (len(rows) + 2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12" role="img" aria-label="programs against horizons">']
    for column, label in enumerate(labels):
        parts.append(f'<text x="{NAME + column * CELL + 4}" y="{ROW - 6}">{escape(label)}</text>')
    for row, audit in enumerate(rows, start=1):
        runtime = audit["runtime"]
        y = row * ROW
        name = audit["origin"]["path"] or audit["origin"]["input"]
        parts.append(f'<text x="0" y="{y + ROW - 7}">{escape(name[-40:])}</text>')
        for column, label in enumerate(labels):
            verdict = runtime["at_each"].get(label, "")
            first = label == runtime.get("first_broken")
            outline = ' stroke="#000" stroke-width="3"' if first else ' stroke="#fff"'
            parts.append(f'<rect x="{NAME + column * CELL}" y="{y}" width="{CELL}" height="{ROW}" '
                         f'fill="{COLOURS.get(verdict, "#eee")}"{outline}><title>{escape(name)} at '
                         f'{escape(label)}: {escape(verdict or "not run")}</title></rect>')
    legend_y = (len(rows) + 1) * ROW + 15
    for n, (verdict, colour) in enumerate(COLOURS.items()):
        parts.append(f'<rect x="{n * 130}" y="{legend_y - 11}" width="12" height="12" fill="{colour}"/>'
                     f'<text x="{n * 130 + 16}" y="{legend_y}">{verdict}</text>')
    parts.append("</svg>")
    return "".join(parts)


def page_html(document: dict) -> str:
    lines = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8"><title>rehearse</title>',
             f"<style>{STYLE}</style></head><body>", "<h1>Rehearsal</h1>",
             f"<p>inputs: {escape(' '.join(document.get('inputs', [])))}</p>"]
    chart = horizon_chart(document)
    if chart:
        lines += ["<h2>Programs against horizons</h2>",
                  "<p>Each cell: the program's run at that time judged against its first run; "
                  "outlined, the first at which it broke.</p>", chart]
    lines += ["<h2>Verdicts</h2>", "<table><tr><th>file</th><th>machine</th><th>build-id</th><th>static</th>"
              "<th>runtime</th><th>first broke</th><th>reason</th></tr>"]
    for audit in document.get("audits", []):
        runtime = audit.get("runtime") or {}
        cells = (audit["origin"]["path"] or audit["origin"]["input"], audit["machine"], audit.get("build_id", ""),
                 audit["verdict"], runtime.get("verdict", ""), runtime.get("first_broken", ""),
                 runtime.get("reason", audit["reason"]))
        lines.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    lines += ["</table>", "</body></html>", ""]
    return "\n".join(lines)
