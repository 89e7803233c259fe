"""KUnit at boot: one test per machine and KUnit case that kernel-series/ adds.

Each machine boots its series kernel once per session (sandbox/kunit/cases.py);
KUnit runs before /init and prints KTAP on the console, which sandbox/kunit/ktap.py
parses. The cases are read from the patches themselves, so a case that does
not run (a missing config option, a kernel that died mid-run) fails here
instead of vanishing. The console log stays in results/<session>/kunit/<machine>/
(<machine>-<tree> for a tree other than 6.1). The session's tree (--tree)
chooses the patches the cases are read from and the machines (its own).
"""
from __future__ import annotations

from typing import Callable

import pytest

from sandbox.base.trees import tree as tree_named
from sandbox.build.kernel_source import read_series
from sandbox.kunit import ktap
from sandbox.kunit import cases as kunit


def session_cases(config: pytest.Config) -> list[kunit.Case]:
    """The KUnit cases the session tree's series adds."""
    return kunit.series_cases(read_series(tree_named(config.getoption("tree")).series_folder))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per machine of the session's tree (and per case of its series)."""
    tree = tree_named(metafunc.config.getoption("tree"))
    if "machine_name" in metafunc.fixturenames:
        metafunc.parametrize("machine_name", list(tree.machines))
    if "case" in metafunc.fixturenames:
        cases = session_cases(metafunc.config)
        metafunc.parametrize("case", cases, ids=[c.id for c in cases])


def test_kunit_case(machine_name: str, case: kunit.Case,
                    y2038_ktap: Callable[[str], ktap.Document | None]) -> None:
    document = y2038_ktap(machine_name)
    assert document is not None, f"no KTAP on the {machine_name} console"
    suite = document.suite(case.suite)
    assert suite is not None, f"suite {case.suite} ({case.source}) did not run on {machine_name}"
    result = next((t for t in suite.subtests if t.name == case.name), None)
    assert result is not None, f"{case.id} did not run on {machine_name}"
    if result.status == ktap.SKIP:
        pytest.skip(result.reason or "skipped by KUnit")
    assert result.status == ktap.PASS, "\n".join((f"{case.id}: {result.status}",
                                                  *result.diagnostics))


def test_ktap_run_is_whole_and_known(machine_name: str, request: pytest.FixtureRequest,
                                     y2038_ktap: Callable[[str], ktap.Document | None]) -> None:
    """Every planned test reported, and nothing ran that the series does not add."""
    document = y2038_ktap(machine_name)
    assert document is not None, f"no KTAP on the {machine_name} console"
    assert document.complete, "; ".join(document.problems)
    known = {c.id for c in session_cases(request.config)}
    ran = {f"{suite}.{case}" for suite, case, _ in document.cases()}
    assert ran == known
