"""`sandbox system IMAGE|FILE.toml...` (`just system`): whole systems across
the rollover, a unit table each (docs/system-rehearsal.md); a system scenario
file (scenarios/system/*.toml) runs its system with its own start and end and
judges its expectations. Every scenario file is checked before anything
boots. Exit 0 when every system ran through its night (and every scenario's
expectations held), 1 when a unit of a plain image broke or an expectation
failed, 3 when a boot did not get through (no init, a panic, a system that
never settled), 2 for bad input. `just demo system` runs DEMO_SYSTEM_SCENARIOS
one after the other and shows them side by side."""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.caller import caller_path
from sandbox.app.kernel_args import own_kernel_of
from sandbox.app.exit_codes import EXIT_ERROR, EXIT_FAILED, EXIT_INFRA, EXIT_PASSED
from sandbox.base.errors import SandboxError
from sandbox.base.paths import SYSTEM_SCENARIOS, new_results_dir
from sandbox.base.progress import say
from sandbox.system import side_by_side
from sandbox.system.phases import DEFAULT_END, DEFAULT_START
from sandbox.system.rehearse import SystemRequest, SystemResult, rehearse_system
from sandbox.system.scenario import SystemScenario, load_system_scenario
from sandbox.system.scenario_run import ScenarioRun, run_system_scenario

DEMO_SYSTEM_SCENARIOS = ("debian12-armhf-rollover-hour.toml", "debian13-armhf-rollover-hour.toml")
"""`just demo system`: Debian 12 armhf (32-bit time_t) and Debian 13 armhf
(64-bit) from 02:45 to 03:30, the rollover and chrony's failure before it."""


def add_arguments(v: argparse.ArgumentParser) -> None:
    v.add_argument("images", nargs="+", metavar="IMAGE",
                   help="a system of rootfs/systems.toml (debian12-armhf, debian13-armhf, debian12-i386), "
                        "your own root filesystem, or a system scenario file (scenarios/system/*.toml)")
    v.add_argument("--start", default=None, metavar="TIME",
                   help=f"the RTC at power-on (default {DEFAULT_START}; past the rollover: booted past it)")
    v.add_argument("--end", default=None, metavar="TIME",
                   help=f"let the clock run under time warp until then (default {DEFAULT_END})")
    v.add_argument("--at", default="", metavar="TIME",
                   help="then step the clock to this later horizon (e.g. 2106-02-07T06:20:00Z) and let it run "
                        "5 minutes there")


@dataclass(frozen=True)
class Job:
    """One thing to rehearse: an image with the command line's span, or a scenario file."""

    label: str
    image: str = ""
    scenario: SystemScenario | None = None


def is_scenario_file(text: str) -> bool:
    return text.endswith(".toml") and not Path(text).is_dir()


def _jobs(args: argparse.Namespace) -> list[Job]:
    """Every input, each scenario file read and checked before anything boots."""
    jobs: list[Job] = []
    used: set[str] = set()
    for image in args.images:
        scenario = load_system_scenario(caller_path(image)) if is_scenario_file(image) else None
        if scenario is not None and (args.start or args.end or args.at):
            raise SandboxError(f"{scenario.file}: a system scenario has its own start and end; "
                               "--start, --end and --at are for images")
        label = scenario.slug if scenario else image.rstrip("/").rsplit("/", 1)[-1] or "root"
        label = next(f"{label}-{n}" if n else label for n in range(len(used) + 1)
                     if (f"{label}-{n}" if n else label) not in used)  # two inputs named root: root, root-1
        used.add(label)
        jobs.append(Job(label, image, scenario))
    return jobs


def _result_code(result: SystemResult) -> int:
    if result.outcome != "completed":
        return EXIT_INFRA
    return EXIT_FAILED if any(v.verdict == "broke" for v in result.verdicts) else EXIT_PASSED


def _run_code(run: ScenarioRun) -> int:
    """3 when the boot ended otherwise than the scenario says and not
    through its night (died, hung...), else 1 when an expectation failed."""
    if run.unexpected_outcome and run.result.outcome != "completed":
        return EXIT_INFRA
    return EXIT_PASSED if run.passed else EXIT_FAILED


def cmd_system(args: argparse.Namespace) -> int:
    jobs = _jobs(args)
    own = own_kernel_of(args)
    folder = new_results_dir("system")
    worst = EXIT_PASSED
    for job in jobs:
        if job.scenario is not None:
            run = run_system_scenario(job.scenario, folder / job.label, own)
            print("\n".join(run.result.table() + run.lines()))
            code = _run_code(run)
        else:
            result = rehearse_system(SystemRequest(job.image, folder / job.label, args.start or DEFAULT_START,
                                                   args.end or DEFAULT_END, own, args.at))
            print("\n".join(result.table()))
            code = _result_code(result)
        print(f"evidence: {folder / job.label}")
        sys.stdout.flush()
        worst = max(worst, code)
    return worst


def demo_system() -> int:
    """Debian 12 armhf and Debian 13 armhf, one after the other (two TCG
    guests side by side would each take a core the two of ours share with
    everything else), then their verdicts side by side."""
    scenarios = [load_system_scenario(SYSTEM_SCENARIOS / name) for name in DEMO_SYSTEM_SCENARIOS]
    folder = new_results_dir("demo-system")
    runs, began = [], time.monotonic()
    for number, scenario in enumerate(scenarios, 1):
        say(f"system {number}/{len(scenarios)}: {scenario.system}, {scenario.start} to {scenario.end}")
        runs.append(run_system_scenario(scenario, folder / scenario.slug))
    systems = [(run.scenario.system, run.result.verdicts) for run in runs]
    print("\n".join(side_by_side.table(systems) + [""] + side_by_side.broke(systems) + [""]))
    for run in runs:
        print("\n".join(run.lines()))
    print(f"evidence: {folder} ({time.monotonic() - began:.0f} s)")
    codes = [_run_code(run) for run in runs]
    return max(codes) if codes else EXIT_ERROR
