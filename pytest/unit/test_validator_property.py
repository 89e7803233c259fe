"""The validator against generated scenario files (Debian's python3-hypothesis).

Every scenario file of the repository is a seed; each example mutates one:
random values (huge and negative numbers, NaN and infinities, control
characters, times from year -99999 to 99999, dates, nested lists and tables)
put in random places, keys deleted and added, or the text itself cut and
spliced. Whatever comes in, sandbox.scenario.parser.parse_scenarios with the
real catalogue only ever raises InputError (one line) or accepts a scenario
whose values the guest can run: never another exception, never a non-finite
timeout, a clock the kernel refuses or a harness kernel argument.

Deterministic (derandomize=True, no example database) and bounded, so CI
does not flake: about 600 examples in a few seconds.
"""
from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from sandbox.base import paths

from sandbox.base.errors import InputError
from sandbox.scenario import guards, suite
from sandbox.scenario.matchers import Between, Clamped, Elapsed, Equals
from sandbox.scenario.model import ProbeStep, Scenario, SetClockStep, WaitStep
from sandbox.scenario.parser import parse_scenarios
from sandbox.scenario.steps import RTC_MAX, RTC_MIN
from sandbox.scenario.userlands import load_userlands

set_hypothesis_home_dir(str(paths.cache_dir() / "hypothesis"))  # its Unicode tables, not in the checkout
CATALOGUE = suite.catalogue()
MACHINES = suite.machine_flavours()
USERLANDS = load_userlands()
SEEDS: list[tuple[str, dict[str, Any]]] = [
    (str(path), tomllib.loads(path.read_text())) for path in suite.scenario_files()]
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

# --------------------------------------------------------------------------
# A small TOML writer: every value as an inline value, so any shape fits.


def toml_string(text: str) -> str:
    def escape(char: str) -> str:
        if char in '"\\':
            return "\\" + char
        if ord(char) < 0x20 or ord(char) == 0x7f:
            return f"\\u{ord(char):04x}"
        return char
    return '"' + "".join(map(escape, text)) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    assert isinstance(value, dict), type(value)
    return "{ " + ", ".join(f"{toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + " }"


def toml_document(document: dict[str, Any]) -> str:
    return "".join(f"{toml_string(k)} = {toml_value(v)}\n" for k, v in document.items())


def test_the_writer_round_trips_every_seed() -> None:
    for _, document in SEEDS:
        assert tomllib.loads(toml_document(document)) == document

# --------------------------------------------------------------------------
# What goes in.


def _time_text(year: int, rest: str) -> str:
    return f"{'-' if year < 0 else ''}{abs(year):04d}-{rest}"


TIMES = st.builds(_time_text, st.integers(-99999, 99999),
                  st.sampled_from(["01-19T03:14:08Z", "02-29T00:00:00Z", "13-01T00:00:00Z", "04-18T23:47:16Z"]))
EDGES = st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**32, 2**63 - 1, -2**63, 2**64, 10**30,
                         math.nan, math.inf, -math.inf, 1e30, -0.0, 5e-324, 1.5])
WORDS = st.sampled_from(["clock", "time64", "native64", "time32-libc", "x86_64", "armhf", "$variant",
                         "${x}", "EOVERFLOW", "none", "settimeofday", "panic=0", "console=ttyS1", "--",
                         "init=/bin/sh", "y2038.agent=hvc0", "series", "strict", "tmpfs", "ext4", "",
                         "between", "wrapped", "clamped", "elapsed", "\x1b[31m", "\u202e", "a\nb"])
SCALARS = st.one_of(
    st.integers(-2**70, 2**70), EDGES, st.floats(), st.booleans(), st.text(max_size=12),
    TIMES, WORDS, st.datetimes(timezones=st.none() | st.just(dt.timezone.utc)), st.dates(),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.one_of(WORDS, st.text(max_size=6)), inner, max_size=3),
                      max_leaves=6)
