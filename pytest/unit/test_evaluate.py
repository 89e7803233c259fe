"""sandbox.judge.evaluate: verdicts from a scenario and observations, no QEMU."""
from __future__ import annotations

import pytest

from sandbox.judge.evaluate import ScenarioResult, Verdict, evaluate
from sandbox.run.observations import Observation, parse_probe_output
from sandbox.scenario.catalogue import FLAVOURS, parse_catalogue
from sandbox.scenario.model import Scenario
from sandbox.scenario.parser import load_scenario, parse_scenario
from sandbox.scenario.suite import machine_flavours
from sandbox.base.paths import REPO
from sandbox.base.timefmt import ROLLOVER, UINT32_SPAN

CATALOGUE = parse_catalogue(
    """\
[probe.clock]
calls.time = { seconds = "time", nsec = "number", label = "text", mtime = "time", took = "number" }
calls.gettimeofday = { seconds = "time", usec = "number" }
calls.clock_gettime = { seconds = "time", nsec = "number" }
flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
""",
    "manifest.toml",
)
MACHINES = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3]}
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n[[step]]\nphase = "p"\nprobe = "clock"\n'


def scenario_with(expect: str) -> Scenario:
    return parse_scenario(HEAD + expect, "scenarios/demo/case.toml", CATALOGUE, MACHINES)


def observe(flavour: str = "time64", call: str = "time", errno: str | None = None, machine: str = "x86_64",
            phase: str = "p", **values: int | float | str) -> Observation:
    return Observation("demo/case", machine, phase, "clock", flavour, call, values, errno)


def only_verdict(expect: str, *observations: Observation, machine: str = "x86_64") -> Verdict:
    result = evaluate(scenario_with(expect), machine, observations)
    (verdict,) = result.verdicts
    return verdict


T = "2038-01-19T03:14:30Z"
WRAPPED_T = ROLLOVER + 22 - UINT32_SPAN  # what a 32-bit time_t holds at 03:14:30

# (expect block, observation, passed, expected text, observed text)
MATCHER_CASES = [
    ("seconds = 5", observe(seconds=5), True, "= 5", "1970-01-01T00:00:05Z (5)"),
    ("seconds = 5", observe(seconds=6), False, "= 5", "1970-01-01T00:00:06Z (6)"),
    (f'seconds = "{T}"', observe(seconds=ROLLOVER + 22), True,
     f"= {T}", f"{T} (2147483670)"),
    ('label = "x"', observe(label="x"), True, "= 'x'", "'x'"),
    ('label = "x"', observe(label="y"), False, "= 'x'", "'y'"),
    ("nsec = 5", observe(nsec="5"), False, "= 5", "'5'"),
    (f'seconds = {{ between = ["2038-01-19T03:14:00Z", "{T}"] }}', observe(seconds=ROLLOVER + 22), True,
     f"in [2038-01-19T03:14:00Z, {T}]", f"{T} (2147483670)"),
    (f'seconds = {{ between = ["2038-01-19T03:14:00Z", "{T}"] }}', observe(seconds=ROLLOVER + 23), False,
     f"in [2038-01-19T03:14:00Z, {T}]", "2038-01-19T03:14:31Z (2147483671)"),
    ("nsec = { between = [0, 999999999] }", observe(nsec=999999999), True, "in [0, 999999999]", "999999999"),
    ("nsec = { between = [0, 999999999] }", observe(nsec=-1), False, "in [0, 999999999]", "-1"),
    (f'seconds = {{ wrapped = ["{T}", "2038-01-19T03:16:30Z"] }}', observe(seconds=WRAPPED_T), True,
     f"wrapped into [{T}, 2038-01-19T03:16:30Z]", "1901-12-13T20:46:14Z (-2147483626)"),
    (f'seconds = {{ wrapped = ["{T}", "2038-01-19T03:16:30Z"] }}', observe(seconds=ROLLOVER + 22), False,
     f"wrapped into [{T}, 2038-01-19T03:16:30Z]", f"{T} (2147483670)"),
    (f'seconds = {{ wrapped = ["{T}", "2038-01-19T03:16:30Z"] }}', observe(seconds=WRAPPED_T - 1), False,
     f"wrapped into [{T}, 2038-01-19T03:16:30Z]", "1901-12-13T20:46:13Z (-2147483627)"),
    ('mtime = { clamped = "2038-01-19T03:14:07Z" }', observe(mtime=ROLLOVER - 1), True,
     "clamped at 2038-01-19T03:14:07Z", "2038-01-19T03:14:07Z (2147483647)"),
    ('mtime = { clamped = "2038-01-19T03:14:07Z" }', observe(mtime=ROLLOVER + 22), False,
     "clamped at 2038-01-19T03:14:07Z", f"{T} (2147483670)"),
    ("took = { elapsed = [0.5, 2] }", observe(took=1.25), True, "elapsed in [0.5 s, 2.0 s]", "1.25"),
    ("took = { elapsed = [0.5, 2] }", observe(took=2.5), False, "elapsed in [0.5 s, 2.0 s]", "2.5"),
    ('errno = "EOVERFLOW"', observe(errno="EOVERFLOW"), True, "errno EOVERFLOW", "errno EOVERFLOW"),
    ('errno = "EOVERFLOW"', observe(errno="EINVAL"), False, "errno EOVERFLOW", "errno EINVAL"),
    ('errno = "EOVERFLOW"', observe(seconds=WRAPPED_T), False, "errno EOVERFLOW",
     "no errno (succeeded: seconds 1901-12-13T20:46:14Z (-2147483626))"),
    ('errno = "none"', observe(seconds=5), True, "no errno (call succeeded)",
     "no errno (succeeded: seconds 1970-01-01T00:00:05Z (5))"),
    ('errno = "none"', observe(errno="EOVERFLOW"), False, "no errno (call succeeded)", "errno EOVERFLOW"),
]


