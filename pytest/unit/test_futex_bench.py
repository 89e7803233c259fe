"""`just bench --futex`'s pure half: the tool's lines read, the figures made."""
import math

import pytest

from sandbox.app.futex_bench import Timings, figures_of, parse_runs


def _line(call: str, ns: int) -> str:
    return f'{{"probe":"syscost","flavour":"time64","call":"{call}","calls":100000,"ns":{ns}}}'


def test_runs_read_per_kind_and_other_lines_skipped() -> None:
    lines = [_line("futex_wake", 10), _line("futex_timed", 20), "noise", _line("getpid", 5),
             _line("futex_wake", 14), _line("futex_timed", 26)]
    assert parse_runs(lines) == {"wake": (10, 14), "timed": (20, 26)}


def test_a_kind_without_result_is_an_error() -> None:
    with pytest.raises(ValueError, match="no result for futex_timed$"):
        parse_runs([_line("futex_wake", 10), '{"probe":"syscost","call":"futex_timed","errno":"ENOSYS"}'])


def test_figures_median_and_ratio_of_series_to_pristine() -> None:
    pristine = Timings("i386", "pristine", {"wake": (10, 30, 20), "timed": (40, 40, 40)})
    series = Timings("i386", "series", {"wake": (21, 22, 23), "timed": (50, 50, 50)})
    figures = {f.name: f for f in figures_of([pristine, series])}
    assert figures["futex_time32 wake, i386 pristine"].value == 20
    assert "10-30 ns over 3 runs" in figures["futex_time32 wake, i386 pristine"].note
    assert math.isclose(figures["futex_time32 wake, i386 series / pristine"].value, 1.1)
    assert figures["futex_time32 timed, i386 series / pristine"].value == 1.25
    assert figures["futex_time32 timed, i386 series / pristine"].met is False


def test_no_ratio_without_both_kernels() -> None:
    only = Timings("armhf", "series", {"wake": (5,), "timed": (6,)})
    assert [f.name for f in figures_of([only])] == ["futex_time32 wake, armhf series", "futex_time32 timed, armhf series"]
