"""The KTAP parser, fed with console logs captured from sandbox boots."""
from __future__ import annotations

from pathlib import Path

from sandbox.kunit import ktap

DATA = Path(__file__).resolve().parent.parent / "data" / "ktap"


def captured(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def statuses(document: ktap.Document) -> dict[str, str]:
    return {f"{suite}.{case}": test.status for suite, case, test in document.cases()}


def test_a_captured_run_with_one_failure() -> None:
    document = ktap.parse(captured("x86_64-one-failure.log"))
    assert document is not None and document.complete
    assert document.plan == 2
    assert [(t.name, t.number, t.status, t.plan) for t in document.tests] == [
        ("time32_policy", 1, ktap.PASS, 7), ("time32_conversion", 2, ktap.FAIL, 6)]
    results = statuses(document)
    assert len(results) == 13
    assert results.pop("time32_conversion.old_timex32_round_trip") == ktap.FAIL
    assert set(results.values()) == {ktap.PASS}


def test_a_failure_keeps_its_expectation_lines() -> None:
    document = ktap.parse(captured("x86_64-one-failure.log"))
    suite = document.suite("time32_conversion")
    failed = next(t for t in suite.subtests if t.status == ktap.FAIL)
    assert failed.number == 5
    assert failed.diagnostics[0].endswith("EXPECTATION FAILED at kernel/time/time32_test.c:153")
    assert "back.tai == 0" in failed.diagnostics
    # what the next case printed is not the failed case's
    assert not suite.subtests[5].diagnostics


def test_kernel_messages_printed_during_a_case_stay_with_it() -> None:
    suite = ktap.parse(captured("x86_64-one-failure.log")).suite("time32_policy")
    by_name = {t.name: t for t in suite.subtests}
    assert by_name["time32_deny"].diagnostics == (
        "time32: time32-kunit[4242] called utimes_time32 (denied)",)
    assert by_name["time32_parse"].diagnostics == ()


def test_the_rest_of_the_boot_is_not_part_of_the_document() -> None:
    lines = captured("x86_64-one-failure.log")
    lines.append("[    0.700000]     ok 99 not_a_test")
    document = ktap.parse(lines)
    assert document.complete and len(document.cases()) == 13


def test_a_log_cut_inside_a_suite_is_incomplete() -> None:
    lines = captured("x86_64-one-failure.log")
    cut = next(i for i, line in enumerate(lines) if "ok 3 old_timespec32_fault" in line)
    document = ktap.parse(lines[:cut + 1])
    assert document is not None and not document.complete
    suite = document.suite("time32_conversion")
    assert suite.status == ktap.INCOMPLETE
    assert [t.status for t in suite.subtests] == [ktap.PASS] * 3
    assert any("time32_conversion" in p and "planned 6" in p for p in document.problems)
    assert any(p.startswith("time32_conversion: no result line") for p in document.problems)


def test_a_log_cut_between_suites_misses_the_second() -> None:
    lines = captured("x86_64-one-failure.log")
    cut = next(i for i, line in enumerate(lines) if line.endswith("] ok 1 time32_policy"))
    document = ktap.parse(lines[:cut + 1])
    assert [t.name for t in document.tests] == ["time32_policy"]
    assert document.problems == ("the KTAP document: planned 2 test(s), got 1",)


def test_no_ktap_at_all() -> None:
    assert ktap.parse(["[    0.000000] Linux version 6.1.192+", "Y2038-INIT: up"]) is None


def test_skip_directive_and_a_suite_that_lies_about_its_cases() -> None:
    text = """KTAP version 1
1..1
    KTAP version 1
    # Subtest: s
    1..2
    ok 1 a # SKIP needs hardware
    not ok 2 b
ok 1 s
"""
    document = ktap.parse_text(text)
    a, b = document.suite("s").subtests
    assert (a.status, a.reason) == (ktap.SKIP, "needs hardware")
    assert b.status == ktap.FAIL
    assert document.suite("s").status == ktap.FAIL  # "ok" over a failed case


def test_parameterised_cases_are_named_by_their_path() -> None:
    text = """[    1.0] KTAP version 1
[    1.0] 1..1
[    1.0]     KTAP version 1
[    1.0]     # Subtest: s
[    1.0]     1..1
[    1.0]         KTAP version 1
[    1.0]         # Subtest: limits
[    1.0]         ok 1 - INT_MIN
[    1.0]         not ok 2 - INT_MAX
[    1.0]     not ok 1 limits
[    1.0] not ok 1 s
"""
    document = ktap.parse_text(text)
    assert document.complete
    assert statuses(document) == {"s.limits.INT_MIN": ktap.PASS, "s.limits.INT_MAX": ktap.FAIL}
