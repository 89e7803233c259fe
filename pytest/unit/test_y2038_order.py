"""The slowest tests first (pytest/y2038_order.py): the order, and the table kept between sessions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from y2038_order import durations_file, load_durations, longest_first, merged


def test_never_timed_tests_come_first_then_the_longest() -> None:
    ids = ["unit::a", "scenarios/ntp.toml::x86_64", "unit::new", "scenarios/clock.toml::i386", "unit::b"]
    durations = {"unit::a": 0.1, "scenarios/ntp.toml::x86_64": 40.0, "scenarios/clock.toml::i386": 1.5,
                 "unit::b": 0.1, "gone::test": 99.0}
    assert [ids[i] for i in longest_first(ids, durations)] == [
        "unit::new", "scenarios/ntp.toml::x86_64", "scenarios/clock.toml::i386", "unit::a", "unit::b"]
    assert longest_first(ids, {}) == list(range(len(ids)))  # no table: collection order


def test_the_table_keeps_old_timings_and_takes_this_sessions(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    assert load_durations(path) == {}  # none yet
    path.write_text("not json")
    assert load_durations(path) == {}
    path.write_text(json.dumps({"a": 1, "b": "x", "c": 2.5}))
    assert load_durations(path) == {"a": 1.0, "c": 2.5}
    assert merged({"a": 1.0, "c": 2.5}, {"c": 0.12345, "d": 3.0}) == {"a": 1.0, "c": 0.123, "d": 3.0}


def test_the_table_lives_in_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path))
    assert durations_file().parent == tmp_path
