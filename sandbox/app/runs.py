"""Scenario files run as one session: planned (each kernel built before the
first boot), booted side by side, each matrix printed in the files' order, the
observations and the page written, the exit code the worst of the runs."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from sandbox.base.evidence import OBSERVATIONS, Session
from sandbox.app.exit_codes import exit_code
from sandbox.app.facts import write_session
from sandbox.app.jobs import run_and_judge
from sandbox.app.parallel import StopScope, run_side_by_side
from sandbox.base import paths
from sandbox.base.errors import SandboxError, shown
from sandbox.base.fields import Where
from sandbox.base.machines import DEFAULT_MACHINE, machine
from sandbox.base.progress import say
from sandbox.base.trees import DEFAULT as DEFAULT_TREE
from sandbox.build.own_kernel import OwnKernel
from sandbox.guest.qemu import Guest
from sandbox.guest.target import Target, prepare_target, target_with
from sandbox.report import html as html_report
from sandbox.report import programs
from sandbox.report import text as report
from sandbox.judge.judged import JudgedRun
from sandbox.run.runner import StartGuest
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.needs import skip_reason
from sandbox.scenario.parser import check_budget


def machine_for(scenario: Scenario, asked: str | None) -> str | None:
    """The machine a scenario runs on: the one asked for (None: the scenario is
    not for it), or, when none was asked for, the default machine if the
    scenario names it, else the first it names: a file is never skipped for a
    machine nobody typed."""
    if asked is not None:
        return asked if asked in scenario.machines else None
    return DEFAULT_MACHINE if DEFAULT_MACHINE in scenario.machines else next(iter(scenario.machines))


def run_files(files: list[Path], machine_name: str | None, label: str, warp: bool | None = None,
              own: OwnKernel | None = None, jobs: int = 1, tree: str = DEFAULT_TREE) -> int:
    """Validate every file first, then boot once per scenario, `jobs` guests
    side by side (sandbox/app/parallel.py); print each matrix in the files' order.
    warp: time warp for every scenario (--warp on|off), or each file's own choice.
    own: the user's kernel, booted for every scenario it can serve; the others
    are skipped with their reason before anything boots (sandbox/scenario/needs.py).
    tree: the kernel source tree of the session (--tree); a scenario pinned
    to another one (`tree = ...`) is skipped with its reason before any boot."""
    scenarios = suite.load_all(files)  # bad input stops before any boot
    if warp is not None:  # the waits must fit the timeout under the override too, before any boot
        scenarios = [replace(s, warp=warp) for s in scenarios]
        for s in scenarios:
            check_budget(s.steps, s.timeout, s.warp, Where(s.file))
    asked = machine_name or (own.machine if own is not None else None)
    targets: dict[tuple[str, str], Target] = {}
    if own is not None and asked is not None:
        scenarios = own_kernel_scenarios(scenarios, own, asked)
        mine = [s for s in scenarios if asked in s.machines]
        own_target = target_with(machine(asked), own.artifact(), None) if mine else None
        targets = {(asked, s.kernel): own_target for s in mine if own_target is not None}
    planned: list[tuple[Scenario, Target]] = []
    for scenario in scenarios:
        on = machine_for(scenario, asked)
        if on is None:
            say(f"{scenario.name}: not for {asked}, skipped")
            continue
        reason = None if own is not None else scenario.skip_on(tree, on)
        if reason:
            say(f"{scenario.name}: skipped: {reason}")
            continue
        if (on, scenario.kernel) not in targets:  # every kernel built before the first boot
            targets[(on, scenario.kernel)] = prepare_target(machine(on), scenario.kernel, tree)
        planned.append((scenario, targets[(on, scenario.kernel)]))
    if not planned:  # zero runs is not a pass
        raise SandboxError(nothing_to_run(scenarios, asked or DEFAULT_MACHINE))
    results = paths.new_results_dir(label)
    write_session(results)
    runs: list[JudgedRun] = []
    scope = StopScope()

    def work(item: tuple[Scenario, Target], start: StartGuest) -> JudgedRun:
        scenario, target = item
        on = target.machine.name
        say(f"running {scenario.name} on {on} ({target.accel.name})")
        return run_and_judge(target, scenario, results / scenario.slug / on, start, scope.check)

    def show(item: tuple[Scenario, Target], judged: JudgedRun) -> None:
        scenario, target = item
        on = target.machine.name
        runs.append(judged)
        kernel = (f"own {own.image}{f' from {own.tree}' if own.tree else ''}" if own
                  else f"{scenario.kernel}, tree {tree}")
        print(shown(f"\n{scenario.title}\n  [{scenario.name}, {on}, kernel {kernel}, "
                    f"accel {target.accel.name}{', time warp' if scenario.warp else ''}, "
                    f"boot {judged.record.boot_seconds:.1f}s]"))
        print(shown(programs.side_by_side(scenario, judged.record.observations)
                    or report.phase_tables(judged.record, scenario, judged.result)))
        print("PASSED" if judged.passed else shown(report.failure_report(judged.record, judged.result)))

    run_side_by_side(work, planned, jobs, scope, Guest, show)
    session = Session(results)
    observations = session.path(OBSERVATIONS)
    with session.stream(OBSERVATIONS) as out:
        for judged in runs:
            for o in judged.record.observations:
                out.write(json.dumps(o.to_record()) + "\n")
    print("\n" + shown(report.summary(runs)))
    print(f"\nobservations (JSON lines): {observations}\nevidence: {results}")
    write_page(results)
    return exit_code(runs)


def nothing_to_run(scenarios: list[Scenario], machine_name: str) -> str:
    """Why a `run` would boot nothing: the line that replaces a green, empty run."""
    elsewhere = sorted({m for s in scenarios for m in s.machines} - {machine_name})
    names = ", ".join(dict.fromkeys(s.file for s in scenarios)) or "no scenario"
    if elsewhere:
        return (f"{names}: nothing runs on {machine_name} (the scenarios are for {', '.join(elsewhere)}): "
                f"leave out --machine (each file runs on a machine it names) or give --machine {elsewhere[0]}")
    return f"{names}: nothing runs on {machine_name}: every scenario was skipped (see the lines above)"


def own_kernel_scenarios(scenarios: list[Scenario], own: OwnKernel, machine_name: str) -> list[Scenario]:
    """The scenarios the user's kernel can serve; each other one named with its reason."""
    if own.machine != machine_name:
        raise SandboxError(f"--kernel-config {own.config} is a {own.machine} kernel; give --machine {own.machine}")
    options, kept = own.options(), []
    say(own.describe().replace("\n  ", ": "))
    for scenario in scenarios:
        reason = skip_reason(scenario, options, own.series) if machine_name in scenario.machines else None
        if reason:
            say(f"{scenario.name}: skipped on the own kernel: {reason}")
        else:
            kept.append(scenario)
    return kept


def write_page(results: Path) -> None:
    """results/<run>/report.html; a page that cannot be built never changes the exit code."""
    try:
        say(html_report.describe(html_report.write_report(results)))
    except Exception as err:  # noqa: BLE001 - the runs are judged; the page is a view of them
        say(f"report.html not written: {type(err).__name__}: {err} (retry: just report {results})")