@pytest.mark.parametrize("expect, observation, passed, expected, observed", MATCHER_CASES)
def test_each_matcher_passes_and_fails(
    expect: str, observation: Observation, passed: bool, expected: str, observed: str
) -> None:
    verdict = only_verdict(f"[step.expect.time64.time]\n{expect}\n", observation)
    field = expect.split(" =")[0]
    assert verdict == Verdict(0, "p", "time64", "time", field, expected, observed, passed)


def test_errno_instead_of_a_value_fails_showing_the_errno() -> None:
    verdict = only_verdict("[step.expect.time64.time]\nseconds = { between = [0, 10] }\n", observe(errno="EOVERFLOW"))
    assert (verdict.passed, verdict.observed) == (False, "errno EOVERFLOW")


def test_missing_field_fails_naming_it() -> None:
    verdict = only_verdict("[step.expect.time64.time]\nnsec = 0\n", observe(seconds=5))
    assert (verdict.passed, verdict.observed) == (False, "no field 'nsec' (seconds 1970-01-01T00:00:05Z (5))")


@pytest.mark.parametrize(
    "observation",
    [
        observe(flavour="native64", seconds=5),  # another flavour
        observe(call="gettimeofday", seconds=5),  # another call
        observe(phase="other", seconds=5),  # another phase
        observe(machine="i386", seconds=5),  # another machine
    ],
)
def test_missing_observation_fails(observation: Observation) -> None:
    verdict = only_verdict("[step.expect.time64.time]\nseconds = 5\n", observation)
    assert (verdict.passed, verdict.expected, verdict.observed) == (False, "= 5", "no observation")


def test_every_repeated_observation_must_pass() -> None:
    expect = "[step.expect.time64.time]\nseconds = { between = [0, 10] }\n"
    both = only_verdict(expect, observe(seconds=5), observe(seconds=50))
    assert (both.passed, both.observed) == (False, "1970-01-01T00:00:05Z (5); 1970-01-01T00:00:50Z (50)")
    assert only_verdict(expect, observe(seconds=5), observe(seconds=6)).passed


def test_flavours_the_machine_lacks_give_no_verdict() -> None:
    scenario = scenario_with("[step.expect.native64.time]\nseconds = 5\n[step.expect.time64.time]\nseconds = 5\n")
    result = evaluate(scenario, "i386", [observe(machine="i386", seconds=5)])
    assert [verdict.flavour for verdict in result.verdicts] == ["time64"]
    assert result.passed


def test_unknown_machine_is_an_error() -> None:
    scenario = parse_scenario(HEAD.replace('rtc', 'machines = ["i386"]\nrtc'), "s.toml", CATALOGUE, MACHINES)
    with pytest.raises(ValueError, match="scenario s does not run on x86_64"):
        evaluate(scenario, "x86_64", [])


def test_result_passed_and_failures() -> None:
    good = Verdict(0, "p", "time64", "time", "seconds", "= 5", "5", True)
    bad = Verdict(0, "p", "time64", "gettimeofday", "seconds", "= 5", "no observation", False)
    assert ScenarioResult("s", "x86_64", (good,)).passed
    mixed = ScenarioResult("s", "x86_64", (good, bad))
    assert not mixed.passed
    assert mixed.failures == (bad,)


# --- the real scenario against plausible probe output --------------------------

BEFORE = "\n".join(
    f'{{"probe":"clock","flavour":"{flavour}","call":"{call}","seconds":{ROLLOVER - 15}}}'
    for flavour in FLAVOURS
    for call in ("time", "gettimeofday", "clock_gettime")
)
AFTER_CALLS = ("time", "gettimeofday", "clock_gettime")


def after_output(libc_line: str) -> str:
    lines = []
    for call in AFTER_CALLS:
        lines.append(f'{{"probe":"clock","flavour":"time32-syscall","call":"{call}","seconds":{WRAPPED_T + 3}}}')
        lines.append(libc_line.replace("CALL", call))
        for flavour in ("time64", "native64"):
            lines.append(f'{{"probe":"clock","flavour":"{flavour}","call":"{call}","seconds":{ROLLOVER + 25}}}')
    return "\n".join(lines)


def rollover_observations(libc_line: str) -> list[Observation]:
    where = {"scenario": "clock/rollover", "machine": "x86_64"}
    return parse_probe_output(BEFORE, **where, phase="before") + parse_probe_output(
        after_output(libc_line), **where, phase="after"
    )


def load_rollover() -> Scenario:
    # Every machine on offer: the file has expectations for armhf ([step.expect-on.armhf]).
    return load_scenario(REPO / "scenarios" / "clock" / "rollover.toml", CATALOGUE, machine_flavours())


def test_rollover_scenario_passes_on_expected_behaviour() -> None:
    result = evaluate(load_rollover(), "x86_64", rollover_observations(
        '{"probe":"clock","flavour":"time32-libc","call":"CALL","errno":"EOVERFLOW"}'
    ))
    assert len(result.verdicts) == 24
    assert result.passed, result.failures


def test_rollover_scenario_catches_a_libc_that_wraps_silently() -> None:
    result = evaluate(load_rollover(), "x86_64", rollover_observations(
        f'{{"probe":"clock","flavour":"time32-libc","call":"CALL","seconds":{WRAPPED_T + 3}}}'
    ))
    assert [(v.phase, v.flavour, v.call) for v in result.failures] == [
        ("after", "time32-libc", call) for call in AFTER_CALLS
    ]
    assert {v.observed for v in result.failures} == {
        "no errno (succeeded: seconds 1901-12-13T20:46:17Z (-2147483623))"
    }
