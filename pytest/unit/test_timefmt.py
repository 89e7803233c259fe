"""sandbox.base.timefmt: ISO-8601 UTC text <-> seconds, far from datetime's fast paths."""
from __future__ import annotations

import datetime

import pytest

from sandbox.base.timefmt import (
    INT32_MAX,
    INT32_MIN,
    ROLLOVER,
    UINT32_SPAN,
    format_time,
    parse_time,
    seconds_from_datetime,
)

KNOWN = [
    ("1970-01-01T00:00:00Z", 0),
    ("1969-12-31T23:59:59Z", -1),
    ("2038-01-19T03:14:07Z", INT32_MAX),
    ("2038-01-19T03:14:08Z", ROLLOVER),
    ("1901-12-13T20:45:52Z", INT32_MIN),
    ("2106-02-07T06:28:15Z", UINT32_SPAN - 1),
    ("2106-02-07T06:28:16Z", UINT32_SPAN),
    ("2000-02-29T00:00:00Z", 951_782_400),
    ("2446-05-10T22:38:55Z", 15_032_385_535),  # ext4 256-byte inode limit
    ("2500-01-01T00:00:00Z", 16_725_225_600),
    ("1600-03-01T00:00:00Z", -11_670_912_000),
    ("9999-12-31T23:59:59Z", 253_402_300_799),
    ("10000-01-01T00:00:00Z", 253_402_300_800),
]


@pytest.mark.parametrize("text, seconds", KNOWN)
def test_parse_and_format_known_instants(text: str, seconds: int) -> None:
    assert parse_time(text) == seconds
    assert format_time(seconds) == text


def test_rollover_constant_is_the_first_unrepresentable_second() -> None:
    assert ROLLOVER == 2**31
    assert format_time(ROLLOVER) == "2038-01-19T03:14:08Z"


def test_the_z_suffix_is_required_as_the_docs_say() -> None:
    assert parse_time("2038-01-19T03:14:08Z") == ROLLOVER
    with pytest.raises(ValueError, match="expected YYYY-MM-DDTHH:MM:SSZ"):
        parse_time("2038-01-19T03:14:08")  # a local time? say UTC with a Z


def test_format_agrees_with_datetime_across_its_range() -> None:
    step = 7_777_777  # odd stride: hits every month, leap days, centuries
    for seconds in range(-62_135_596_800, 253_402_300_799, step):
        expected = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
        assert format_time(seconds) == expected.strftime("%Y-%m-%dT%H:%M:%SZ").zfill(20)
        assert parse_time(format_time(seconds)) == seconds


def test_leap_day_rules() -> None:
    assert format_time(parse_time("2000-02-29T00:00:00Z") + 86_400) == "2000-03-01T00:00:00Z"
    assert format_time(parse_time("2100-02-28T00:00:00Z") + 86_400) == "2100-03-01T00:00:00Z"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2038-01-19",
        "2038-01-19 03:14:08Z",
        "2038-1-19T03:14:08Z",
        "2038-01-19T03:14:08+01:00",
        "2038-13-01T00:00:00Z",
        "2038-00-01T00:00:00Z",
        "2038-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z",
        "2038-04-31T00:00:00Z",
        "2038-01-19T24:00:00Z",
        "2038-01-19T03:60:00Z",
        "2038-01-19T03:14:60Z",
        "soon",
    ],
)
def test_bad_text_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="not a time"):
        parse_time(text)


def test_error_says_which_field_is_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"day 30 out of range 1\.\.28"):
        parse_time("2038-02-30T00:00:00Z")


def test_datetime_conversion_naive_is_utc_and_offsets_apply() -> None:
    naive = datetime.datetime(2038, 1, 19, 3, 14, 8)
    plus_one = datetime.datetime(2038, 1, 19, 4, 14, 8, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert seconds_from_datetime(naive) == ROLLOVER
    assert seconds_from_datetime(plus_one) == ROLLOVER
