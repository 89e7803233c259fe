"""docs/benchmarks.md: `just bench` adds its entry at the top of the
entries, right below the page's introduction (the first `## ` heading is the
newest entry): the date, the commit, what was measured, the machine, the
figures and the command that reproduces them."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from sandbox.app.figures import Figure, render
from sandbox.base import paths

PAGE = paths.REPO / "docs" / "benchmarks.md"


def entry(what: str, figures: list[Figure], command: str, commit: str, machine: str, date: str) -> str:
    return text_entry(what, f"```\n{render(figures)}\n```", command, commit, machine, date)


def text_entry(what: str, body: str, command: str, commit: str, machine: str, date: str) -> str:
    """An entry whose body is Markdown of its own (tables, say)."""
    return f"## {date}, {commit}: {what}\n\nMachine: {machine}.\n\n{body.strip()}\n\n(`{command}`)\n\n"


def with_entry(page: str, new: str) -> str:
    """The page with `new` before its first entry (or at its end, if none)."""
    at = page.find("\n## ")
    if at < 0:
        return page.rstrip("\n") + "\n\n" + new
    return page[:at + 1] + new + page[at + 1:]


def this_machine() -> str:
    """Cores and the load while the figures were taken: on shared cores a
    figure is not comparable with one taken on quiet cores."""
    load = os.getloadavg()[0]
    return f"{os.cpu_count()} cores, load average {load:.1f} at the end ({'shared' if load > 1.5 else 'quiet'})"


def head_commit() -> str:
    proc = subprocess.run(["git", "-C", str(paths.REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "unknown commit"


def add_entry(what: str, figures: list[Figure], command: str, page: Path = PAGE) -> Path:
    """Write the entry into the page (docs/benchmarks.md); the page's path."""
    return add_text_entry(what, f"```\n{render(figures)}\n```", command, page)


def add_text_entry(what: str, body: str, command: str, page: Path = PAGE) -> Path:
    new = text_entry(what, body, command, head_commit(), this_machine(), time.strftime("%Y-%m-%d", time.gmtime()))
    page.write_text(with_entry(page.read_text(), new))
    return page
