"""Judge observations against a scenario's expectations; never touches QEMU.

One Verdict per expectation that applies to the machine: a flavour the
machine does not run (native64 on a 32-bit machine) gives no verdict.
Observations are matched on (machine, phase, probe, flavour, call); when a
call was observed more than once, every observation must pass.

The kernel log is judged too (KernelVerdict): a finding (a WARNING, a BUG, a
hung task, an RCU stall, a KASAN or UBSAN report; sandbox/guest/klog.py)
fails the run unless the scenario's `expect-kernel` names its kind, and a
kind it names must be found.

Judging is bounded: a `matches` that runs past its time limit fails its
verdict (sandbox/scenario/patterns.py), and once JUDGE_SECONDS have passed
the expectations not yet judged fail as "not judged" rather than keep the
host busy after the guest has finished. And it can be stopped: `stop` is
called before each check (it raises Interrupted once the session was told to
stop), a match lets the other threads run (patterns.search), so a signal
while judging is acted on within MATCH_SECONDS.
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sandbox.base.timefmt import format_time
from sandbox.guest.klog import Finding
from sandbox.run.observations import Observation, Value
from sandbox.scenario.patterns import PatternTimeout
from sandbox.scenario.model import ERRNO_FIELD, Expectation, JudgedStep, Scenario, is_time_field

NO_OBSERVATION = "no observation"
JUDGE_SECONDS = 30.0
"""The longest judging one run may take; ours take milliseconds."""

_ObservationKey = tuple[str, str, str, str]  # phase, probe, flavour, call


@dataclass(frozen=True)
class Verdict:
    step: int
    phase: str
    flavour: str
    call: str
    field: str
    expected: str
    observed: str
    passed: bool


@dataclass(frozen=True)
class KernelVerdict:
    """One kind of kernel finding: seen or not, expected or not."""

    kind: str
    expected: bool  # named in the scenario's expect-kernel
    findings: tuple[Finding, ...]  # the lines of that kind, first first

    @property
    def passed(self) -> bool:
        return self.expected == bool(self.findings)

    def __str__(self) -> str:
        if not self.findings:
            return f"{self.kind}: expected by expect-kernel, none found"
        more = f" (and {len(self.findings) - 1} more)" if len(self.findings) > 1 else ""
        return f"{self.findings[0]}{more}" + ("" if self.expected else " (not in expect-kernel)")


@dataclass(frozen=True)
class ScenarioResult:
    scenario: str
    machine: str
    verdicts: tuple[Verdict, ...]
    kernel: tuple[KernelVerdict, ...] = ()  # the kernel log's findings, one per kind

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts) and all(k.passed for k in self.kernel)

    @property
    def kernel_failures(self) -> tuple[KernelVerdict, ...]:
        return tuple(verdict for verdict in self.kernel if not verdict.passed)

    @property
    def failures(self) -> tuple[Verdict, ...]:
        return tuple(verdict for verdict in self.verdicts if not verdict.passed)


IsTime = Callable[[str], bool]
"""Whether a field of the call being judged holds a time (from the catalogue)."""


def render_value(value: Value, as_time: bool) -> str:
    """Human text of an observed value: ISO time for time fields, else the value."""
    if as_time and isinstance(value, int) and not isinstance(value, bool):
        return f"{format_time(value)} ({value})"
    return repr(value) if isinstance(value, str) else str(value)


def _summary(observation: Observation, is_time: IsTime) -> str:
    parts = [f"{key} {render_value(value, is_time(key))}" for key, value in observation.values.items()]
    return ", ".join(parts) or "no values"


def _check_errno(observation: Observation, expectation: Expectation, is_time: IsTime) -> tuple[bool, str]:
    passed = expectation.matcher.matches(observation.errno)
    if observation.errno is not None:
        return passed, f"errno {observation.errno}"
    return passed, f"no errno (succeeded: {_summary(observation, is_time)})"


def _check_value(observation: Observation, expectation: Expectation, is_time: IsTime) -> tuple[bool, str]:
    """A field is checked whenever the probe reported it, also beside an errno
    (a timed wait ends with ETIMEDOUT and reports how long it took); a failed
    call without the field shows its errno."""
    if expectation.field not in observation.values:
        if observation.errno is not None:
            return False, f"errno {observation.errno}"
        return False, f"no field '{expectation.field}' ({_summary(observation, is_time)})"
    value = observation.values[expectation.field]
    text = render_value(value, is_time(expectation.field))
    if observation.errno is not None:
        text += f" (errno {observation.errno})"
    return expectation.matcher.matches(value), text


def judge_observation(observation: Observation, expectation: Expectation,
                      is_time: IsTime = lambda field: False) -> tuple[bool, str]:
    """(passed, observed text) of one observation against one expectation."""
    if expectation.field == ERRNO_FIELD:
        return _check_errno(observation, expectation, is_time)
    return _check_value(observation, expectation, is_time)


def _no_stop() -> None:
    pass


def _checks(step: JudgedStep, expectation: Expectation, observations: list[Observation],
            deadline: float, stop: Callable[[], None] = _no_stop) -> list[tuple[bool, str]]:
    def is_time(field: str) -> bool:
        return is_time_field(step, expectation.call, field)
    checks = []
    for observation in observations:
        stop()
        if time.monotonic() > deadline:
            return [(False, f"not judged: judging ran past its {JUDGE_SECONDS:g} s")]
        try:
            checks.append(judge_observation(observation, expectation, is_time))
        except PatternTimeout as err:
            return [(False, f"not judged: {err}")]
    return checks


def _verdict(step: JudgedStep, expectation: Expectation, observations: list[Observation],
             deadline: float, stop: Callable[[], None] = _no_stop) -> Verdict:
    checks = _checks(step, expectation, observations, deadline, stop)
    texts = list(dict.fromkeys(text for _, text in checks))
    return Verdict(
        step=step.index,
        phase=step.phase,
        flavour=expectation.flavour,
        call=expectation.call,
        field=expectation.field,
        expected=expectation.matcher.describe(),
        observed="; ".join(texts) or NO_OBSERVATION,
        passed=bool(checks) and all(passed for passed, _ in checks),
    )


def _index(machine: str, observations: Iterable[Observation]) -> dict[_ObservationKey, list[Observation]]:
    index: dict[_ObservationKey, list[Observation]] = defaultdict(list)
    for observation in observations:
        if observation.machine == machine:
            key = (observation.phase, observation.probe, observation.flavour, observation.call)
            index[key].append(observation)
    return index


def kernel_verdicts(expected: Iterable[str], findings: Iterable[Finding]) -> tuple[KernelVerdict, ...]:
    """One verdict per kind found or expected: found kinds in order of first
    appearance, then the expected kinds that were not found."""
    expected = tuple(expected)
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    kinds = [*by_kind, *(kind for kind in expected if kind not in by_kind)]
    return tuple(KernelVerdict(kind, kind in expected, tuple(by_kind.get(kind, ()))) for kind in kinds)


def evaluate(scenario: Scenario, machine: str, observations: Iterable[Observation],
             findings: Iterable[Finding] = (), seconds: float = JUDGE_SECONDS,
             stop: Callable[[], None] = _no_stop) -> ScenarioResult:
    """One verdict per expectation whose flavour runs on `machine`; a step's
    [step.expect-on.<machine>] replaces its expectations for the calls it names.
    And the kernel log's findings, against the scenario's expect-kernel.
    Within `seconds`: what is left after them fails as not judged."""
    if machine not in scenario.machines:
        raise ValueError(
            f"scenario {scenario.name} does not run on {machine} (machines: {', '.join(scenario.machines)})"
        )
    index = _index(machine, observations)
    deadline = time.monotonic() + seconds
    verdicts = tuple(
        _verdict(step, expectation, index.get((step.phase, step.probe, expectation.flavour, expectation.call), []),
                 deadline, stop)
        for step, expectation in scenario.expectations_for(machine)
    )
    return ScenarioResult(scenario=scenario.name, machine=machine, verdicts=tuple(verdicts),
                          kernel=kernel_verdicts(scenario.expect_kernel, findings))
