"""The reliability table's "false pass" reads what a run judged, not only its exit code."""
from __future__ import annotations

from sandbox.app.reliability import RunOutcome, report_runs


def _row(exit_code: int | None, judged: int, observed: int) -> RunOutcome:
    return RunOutcome("case", exit_code, "completed", judged, observed, "")


def test_a_run_that_judged_and_observed_is_an_honest_pass() -> None:
    assert not _row(0, 1, 100_000).false_pass


def test_exit_0_with_nothing_judged_or_observed_is_a_false_pass() -> None:
    assert _row(0, 0, 0).false_pass
    assert _row(0, 0, 5).false_pass
    assert _row(0, 3, 0).false_pass


def test_a_failed_run_is_never_a_false_pass() -> None:
    assert not _row(1, 0, 0).false_pass
    assert not _row(None, 0, 0).false_pass


def test_the_table_counts_false_passes() -> None:
    text = report_runs([_row(0, 0, 0), _row(0, 1, 100_000), _row(1, 0, 0)])
    assert "3 tried, false passes: 1" in text
    assert "| case | 0 | completed | 1 | 100000 |" in text
