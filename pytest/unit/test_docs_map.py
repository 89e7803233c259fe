"""docs/README.md lists every page of docs/, and the README's and the docs'
links to files of the repository lead somewhere."""
from __future__ import annotations

import re
from pathlib import Path

from sandbox.base import paths

DOCS = paths.REPO / "docs"
MAP = DOCS / "README.md"
_LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def mapped_pages(map_text: str) -> set[str]:
    return {target for target in _LINK_RE.findall(map_text) if "/" not in target}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in _LINK_RE.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        if not (page.parent / target).exists():
            broken.append(f"{page.relative_to(paths.REPO)}: link to {target}, which does not exist")
    return broken


def test_the_map_lists_every_page() -> None:
    pages = {page.name for page in DOCS.glob("*.md")} - {MAP.name}
    missing = sorted(pages - mapped_pages(MAP.read_text()))
    assert not missing, (f"docs/README.md does not list {', '.join(missing)}: add a line"
                         " '- [<page>](<page>): <what it is for>' under the group of its readers")


def test_links_to_files_lead_somewhere() -> None:
    pages = [paths.REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = [line for page in pages for line in broken_links(page)]
    assert not broken, "\n".join(broken)


def test_a_page_without_a_line_is_found() -> None:
    assert mapped_pages("- [rehearse.md](rehearse.md): ...\n- [README](../README.md)") == {"rehearse.md"}


_ISSUE_RE = re.compile(r"\bissues? \d+")
_ISSUE_ELSEWHERE_RE = re.compile(r"'s issue \d+|github\.com/[^)]*/issues/\d+|\[issue \d+\]\(https?:")


def project_issue_citations(text: str, name: str) -> list[str]:
    """Lines that cite an issue number of the project's tracker, which a reader
    of the repository cannot see (another project's issue, linked or named as
    theirs, is fine)."""
    return [f"{name}:{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
            if _ISSUE_RE.search(_ISSUE_ELSEWHERE_RE.sub("", line))]


def test_the_docs_speak_of_the_project_not_of_issue_numbers() -> None:
    pages = [paths.REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    cited = [line for page in pages
             for line in project_issue_citations(page.read_text(), str(page.relative_to(paths.REPO)))]
    assert not cited, "say what the work is, not its issue number:\n" + "\n".join(cited)


def test_an_issue_number_is_found_and_another_projects_is_not() -> None:
    assert project_issue_citations("The 6.12 tree (issue 10, item 8)", "p") == ["p:1: The 6.12 tree (issue 10, item 8)"]
    assert project_issue_citations("libfaketime's issue 482, and [issue 418](https://github.com/x/y/issues/418)",
                                   "p") == []
