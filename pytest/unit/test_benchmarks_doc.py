"""`just bench` writes its entry into docs/benchmarks.md, newest first
(sandbox/app/benchmarks_doc.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.app import benchmarks_doc
from sandbox.app.benchmarks_doc import entry, with_entry
from sandbox.app.figures import Figure

PAGE = """# Benchmarks

The introduction; `## ` inside a line is not a heading.

## 2026-12-05, de00ffc: cold CI

Machine: 2 cores.
"""


def test_the_new_entry_comes_first_below_the_introduction() -> None:
    new = entry("the fresh-machine check", [Figure("just demo", 600.0, "s")], "just bench --fresh-machine",
                "abc1234", "2 cores", "2026-12-06")
    page = with_entry(PAGE, new)
    assert page.index("The introduction") < page.index("## 2026-12-06, abc1234: the fresh-machine check")
    assert page.index("## 2026-12-06, abc1234") < page.index("## 2026-12-05, de00ffc")
    assert "Machine: 2 cores.\n\n```\njust demo     600.00 s\n```\n\n(`just bench --fresh-machine`)\n" in page
    assert page.replace(new, "") == PAGE


def test_a_page_without_entries_gets_it_at_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\nNothing yet.\n")
    monkeypatch.setattr(benchmarks_doc, "head_commit", lambda: "abc1234")
    benchmarks_doc.add_entry("speed", [Figure("boot", 1.5, "s")], "just bench --speed", page)
    text = page.read_text()
    assert text.startswith("# Benchmarks\n\nNothing yet.\n\n## ") and ", abc1234: speed\n\nMachine: " in text
    assert text.endswith("(`just bench --speed`)\n\n")


def test_the_repositorys_page_has_the_introduction_the_entries_follow() -> None:
    text = benchmarks_doc.PAGE.read_text()
    assert text.startswith("# Benchmarks") and text.index("\n## ") > text.index("`just bench` adds its entry")


def test_a_text_entry_keeps_its_tables_whole() -> None:
    from sandbox.app.benchmarks_doc import text_entry
    body = "| a | b |\n| --- | --- |\n| 1 | 2 |\n"
    new = text_entry("reliability", body, "just reliability", "abc1234", "2 cores", "2026-12-06")
    assert new.startswith("## 2026-12-06, abc1234: reliability\n")
    assert "| a | b |\n| --- | --- |\n| 1 | 2 |\n\n(`just reliability`)" in new