KEYS = st.one_of(st.sampled_from(["timeout", "rtc", "title", "description", "kernel-args", "wait",
                                  "set-clock", "reset-clock", "between", "expect", "step", "machines",
                                  "values", "variant", "flavour-groups", "disk", "size-mib", "phase",
                                  "expect-kernel", "expect-on", "via", "hwclock", "sysctl", "value"]),
                 st.text(max_size=6))


def _places(node: Any, found: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        found.append((node, key))
        _places(child, found)
    return found


def mutate(data: st.DataObject, document: dict[str, Any]) -> dict[str, Any]:
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        places = _places(document, [(None, None)])
        container, key = data.draw(st.sampled_from(places), label="place")
        action = data.draw(st.sampled_from(["replace", "replace", "delete", "add"]), label="action")
        if container is None or action == "add":
            target = container[key] if container is not None else document
            if isinstance(target, dict):
                target[data.draw(KEYS, label="new key")] = data.draw(VALUES, label="new value")
            elif isinstance(target, list):
                target.append(data.draw(VALUES, label="new item"))
        elif action == "delete":
            del container[key]
        else:
            container[key] = data.draw(VALUES, label="value")
    return document

# --------------------------------------------------------------------------
# What may come out.


def check_runnable(scenario: Scenario) -> None:
    """An accepted scenario holds only values the guest can run."""
    assert guards.finite(scenario.timeout) and 0 < scenario.timeout <= guards.TIMEOUT_MAX
    assert RTC_MIN <= scenario.rtc <= RTC_MAX
    assert not CONTROL.search(scenario.title)
    for arg in scenario.kernel_args:
        assert arg != "--" and arg.partition("=")[0] not in guards.HARNESS_KERNEL_ARGS
    waited = 0.0
    for step in scenario.steps:
        if isinstance(step, SetClockStep):
            assert guards.CLOCK_MIN <= step.time <= guards.CLOCK_MAX
        if isinstance(step, ProbeStep) and step.reset_clock is not None:
            assert guards.CLOCK_MIN <= step.reset_clock <= guards.CLOCK_MAX
        if isinstance(step, WaitStep):
            waited += step.seconds
        for machine in scenario.machines:
            for expectation in getattr(step, "expectations_on", lambda _: ())(machine):
                matcher = expectation.matcher
                numbers = {Between: ("lo", "hi"), Clamped: ("limit",), Elapsed: ("lo", "hi"),
                           Equals: ("value",)}.get(type(matcher), ())
                for name in numbers:
                    value = getattr(matcher, name)
                    assert isinstance(value, str) or guards.finite(value), (expectation, value)
    assert scenario.warp or waited < scenario.timeout  # under time warp a wait is guest time


def validate(text: str, file: str) -> None:
    try:
        scenarios = parse_scenarios(text, file, CATALOGUE, MACHINES, USERLANDS)
    except InputError as err:
        assert "\n" not in str(err) and str(err).startswith(file + ": ")
        assert not CONTROL.search(str(err))
        return
    for scenario in scenarios:
        check_runnable(scenario)


@SETTINGS
@given(st.data())
def test_mutated_documents_give_input_errors_or_runnable_scenarios(data: st.DataObject) -> None:
    file, document = data.draw(st.sampled_from(SEEDS), label="seed")
    validate(toml_document(mutate(data, tomllib.loads(toml_document(document)))), file)


@SETTINGS
@given(st.data())
def test_spliced_text_gives_input_errors_or_runnable_scenarios(data: st.DataObject) -> None:
    file, _ = data.draw(st.sampled_from(SEEDS), label="seed")
    text = Path(file).read_text()
    start = data.draw(st.integers(0, len(text)), label="start")
    end = data.draw(st.integers(start, min(len(text), start + 200)), label="end")
    insert = data.draw(st.one_of(st.text(max_size=40), WORDS, TIMES.map(toml_string),
                                 EDGES.map(toml_value)), label="insert")
    validate(text[:start] + insert + text[end:], file)
