"""`just bench --futex`'s pure half: the tool's lines read, the figures made."""
import math

import pytest

from sandbox.app.futex_bench import Timings, figures_of, parse_runs


def test_runs_read_per_kind_and_other_lines_skipped() -> None:
    lines = ['{"probe":"futexbench","wake_ns":10,"timed_ns":20}', "noise", '{"wake_ns":14,"timed_ns":26}']
    assert parse_runs(lines) == {"wake_ns": (10, 14), "timed_ns": (20, 26)}


def test_no_result_is_an_error() -> None:
    with pytest.raises(ValueError, match="no result"):
        parse_runs(["futexbench: a futex call failed"])


def test_figures_median_and_ratio_of_series_to_pristine() -> None:
    pristine = Timings("i386", "pristine", {"wake_ns": (10, 30, 20), "timed_ns": (40, 40, 40)})
    series = Timings("i386", "series", {"wake_ns": (21, 22, 23), "timed_ns": (50, 50, 50)})
    figures = {f.name: f for f in figures_of([pristine, series])}
    assert figures["futex_time32 wake, i386 pristine"].value == 20
    assert "10-30 ns over 3 runs" in figures["futex_time32 wake, i386 pristine"].note
    assert math.isclose(figures["futex_time32 wake, i386 series / pristine"].value, 1.1)
    assert figures["futex_time32 timed, i386 series / pristine"].value == 1.25
    assert figures["futex_time32 timed, i386 series / pristine"].met is False


def test_no_ratio_without_both_kernels() -> None:
    only = Timings("armhf", "series", {"wake_ns": (5,), "timed_ns": (6,)})
    assert [f.name for f in figures_of([only])] == ["futex_time32 wake, armhf series", "futex_time32 timed, armhf series"]
