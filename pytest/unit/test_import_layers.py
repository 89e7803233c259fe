"""The pipeline's stages as packages, checked: a stage imports only stages
before it, and no two modules import each other (docs/architecture.md).

Read with `ast`, so nothing is imported to check it.
"""
from __future__ import annotations

import ast
from pathlib import Path

from sandbox.base.paths import REPO

SANDBOX = REPO / "sandbox"
STAGES = ("base", "scenario", "build", "images", "guest", "run", "judge", "report", "kunit", "audit", "system",
          "app")
"""In pipeline order: each may import itself and the stages before it."""


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sandbox_imports(path: Path) -> set[str]:
    """The sandbox modules a file imports (absolute names), at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; write 'from sandbox.<stage>.<module> import'")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sandbox"):
            found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("sandbox")}
    modules = {module_name(p) for p in SANDBOX.rglob("*.py")}
    return {name for name in found if name in modules}


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else ""


def backward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(module, imported) pairs where a stage imports a later stage."""
    def rank(module: str) -> int:
        return STAGES.index(stage_of(module)) if stage_of(module) else -1
    return sorted((a, b) for a, deps in graph.items() for b in deps if rank(b) > rank(a) >= 0)


def mutual_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, deps in graph.items() for b in deps if a < b and a in graph.get(b, ()))


MODULES = {module_name(p): p for p in sorted(SANDBOX.rglob("*.py"))}
GRAPH = {name: sandbox_imports(path) for name, path in MODULES.items()}


def test_every_module_lives_in_a_stage() -> None:
    loose = [p.name for p in SANDBOX.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], "modules outside a stage package"
    assert {p.name for p in SANDBOX.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(STAGES)


def test_a_stage_imports_only_earlier_stages() -> None:
    assert backward_imports(GRAPH) == []


def test_no_two_modules_import_each_other() -> None:
    assert mutual_imports(GRAPH) == []


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from sandbox.run.runner import run_scenario\nimport sandbox.judge.evaluate\n")
    graph = {"sandbox.base.bad": sandbox_imports(bad), "sandbox.run.runner": {"sandbox.base.bad"}}
    assert graph["sandbox.base.bad"] == {"sandbox.run.runner", "sandbox.judge.evaluate"}
    assert backward_imports(graph) == [("sandbox.base.bad", "sandbox.judge.evaluate"),
                                       ("sandbox.base.bad", "sandbox.run.runner")]
    assert mutual_imports(graph) == [("sandbox.base.bad", "sandbox.run.runner")]
