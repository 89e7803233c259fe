"""`just mutants`: does the suite catch a real y2038 bug put back into the kernel?

For each regression mutant (kernel-series/regressions/mutants.toml) on one
kernel tree (--tree, 6.1 by default): build its kernel (its variant of that
tree, the series by default, plus one patch, incrementally), run the
scenarios it names on its machine, and call it killed when one of them does
not pass, naming the first thing that told it apart. With --control (the
default), each scenario first runs once on the mutant's variant without the
patch, where it must pass: a mutant "killed" by a scenario that fails anyway
proves nothing. A mutant absent from the tree (the code it breaks is not
there) is listed with the reason, neither built nor counted.

    check_controls(plans) ; run_mutant(mutant) -> MutantResult -> table(results)
"""
from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.jobs import run_and_judge
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.base.machines import machine
from sandbox.base.progress import say
from sandbox.base.trees import DEFAULT as DEFAULT_TREE
from sandbox.build.kernel import build_mutant
from sandbox.guest.target import Target, prepare_target, target_with
from sandbox.judge.judged import JudgedRun
from sandbox.report.text import WIDTH
from sandbox.run.record import ERROR, INTERRUPTED
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.mutants import Mutant

KILLED, SURVIVED, ABSENT = "killed", "survived", "absent"


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    verdict: str  # KILLED, SURVIVED, or ABSENT (not on the tree: mutant.absent says why)
    caught_by: str  # what told the mutant apart; "" when it survived
    build_seconds: float
    run_seconds: float


def absent_result(mutant: Mutant) -> MutantResult:
    """A mutant not on its tree: listed, never built, run nor counted."""
    return MutantResult(mutant, ABSENT, "", 0.0, 0.0)


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
    """The mutant's scenarios, each checked to run on its machine with the
    mutant's kernel variant, in a session of its tree (none when it is absent
    from the tree)."""
    if mutant.absent:
        return ()
    chosen = tuple(suite.load_all([paths.SCENARIOS / entry for entry in mutant.scenarios]))
    for scenario in chosen:
        if mutant.machine not in scenario.machines or scenario.kernel != mutant.kernel:
            raise SandboxError(f"mutant {mutant.name}: {scenario.name} does not run on "
                               f"{mutant.machine} with the {mutant.kernel} kernel")
        skip = scenario.skip_on(mutant.tree, mutant.machine)
        if skip:
            raise SandboxError(f"mutant {mutant.name}: {scenario.name} does not run on the {mutant.tree} "
                               f"tree: {skip}")
    return chosen


Plans = dict[Mutant, tuple[Scenario, ...]]
"""Each mutant and its scenarios, loaded and checked once, before anything builds."""


def check_controls(plans: Plans, results: Path) -> None:
    """Every scenario the mutants name passes on the kernel variant of its
    mutant (without the patch) on its machine and tree, once per (machine,
    variant, tree, scenario)."""
    pairs = {(m.machine, m.kernel, m.tree, s.name): s for m, scenarios in plans.items() for s in scenarios}
    targets: dict[tuple[str, str, str], Target] = {}
    for number, ((name, kernel, tree, _), scenario) in enumerate(sorted(pairs.items()), 1):
        if (name, kernel, tree) not in targets:
            targets[name, kernel, tree] = prepare_target(machine(name), kernel, tree)
        caught, _ = _run(targets[name, kernel, tree], [scenario], results, f"control-{number:02d}")
        if caught:
            raise SandboxError(f"control: {scenario.name} fails on the {kernel} kernel of {name} "
                               f"({tree} tree), so it cannot tell a mutant apart: {caught}")


