"""docs/architecture.md's package table is held against the tree.

Every module of sandbox/ (each .py but __init__.py, sub-packages included)
is named in the row of its package, and every module a row names exists.
A row is `| `sandbox/<package>/` | <its one job> | <modules> |`; in the
modules cell a module is a backticked name outside parentheses
(`` `plan` (steps → guest commands, `PLANNERS` per step kind) ``: `plan` is
a module, `PLANNERS` is not).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import paths

DOC = paths.REPO / "docs" / "architecture.md"
DOC_NAME = "docs/architecture.md"
TABLE_HEADING = "## Packages, in pipeline order"
_ROW_RE = re.compile(r"^\| `(sandbox/(?:[\w/]+/)?)` \| (.*?) \| (.*) \|$")
_NAME_RE = re.compile(r"`([^`]*)`")


@dataclass(frozen=True)
class Row:
    package: str  # "sandbox/run/", as the doc writes it
    modules: frozenset[str]


def _top_level_names(cell: str) -> frozenset[str]:
    """The backticked names of a cell outside any parentheses."""
    names: set[str] = set()
    depth = 0
    position = 0
    while position < len(cell):
        char = cell[position]
        if char == "`":
            end = cell.index("`", position + 1)
            if depth == 0:
                names.add(cell[position + 1:end])
            position = end + 1
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        position += 1
    return frozenset(names)


def table_rows(doc_text: str) -> dict[str, Row]:
    section = doc_text.split(TABLE_HEADING, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, Row] = {}
    for line in section.splitlines():
        match = _ROW_RE.match(line)
        if match:
            package = match.group(1)
            rows[package] = Row(package, _top_level_names(match.group(3)))
    return rows


def tree_modules(root: Path) -> dict[str, frozenset[str]]:
    """Package folder ("sandbox/run/") to its modules, for every folder under
    root/sandbox that holds a .py file."""
    packages: dict[str, set[str]] = {}
    for source in sorted((root / "sandbox").rglob("*.py")):
        if source.name == "__init__.py" or "__pycache__" in source.parts:
            continue
        package = source.parent.relative_to(root).as_posix() + "/"
        packages.setdefault(package, set()).add(source.stem)
    return {package: frozenset(names) for package, names in packages.items()}


def drift(doc_text: str, root: Path) -> list[str]:
    """Each mismatch as a sentence telling the author which line to change."""
    rows = table_rows(doc_text)
    tree = tree_modules(root)
    problems: list[str] = []
    for package, modules in sorted(tree.items()):
        row = rows.get(package)
        if row is None:
            listed = ", ".join(f"`{name}` (<what it does>)" for name in sorted(modules))
            problems.append(
                f"{DOC_NAME}: no row for the package {package}: add to the table under"
                f" '{TABLE_HEADING}', in pipeline order, the line"
                f" | `{package}` | <its one job> | {listed} |")
            continue
        for name in sorted(modules - row.modules):
            problems.append(
                f"{DOC_NAME}: the row of `{package}` does not name the module {package}{name}.py:"
                f" add `{name}` (<what it does>) to that row's modules cell")
    for package, row in sorted(rows.items()):
        present = tree.get(package, frozenset())
        for name in sorted(row.modules - present):
            problems.append(
                f"{DOC_NAME}: the row of `{package}` names `{name}`, but {package}{name}.py"
                f" does not exist: remove `{name}` from that row, or put a parenthesis around"
                f" a name that is not a module")
    return problems


def test_the_module_table_matches_the_tree() -> None:
    problems = drift(DOC.read_text(), paths.REPO)
    assert not problems, "\n".join(problems)


def test_the_table_has_a_row_per_package_of_the_pipeline() -> None:
    rows = table_rows(DOC.read_text())
    for stage in ("base", "scenario", "build", "guest", "run", "judge", "report", "app"):
        assert f"sandbox/{stage}/" in rows


def _tree(root: Path, *modules: str) -> Path:
    for module in modules:
        path = root / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


_DOC = f"""{TABLE_HEADING}

| package | one job | modules |
|---|---|---|
| `sandbox/run/` | one run | `plan` (steps → commands, `PLANNERS`), `runner` (the loop) |

## Next
"""


def test_a_module_added_without_a_line_is_named_with_its_row(tmp_path: Path) -> None:
    root = _tree(tmp_path, "sandbox/run/__init__.py", "sandbox/run/plan.py",
                 "sandbox/run/runner.py", "sandbox/run/evidence.py")
    assert drift(_DOC, root) == [
        f"{DOC_NAME}: the row of `sandbox/run/` does not name the module sandbox/run/evidence.py:"
        " add `evidence` (<what it does>) to that row's modules cell"]


def test_a_package_added_without_a_row_is_given_its_line(tmp_path: Path) -> None:
    root = _tree(tmp_path, "sandbox/run/plan.py", "sandbox/run/runner.py",
                 "sandbox/audit/runtime/__init__.py", "sandbox/audit/runtime/boot.py")
    [problem] = drift(_DOC, root)
    assert "no row for the package sandbox/audit/runtime/" in problem
    assert problem.endswith("| `sandbox/audit/runtime/` | <its one job> | `boot` (<what it does>) |")


def test_a_named_module_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path, "sandbox/run/plan.py")
    [problem] = drift(_DOC, root)
    assert "names `runner`, but sandbox/run/runner.py does not exist" in problem


def test_names_in_parentheses_are_not_modules() -> None:
    assert table_rows(_DOC)["sandbox/run/"].modules == {"plan", "runner"}
