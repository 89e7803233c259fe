"""Two runs compared (sandbox/judge/repeat.py), and the `varying` key."""
from __future__ import annotations

import pytest

from sandbox.base.errors import InputError
from sandbox.judge.repeat import MISSING, differences
from sandbox.run.observations import Observation
from sandbox.scenario import suite
from sandbox.scenario.parser import parse_scenario


def seen(call: str, errno: str | None = None, **values: float) -> Observation:
    return Observation("s", "x86_64", "p", "timers", "time64", call, values, errno)


def test_same_values_but_the_varying_fields_make_no_difference() -> None:
    first = [seen("alarm", elapsed=2.98, woke=2147483649), seen("setitimer", elapsed=2.97, woke=2147483649)]
    second = [seen("alarm", elapsed=2.99, woke=2147483649), seen("setitimer", elapsed=2.96, woke=2147483649)]
    assert differences(first, second, ["elapsed"]) == ()
    assert [(d.key[5], d.field) for d in differences(first, second)] == [("alarm", "elapsed"),
                                                                         ("setitimer", "elapsed")]


def test_a_changed_value_an_errno_and_a_missing_call_are_each_named() -> None:
    first = [seen("alarm", woke=2147483649), seen("timer_settime", "EINVAL"), seen("clock_nanosleep")]
    second = [seen("alarm", woke=2147483650), seen("timer_settime")]
    found = differences(first, second, ["elapsed"])
    assert [(d.key[5], d.field, d.first, d.second) for d in found] == [
        ("alarm", "woke", 2147483649, 2147483650),
        ("timer_settime", "errno", "EINVAL", None),
        ("clock_nanosleep", "", "present", MISSING),
    ]
    assert str(found[0]) == "s x86_64 p timers time64 alarm 0 woke: 2147483649 then 2147483650"


def test_a_call_printed_twice_is_compared_occurrence_by_occurrence() -> None:
    first = [seen("alarm", woke=1), seen("alarm", woke=2)]
    assert differences(first, list(first)) == ()
    assert [d.field for d in differences(first, first[::-1])] == ["woke", "woke"]


HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
STEP = '[[step]]\nphase = "p"\nprobe = "clock"\n'


def test_varying_names_fields_the_probes_print() -> None:
    machines = {"x86_64": ("time64",)}
    (scenario,) = [parse_scenario(HEAD + 'varying = ["nsec"]\n' + STEP, "scenarios/v.toml",
                                  suite.catalogue(), machines)]
    assert scenario.varying == ("nsec",)
    with pytest.raises(InputError, match=r"^scenarios/v.toml: varying\[0\]: unknown field 'colour' \(known: "):
        parse_scenario(HEAD + 'varying = ["colour"]\n' + STEP, "scenarios/v.toml", suite.catalogue(), machines)