def run_mutant(mutant: Mutant, scenarios: tuple[Scenario, ...], results: Path) -> MutantResult:
    start = time.monotonic()
    kernel = build_mutant(machine(mutant.machine), mutant.name, mutant.patch, mutant.kernel, mutant.tree)
    build_seconds = round(time.monotonic() - start, 1)
    target = target_with(machine(mutant.machine), kernel, mutant.tree)
    caught, seconds = _run(target, list(scenarios), results, f"{mutant.number}-{mutant.name}")
    return MutantResult(mutant, KILLED if caught else SURVIVED, caught, build_seconds, seconds)


NAME_WIDTH = 34
"""The mutant column: its number and name."""


def table(results: list[MutantResult], tree: str = DEFAULT_TREE, width: int = WIDTH) -> str:
    """One line per mutant that fits `width`, the catch on an indented line
    below (a mutant not on the tree: why, wrapped); the tree first and last."""
    lines = [f"regression mutants on the {tree} tree",
             f"{'mutant':<{NAME_WIDTH}} {'machine':<7} {'verdict':<11} {'build':>7} {'run':>7}"]
    for r in results:
        if r.verdict == ABSENT:
            lines.extend(_absent_lines(r.mutant, width))
            continue
        lines.append(f"{_name(r.mutant)} {r.mutant.machine:<7} "
                     f"{r.verdict:<11} {r.build_seconds:>6.0f}s {r.run_seconds:>6.0f}s")
        if r.caught_by:
            lines.append(_clip(f"    caught by {r.caught_by}", width))
    lines.append(summary(results, tree))
    return "\n".join(lines)


def summary(results: list[MutantResult], tree: str = DEFAULT_TREE) -> str:
    """'14/15 mutants killed (93%) on the 6.12 tree; 1 not on 6.12': the
    absent ones counted apart, never as killed."""
    counted = [r for r in results if r.verdict != ABSENT]
    killed = sum(r.verdict == KILLED for r in counted)
    absent = len(results) - len(counted)
    line = f"{killed}/{len(counted)} mutants killed ({100 * killed // max(len(counted), 1)}%) on the {tree} tree"
    return line + (f"; {absent} not on {tree}" if absent else "")


def all_killed(results: list[MutantResult]) -> bool:
    """Every mutant on the tree killed (those absent from it are no verdict)."""
    return all(r.verdict == KILLED for r in results if r.verdict != ABSENT)


def plan(mutants: tuple[Mutant, ...], tree: str = DEFAULT_TREE, width: int = WIDTH) -> str:
    """`just mutants --list`: each mutant on the tree, its machine, kernel
    variant, whose patch (the 6.1 one, or the tree's own, regenerated) and
    scenarios; or not on the tree, and why. Nothing built."""
    lines = [f"regression mutants on the {tree} tree",
             f"{'mutant':<{NAME_WIDTH}} {'machine':<7} {'kernel':<7} {'patch':<5} scenarios"]
    for m in mutants:
        if m.absent:
            lines.extend(_absent_lines(m, width))
            continue
        patch = tree if m.regenerated else DEFAULT_TREE
        lines.append(_clip(f"{_name(m)} {m.machine:<7} {m.kernel:<7} {patch:<5} {', '.join(m.scenarios)}", width))
    on = [m for m in mutants if not m.absent]
    regenerated = sum(m.regenerated for m in on)
    if tree == DEFAULT_TREE:
        lines.append(f"{len(on)} mutants on the {tree} tree")
    else:
        lines.append(f"{len(mutants)} mutants: {len(on)} on the {tree} tree ({regenerated} with a patch "
                     f"regenerated for it), {len(mutants) - len(on)} not on it")
    return "\n".join(lines)


def _name(mutant: Mutant) -> str:
    return f"{mutant.number + ' ' + mutant.name:<{NAME_WIDTH}}"


def _absent_lines(mutant: Mutant, width: int) -> list[str]:
    """'0017 name  -  not on 6.12', then why, wrapped and indented."""
    return [f"{_name(mutant)} {'-':<7} not on {mutant.tree}",
            *textwrap.wrap(mutant.absent, width, initial_indent="    ", subsequent_indent="    ")]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
