"""Command line: the verbs the justfile calls. Exit codes, as LAVA separates them:
0 passed, 1 expectations failed, 2 bad input or a build problem, 3 the guest
panicked, hung or lost its agent (infrastructure, not the scenario)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import deps, paths, report, series_check, suite
from .check import Checked, check
from .errors import SandboxError
from .initramfs import build_initramfs
from .kernel import KernelRequest, build_kernel
from .machines import MACHINES, machine
from .progress import say
from .session import Prepared, prepare
from .variants import DEFAULT as DEFAULT_VARIANT, VARIANTS

DEMO_SCENARIOS = (  # one per subject: the whole matrix, before and after the rollover
    "clock/rollover.toml",
    "timers/armed-before-due-after.toml",
    "mqueue/timeout-past-rollover.toml",
    "futex/wait-across-rollover.toml",
    "timeouts/relative-across-rollover.toml",
    "ipc/after-rollover.toml",
    "filetimes/ext4-128.toml",
)
EXIT_PASSED, EXIT_FAILED, EXIT_ERROR, EXIT_INFRA = 0, 1, 2, 3


def cmd_deps(args: argparse.Namespace) -> int:
    installed = deps.ensure()
    say(f"installed: {' '.join(installed)}" if installed else "all Debian packages present")
    return EXIT_PASSED


def cmd_kernel(args: argparse.Namespace) -> int:
    print(build_kernel(KernelRequest(machine(args.machine), args.variant)).boot_image)
    return EXIT_PASSED


def cmd_kernels(args: argparse.Namespace) -> int:
    """Every kernel the scenario files boot, built or reused, one at a time."""
    probes = suite.catalogue()
    needed = suite.kernels_needed([suite.load(f, probes) for f in suite.scenario_files()])
    for number, (name, variant) in enumerate(needed, 1):
        say(f"kernel {number}/{len(needed)}: {name}/{variant}")
        print(build_kernel(KernelRequest(machine(name), variant)).boot_image)
    return EXIT_PASSED


def cmd_check_series(args: argparse.Namespace) -> int:
    """Each patch of kernel-series/: checkpatch --strict, git am, incremental build."""
    failed = False
    for name in args.machines or ["x86_64"]:
        target = machine(name)
        results = series_check.check_series(target)
        print(series_check.report(target, results))
        failed = failed or not results or not all(r.ok for r in results)
    return EXIT_FAILED if failed else EXIT_PASSED


def cmd_initramfs(args: argparse.Namespace) -> int:
    print(build_initramfs(args.machine).path)
    return EXIT_PASSED


def run_files(files: list[Path], machine_name: str, label: str) -> int:
    """Validate every file first, then boot once per scenario; print the matrix."""
    probes = suite.catalogue()
    scenarios = [suite.load(f, probes) for f in files]  # bad input stops before any boot
    prepared_by_variant: dict[str, Prepared] = {}
    results = paths.new_results_dir(label)
    runs: list[Checked] = []
    for scenario in scenarios:
        if machine_name not in scenario.machines:
            say(f"{scenario.name}: not for {machine_name}, skipped")
            continue
        if scenario.kernel not in prepared_by_variant:
            prepared_by_variant[scenario.kernel] = prepare(machine(machine_name), scenario.kernel)
        prepared = prepared_by_variant[scenario.kernel]
        say(f"running {scenario.name} on {machine_name} ({prepared.accel.name})")
        checked = check(prepared, scenario, results / scenario.name.replace("/", "-") / machine_name)
        runs.append(checked)
        print(f"\n{scenario.title}  [{scenario.name}, {machine_name}, kernel {scenario.kernel}, "
              f"accel {prepared.accel.name}, boot {checked.record.boot_seconds:.1f}s]")
        print(report.phase_tables(checked.record, scenario, checked.result))
        print("PASSED" if checked.passed else report.failure_report(checked.record, checked.result))
    observations = results / "observations.jsonl"
    with observations.open("w") as out:
        for checked in runs:
            for o in checked.record.observations:
                out.write(json.dumps(o.to_record()) + "\n")
    print("\n" + report.summary(runs))
    print(f"\nobservations (JSON lines): {observations}\nevidence: {results}")
    if any(c.infrastructure_failed for c in runs):
        return EXIT_INFRA
    return EXIT_PASSED if all(c.passed for c in runs) else EXIT_FAILED


def cmd_run(args: argparse.Namespace) -> int:
    files = [Path(f) for f in args.scenarios] or suite.scenario_files()
    return run_files(files, args.machine, "run")


def cmd_demo(args: argparse.Namespace) -> int:
    deps.ensure()
    return run_files([paths.SCENARIOS / s for s in DEMO_SCENARIOS], args.machine, "demo")


def cmd_bench(args: argparse.Namespace) -> int:
    from .bench import bench
    bench(machine(args.machine), cold=not args.no_cold)
    return EXIT_PASSED


def cmd_validate(args: argparse.Namespace) -> int:
    probes = suite.catalogue()
    files = [Path(f) for f in args.scenarios] or suite.scenario_files()
    for f in files:
        suite.load(f, probes)
    say(f"{len(files)} scenario file(s) valid")
    return EXIT_PASSED


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sandbox", description="y2038 rollover sandbox")
    sub = p.add_subparsers(dest="command", required=True)

    def verb(name: str, func: object, help: str) -> argparse.ArgumentParser:
        v = sub.add_parser(name, help=help)
        v.set_defaults(func=func)
        return v

    def with_machine(v: argparse.ArgumentParser) -> argparse.ArgumentParser:
        v.add_argument("--machine", default="x86_64", choices=sorted(MACHINES))
        return v

    verb("deps", cmd_deps, "install the Debian packages the sandbox needs")
    k = with_machine(verb("kernel", cmd_kernel, "build (or reuse) a kernel"))
    k.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(VARIANTS))
    verb("kernels", cmd_kernels, "build (or reuse) every kernel the scenarios boot")
    c = verb("check-series", cmd_check_series,
             "check kernel-series/ patch by patch: checkpatch --strict, git am, build")
    c.add_argument("--machine", dest="machines", action="append", choices=sorted(MACHINES),
                   help="build for this machine (repeatable; default x86_64)")
    with_machine(verb("initramfs", cmd_initramfs, "build (or reuse) the initramfs"))
    r = with_machine(verb("run", cmd_run, "run scenario files (default: all)"))
    r.add_argument("scenarios", nargs="*")
    with_machine(verb("demo", cmd_demo, "build what is missing, boot, show the rollover"))
    b = with_machine(verb("bench", cmd_bench, "print build, boot and demo timings"))
    b.add_argument("--no-cold", action="store_true", help="skip the cold (no ccache) build")
    v = verb("validate", cmd_validate, "check scenario files without booting")
    v.add_argument("scenarios", nargs="*")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except SandboxError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
