"""`just mutants`: does the suite catch a real y2038 bug put back into the kernel?

For each regression mutant (kernel-series/regressions/mutants.toml): build
its kernel (its variant, the series by default, plus one patch,
incrementally), run the scenarios it names on its machine, and call it
killed when one of them does not pass, naming the first thing that told it
apart. With --control (the default), each scenario first runs once on the
mutant's variant without the patch, where it must pass: a mutant "killed"
by a scenario that fails anyway proves nothing.

    run_mutants(mutants, control) -> list[MutantResult] -> table(results)
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.jobs import run_and_judge
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.base.machines import machine
from sandbox.base.progress import say
from sandbox.build.kernel import build_mutant
from sandbox.guest.target import Target, prepare_target, target_with
from sandbox.judge.judged import JudgedRun
from sandbox.report.text import WIDTH
from sandbox.run.record import ERROR, INTERRUPTED
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.mutants import Mutant

KILLED, SURVIVED = "killed", "survived"


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    verdict: str  # KILLED or SURVIVED
    caught_by: str  # what told the mutant apart; "" when it survived
    build_seconds: float
    run_seconds: float


def catch_of(scenario: Scenario, judged: JudgedRun) -> str:
    """What in this run differs from a pass ("" when it passed): the first
    failed expectation, a kernel finding, or how the run ended."""
    if judged.passed:
        return ""
    record, result = judged.record, judged.result
    if record.outcome in (ERROR, INTERRUPTED):  # the harness, not the kernel: no verdict
        raise SandboxError(f"{scenario.name} on {record.machine}: {record.outcome}: {record.detail}")
    if result is None:
        return f"{scenario.name}: {record.outcome} ({record.detail})"
    if result.failures:
        v = result.failures[0]
        return (f"{scenario.name} [{v.phase}] {v.flavour} {v.call}.{v.field}: "
                f"got {v.observed}, expected {v.expected}")
    kinds = ", ".join(k.kind for k in result.kernel_failures)
    return f"{scenario.name}: kernel log: {kinds}"


def _run(target: Target, scenarios: list[Scenario], results: Path, label: str) -> tuple[str, float]:
    """Run the scenarios on the target until one does not pass: (its catch, seconds)."""
    start = time.monotonic()
    for scenario in scenarios:
        say(f"{label}: running {scenario.name} on {target.machine.name}")
        judged = run_and_judge(target, scenario, results / label / scenario.slug / target.machine.name)
        caught = catch_of(scenario, judged)
        if caught:
            return caught, round(time.monotonic() - start, 1)
    return "", round(time.monotonic() - start, 1)


def scenarios_of(mutant: Mutant) -> tuple[Scenario, ...]:
    """The mutant's scenarios, each checked to run on its machine with the mutant's kernel variant."""
    chosen = tuple(suite.load_all([paths.SCENARIOS / entry for entry in mutant.scenarios]))
    for scenario in chosen:
        if mutant.machine not in scenario.machines or scenario.kernel != mutant.kernel:
            raise SandboxError(f"mutant {mutant.name}: {scenario.name} does not run on "
                               f"{mutant.machine} with the {mutant.kernel} kernel")
    return chosen


Plans = dict[Mutant, tuple[Scenario, ...]]
"""Each mutant and its scenarios, loaded and checked once, before anything builds."""


def check_controls(plans: Plans, results: Path) -> None:
    """Every scenario the mutants name passes on the kernel variant of its
    mutant (without the patch) on its machine, once per (machine, variant, scenario)."""
    pairs = {(m.machine, m.kernel, s.name): s for m, scenarios in plans.items() for s in scenarios}
    targets: dict[tuple[str, str], Target] = {}
    for number, ((name, kernel, _), scenario) in enumerate(sorted(pairs.items()), 1):
        if (name, kernel) not in targets:
            targets[name, kernel] = prepare_target(machine(name), kernel)
        caught, _ = _run(targets[name, kernel], [scenario], results, f"control-{number:02d}")
        if caught:
            raise SandboxError(f"control: {scenario.name} fails on the {kernel} kernel of {name}, "
                               f"so it cannot tell a mutant apart: {caught}")


def run_mutant(mutant: Mutant, scenarios: tuple[Scenario, ...], results: Path) -> MutantResult:
    start = time.monotonic()
    kernel = build_mutant(machine(mutant.machine), mutant.name, mutant.patch, mutant.kernel)
    build_seconds = round(time.monotonic() - start, 1)
    target = target_with(machine(mutant.machine), kernel)
    caught, seconds = _run(target, list(scenarios), results, f"{mutant.number}-{mutant.name}")
    return MutantResult(mutant, KILLED if caught else SURVIVED, caught, build_seconds, seconds)


def table(results: list[MutantResult], width: int = WIDTH) -> str:
    """One line per mutant that fits `width`, the catch on an indented line below."""
    lines = [f"{'mutant':<32} {'machine':<7} {'verdict':<8} {'build':>7} {'run':>7}"]
    for r in results:
        lines.append(f"{r.mutant.number + ' ' + r.mutant.name:<32} {r.mutant.machine:<7} "
                     f"{r.verdict:<8} {r.build_seconds:>6.0f}s {r.run_seconds:>6.0f}s")
        if r.caught_by:
            lines.append(_clip(f"    caught by {r.caught_by}", width))
    killed = sum(r.verdict == KILLED for r in results)
    lines.append(f"{killed}/{len(results)} mutants killed ({100 * killed // max(len(results), 1)}%)")
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
