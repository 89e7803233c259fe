"""KUnit at boot: one test per machine and KUnit case that kernel-series/ adds.

Each machine boots its series kernel once per session (sandbox/kunit/cases.py);
KUnit runs before /init and prints KTAP on the console, which sandbox/kunit/ktap.py
parses. The cases are read from the patches themselves, so a case that does
not run (a missing config option, a kernel that died mid-run) fails here
instead of vanishing. The console log stays in results/<session>/kunit/<machine>/.
"""
from __future__ import annotations

from typing import Callable

import pytest

from sandbox.kunit import ktap
from sandbox.kunit import cases as kunit
from sandbox.base.machines import MACHINES

CASES = kunit.series_cases()


@pytest.mark.parametrize("machine_name", list(MACHINES))
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
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


@pytest.mark.parametrize("machine_name", list(MACHINES))
def test_ktap_run_is_whole_and_known(machine_name: str,
                                     y2038_ktap: Callable[[str], ktap.Document | None]) -> None:
    """Every planned test reported, and nothing ran that the series does not add."""
    document = y2038_ktap(machine_name)
    assert document is not None, f"no KTAP on the {machine_name} console"
    assert document.complete, "; ".join(document.problems)
    known = {c.id for c in CASES}
    ran = {f"{suite}.{case}" for suite, case, _ in document.cases()}
    assert ran == known
