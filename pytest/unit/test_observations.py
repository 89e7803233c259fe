"""sandbox.run.observations: the Observation record and the probe output parser."""
from __future__ import annotations

import json

import pytest

from sandbox.run.observations import Observation, ProbeOutputError, parse_probe_output

WHERE = {"scenario": "clock/rollover", "machine": "x86_64", "phase": "after"}

OUTPUT = """\
{"probe":"clock","flavour":"time32-syscall","call":"time","seconds":-2147483620}

{"probe":"clock","flavour":"time32-libc","call":"time","errno":"EOVERFLOW"}\r
{"probe":"clock","flavour":"time64","call":"clock_gettime","seconds":2147483650,"nsec":12345}
"""


def test_parse_probe_output_gives_one_observation_per_line() -> None:
    assert parse_probe_output(OUTPUT, **WHERE) == [
        Observation(**WHERE, probe="clock", flavour="time32-syscall", call="time", values={"seconds": -2147483620}),
        Observation(**WHERE, probe="clock", flavour="time32-libc", call="time", errno="EOVERFLOW"),
        Observation(
            **WHERE,
            probe="clock",
            flavour="time64",
            call="clock_gettime",
            values={"seconds": 2147483650, "nsec": 12345},
        ),
    ]


def test_empty_output_gives_no_observations() -> None:
    assert parse_probe_output("\n  \n", **WHERE) == []


@pytest.mark.parametrize(
    "line, message",
    [
        ("clock: time failed", "probe output line 2: not JSON (Expecting value): 'clock: time failed'"),
        ("[1, 2]", "probe output line 2: expected a JSON object: '[1, 2]'"),
        ('{"probe":"clock","call":"time"}', "probe output line 2: missing string 'flavour'"),
        ('{"probe":"clock","flavour":"time64","call":"time","phase":"x"}',
         "probe output line 2: 'phase' is set by the host, not by a probe"),
        ('{"probe":"clock","flavour":"time64","call":"time","errno":75}',
         "probe output line 2: 'errno' must be a name such as \"EOVERFLOW\", got 75"),
        ('{"probe":"clock","flavour":"time64","call":"time","seconds":[1]}',
         "probe output line 2: 'seconds' must be a number or a string, got [1]"),
        ('{"probe":"clock","flavour":"time64","call":"time","ok":true}',
         "probe output line 2: 'ok' must be a number or a string, got True"),
    ],
)
def test_bad_line_raises_value_error_naming_the_line(line: str, message: str) -> None:
    good = '{"probe":"clock","flavour":"time64","call":"time","seconds":1}'
    with pytest.raises(ProbeOutputError) as caught:
        parse_probe_output(f"{good}\n{line}\n", **WHERE)
    assert isinstance(caught.value, ValueError)
    assert caught.value.line == 2
    assert str(caught.value) == message


def test_to_record_is_flat_and_omits_unset_errno() -> None:
    ok = Observation(**WHERE, probe="clock", flavour="time64", call="time", values={"seconds": 5})
    failed = Observation(**WHERE, probe="clock", flavour="time32-libc", call="time", errno="EOVERFLOW")
    assert ok.to_record() == {**WHERE, "probe": "clock", "flavour": "time64", "call": "time", "seconds": 5}
    assert failed.to_record() == {
        **WHERE, "probe": "clock", "flavour": "time32-libc", "call": "time", "errno": "EOVERFLOW",
    }


def test_records_round_trip_through_json() -> None:
    for observation in parse_probe_output(OUTPUT, **WHERE):
        record = json.loads(json.dumps(observation.to_record()))
        assert Observation.from_record(record) == observation


def test_from_record_rejects_a_record_without_identity() -> None:
    with pytest.raises(ValueError, match="record lacks string machine, phase"):
        Observation.from_record({"scenario": "s", "probe": "clock", "flavour": "time64", "call": "time"})


def test_observation_is_frozen_and_hashable() -> None:
    observation = Observation(**WHERE, probe="clock", flavour="time64", call="time", values={"seconds": 5})
    source = {"seconds": 5}
    copy = Observation(**WHERE, probe="clock", flavour="time64", call="time", values=source)
    source["seconds"] = 6  # the observation keeps its own copy
    assert copy == observation and hash(copy) == hash(observation)
    with pytest.raises(TypeError):
        observation.values["seconds"] = 7  # type: ignore[index]  # the test: a read-only mapping refuses


def test_values_may_not_shadow_identity_keys() -> None:
    with pytest.raises(ValueError, match="may not be named errno, probe"):
        Observation(**WHERE, probe="clock", flavour="time64", call="time", values={"probe": "x", "errno": "E"})
