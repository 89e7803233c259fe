"""Command line: the verbs the justfile calls. Exit codes, as LAVA separates them:
0 passed, 1 expectations failed, 2 bad input or a build problem, 3 the guest
panicked, oopsed, hung or lost its agent, or the harness itself failed
(infrastructure, not the scenario), 4 a step that must succeed (a clock move,
a sysctl, a mount) failed in a healthy guest; 128 + n a signal n stopped it
(130 SIGINT, 143 SIGTERM, 129 SIGHUP), the run recorded as interrupted."""
from __future__ import annotations

import argparse
from dataclasses import replace
import json
import signal
import sys
import traceback
import time
from pathlib import Path

from sandbox.audit import lines as audit_lines
from sandbox.audit.runtime_verdict import BROKE
from sandbox.audit.static import audit_static
from sandbox.build import deps
from sandbox.base import paths
from sandbox.report import html as html_report
from sandbox.report import programs, recording
from sandbox.report.evidence import newest_results
from sandbox.app.facts import write_session
from sandbox.report import text as report
from sandbox.build import series_check
from sandbox.scenario import suite
from sandbox.scenario.mutants import MUTANTS_FILE, load_mutants
from sandbox.app import evidence_docs
from sandbox.app.jobs import run_and_judge
from sandbox.app.parallel import MAX_DEFAULT_JOBS, StopScope, default_jobs, run_side_by_side
from sandbox.report.text import JudgedRun
from sandbox.run.record import STEP_FAILED
from sandbox.base.errors import Interrupted, SandboxError, printable
from sandbox.build.initramfs import build_initramfs
from sandbox.build.userland import build_userland
from sandbox.build.kernel import KernelRequest, build_kernel
from sandbox.base.machines import MACHINES, machine
from sandbox.base.progress import say
from sandbox.build.kernel_tree import build_tree
from sandbox.build.own_kernel import OwnKernel, own_kernel
from sandbox.guest.qemu import Guest
from sandbox.guest.target import Target, prepare_target, target_with
from sandbox.run.runner import StartGuest
from sandbox.scenario.model import Scenario
from sandbox.scenario.needs import skip_reason
from sandbox.scenario.userlands import load_userlands
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, TREES, not_built_for
from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT, VARIANTS

DEMO_SCENARIOS = (  # one per subject: the whole matrix, before and after the rollover
    "clock/rollover.toml",
    "timers/armed-before-due-after.toml",
    "mqueue/timeout-past-rollover.toml",
    "futex/wait-across-rollover.toml",
    "timeouts/relative-across-rollover.toml",
    "ipc/after-rollover.toml",
    "filetimes/filesystems.toml[ext4-128]",
)
"""Files under scenarios/; "file.toml[variant]" picks one row of a family."""
DEMO_PROGRAMS = {  # the demo opens with real programs, old next to new, on each machine
    "armhf": "programs/armhf-debian12-vs-debian13.toml",
    "i386": "programs/i386-debian12-vs-debian13.toml",
    "x86_64": "programs/x86_64-i386-vs-amd64.toml",
}
EXIT_PASSED, EXIT_FAILED, EXIT_ERROR, EXIT_INFRA, EXIT_STEP = 0, 1, 2, 3, 4


def cmd_deps(args: argparse.Namespace) -> int:
    """Listed with the other verbs; `python3 -m sandbox deps` never gets here
    (sandbox/__main__.py answers it before this module's imports)."""
    return deps.main()


def cmd_kernel(args: argparse.Namespace) -> int:
    print(build_kernel(KernelRequest(machine(args.machine), args.variant, args.tree)).boot_image)
    return EXIT_PASSED


def cmd_kernels(args: argparse.Namespace) -> int:
    """Every kernel the scenario files boot in a session of --tree, built or
    reused, one at a time."""
    needed = suite.kernels_needed(suite.load_all(suite.scenario_files()), args.tree)
    for number, (name, variant) in enumerate(needed, 1):
        say(f"kernel {number}/{len(needed)}: {name}/{variant} ({args.tree} tree)")
        print(build_kernel(KernelRequest(machine(name), variant, args.tree)).boot_image)
    return EXIT_PASSED


def cmd_userlands(args: argparse.Namespace) -> int:
    """Every Debian userland of rootfs/userlands.toml, built or reused, one
    at a time: what the scenarios and the tests that read a userland's
    files need before the suite starts."""
    userlands = load_userlands()
    for userland in userlands.by_name.values():
        print(build_userland(userland, userlands).root)
    return EXIT_PASSED


def cmd_check_series(args: argparse.Namespace) -> int:
    """Each patch of kernel-series/: checkpatch --strict, git am, incremental build."""
    failed = False
    for name in args.machines or ["x86_64"]:
        target = machine(name)
        why_not = not_built_for(args.tree, name)
        if why_not:
            raise SandboxError(f"check-series --machine {name}: {why_not}")
        results = series_check.check_series(target, tree_name=args.tree, start=args.start)
        print(series_check.report(target, results, args.tree))
        failed = failed or not results or not all(r.ok for r in results)
    return EXIT_FAILED if failed else EXIT_PASSED


def cmd_initramfs(args: argparse.Namespace) -> int:
    print(build_initramfs(args.machine).path)
    return EXIT_PASSED


def run_files(files: list[Path], machine_name: str, label: str, warp: bool | None = None,
              own: OwnKernel | None = None, jobs: int = 1, tree: str = DEFAULT_TREE) -> int:
    """Validate every file first, then boot once per scenario, `jobs` guests
    side by side (sandbox/app/parallel.py); print each matrix in the files' order.
    warp: time warp for every scenario (--warp on|off), or each file's own choice.
    own: the user's kernel, booted for every scenario it can serve; the others
    are skipped with their reason before anything boots (sandbox/scenario/needs.py).
    tree: the kernel source tree of the session (--tree); a scenario pinned
    to another one (`tree = ...`) is skipped with its reason before any boot."""
    scenarios = suite.load_all(files)  # bad input stops before any boot
    if warp is not None:
        scenarios = [replace(s, warp=warp) for s in scenarios]
    targets: dict[str, Target] = {}
    if own is not None:
        scenarios = own_kernel_scenarios(scenarios, own, machine_name)
        mine = [s for s in scenarios if machine_name in s.machines]
        own_target = target_with(machine(machine_name), own.artifact(), None) if mine else None
        targets = {s.kernel: own_target for s in mine if own_target is not None}
    planned: list[tuple[Scenario, Target]] = []
    for scenario in scenarios:
        if machine_name not in scenario.machines:
            say(f"{scenario.name}: not for {machine_name}, skipped")
            continue
        reason = None if own is not None else scenario.skip_on(tree, machine_name)
        if reason:
            say(f"{scenario.name}: skipped: {reason}")
            continue
        if scenario.kernel not in targets:  # every kernel built before the first boot
            targets[scenario.kernel] = prepare_target(machine(machine_name), scenario.kernel, tree)
        planned.append((scenario, targets[scenario.kernel]))
    results = paths.new_results_dir(label)
    write_session(results)
    runs: list[JudgedRun] = []

    def work(item: tuple[Scenario, Target], start: StartGuest) -> JudgedRun:
        scenario, target = item
        say(f"running {scenario.name} on {machine_name} ({target.accel.name})")
        return run_and_judge(target, scenario, results / scenario.slug / machine_name, start)

    def show(item: tuple[Scenario, Target], judged: JudgedRun) -> None:
        scenario, target = item
        runs.append(judged)
        kernel = (f"own {own.image}{f' from {own.tree}' if own.tree else ''}" if own
                  else f"{scenario.kernel}, tree {tree}")
        print(f"\n{scenario.title}\n  [{scenario.name}, {machine_name}, kernel {kernel}, "
              f"accel {target.accel.name}{', time warp' if scenario.warp else ''}, "
              f"boot {judged.record.boot_seconds:.1f}s]")
        print(programs.side_by_side(scenario, judged.record.observations)
              or report.phase_tables(judged.record, scenario, judged.result))
        print("PASSED" if judged.passed else report.failure_report(judged.record, judged.result))
        html_report.keep_charts(judged.record.evidence)  # while the other guests run

    run_side_by_side(work, planned, jobs, StopScope(), Guest, show)
    observations = results / "observations.jsonl"
    with observations.open("w") as out:
        for judged in runs:
            for o in judged.record.observations:
                out.write(json.dumps(o.to_record()) + "\n")
    print("\n" + report.summary(runs))
    print(f"\nobservations (JSON lines): {observations}\nevidence: {results}")
    write_page(results)
    return exit_code(runs)


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


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild results/<run>/report.html from the evidence, without booting."""
    folder = Path(args.folder) if args.folder else newest_results(paths.results_root())
    print(html_report.describe(html_report.write_report(folder)))
    return EXIT_PASSED


def exit_code(runs: list[JudgedRun]) -> int:
    """The worst of the runs: infrastructure, then a failed step, then an expectation."""
    if any(r.record.infrastructure_failed for r in runs):
        return EXIT_INFRA
    if any(r.record.outcome == STEP_FAILED for r in runs):
        return EXIT_STEP
    return EXIT_PASSED if all(r.passed for r in runs) else EXIT_FAILED


def _warp(args: argparse.Namespace) -> bool | None:
    """--warp on|off, or None: each scenario's own choice."""
    return None if args.warp is None else args.warp == "on"


def cmd_run(args: argparse.Namespace) -> int:
    files = [Path(f) for f in args.scenarios] or suite.scenario_files()
    return run_files(files, args.machine, "run", _warp(args), own_kernel_of(args), args.jobs, args.tree)


def own_kernel_of(args: argparse.Namespace) -> OwnKernel | None:
    """--kernel IMAGE --kernel-config CONFIG, or --kernel-tree PATH built for
    the machine (--machine; rehearse: --kernel-machine), checked
    (sandbox/build/own_kernel.py, sandbox/build/kernel_tree.py), or None."""
    if args.kernel_tree and (args.kernel or args.kernel_config):
        raise SandboxError("--kernel-tree PATH replaces --kernel IMAGE --kernel-config CONFIG: give one or the other")
    if args.kernel_tree:
        wanted = getattr(args, "machine", None) or args.kernel_machine  # rehearse: None, the tree's .config
        return build_tree(Path(args.kernel_tree), machine(wanted) if wanted else None)
    if bool(args.kernel) != bool(args.kernel_config):
        raise SandboxError("--kernel IMAGE and --kernel-config CONFIG go together")
    return own_kernel(Path(args.kernel), Path(args.kernel_config)) if args.kernel else None


def cmd_demo(args: argparse.Namespace) -> int:
    if args.where:  # `just demo armhf`, `just demo machine=armhf`, `just demo --live i386`
        args.machine = args.where.removeprefix("machine=")
        if args.machine not in MACHINES:
            raise SandboxError(f"no machine '{args.machine}' (machines: {', '.join(sorted(MACHINES))})")
    deps.ensure()
    if args.live:  # the clock crossing the rollover, each round shown as it comes
        from sandbox.app.live import run_live
        judged, results = run_live(machine(args.machine))
        print("\n" + report.summary([judged]))
        if not judged.passed:
            print(report.failure_report(judged.record, judged.result))
        write_page(results)
        return exit_code([judged])
    first = [paths.SCENARIOS / DEMO_PROGRAMS[args.machine]] if args.machine in DEMO_PROGRAMS else []
    return run_files(first + [paths.SCENARIOS / s for s in DEMO_SCENARIOS], args.machine, "demo", _warp(args),
                     jobs=args.jobs)


def cmd_record(args: argparse.Namespace) -> int:
    """Run one scenario and write what it observed into its probe steps that
    have no expectations yet (sandbox/report/recording.py)."""
    path = Path(args.scenario)
    scenarios = suite.load_all([path])
    if len(scenarios) != 1 or scenarios[0].variant:
        raise SandboxError(f"{path}: record takes a file of one scenario, not a family "
                           "(record one row as a plain file first)")
    (scenario,) = scenarios
    if args.machine not in scenario.machines:
        raise SandboxError(f"{path}: does not run on {args.machine} (machines: {', '.join(scenario.machines)})")
    target = prepare_target(machine(args.machine), scenario.kernel, scenario.tree_on(DEFAULT_TREE))
    results = paths.new_results_dir("record")
    judged = run_and_judge(target, scenario, results / scenario.slug / args.machine)
    if not judged.record.completed:
        print(report.failure_report(judged.record, judged.result))
        return exit_code([judged])
    where = (f"{time.strftime('%Y-%m-%d')} on {args.machine}, kernel {scenario.kernel} "
             f"{judged.record.release}")
    text = recording.record(path.read_text(), scenario, judged.record.observations, where)
    path.write_text(text)
    print(report.phase_tables(judged.record, scenario, judged.result))
    say(f"recorded into {path}: review every TODO and name the deciding function; evidence: {results}")
    return EXIT_PASSED


def cmd_programs_doc(args: argparse.Namespace) -> int:
    """docs/real-programs.md from the results folders of runs of scenarios/programs/."""
    say(f"wrote {evidence_docs.programs_doc([Path(f) for f in args.results])}")
    return EXIT_PASSED


def cmd_faketime_doc(args: argparse.Namespace) -> int:
    """The faketime table of docs/clock-sources.md from runs of scenarios/faketime/."""
    say(f"wrote the faketime table of {evidence_docs.faketime_doc([Path(f) for f in args.results])}")
    return EXIT_PASSED


def cmd_bench(args: argparse.Namespace) -> int:
    from sandbox.app.bench import bench  # only bench needs its imports
    bench(machine(args.machine), cold=not args.no_cold, static_audit_only=args.static_audit,
          runtime_audit_only=args.runtime_audit, speed_only=args.speed, suite=args.suite, cold_ci=args.cold_ci)
    return EXIT_PASSED


def cmd_rehearse(args: argparse.Namespace) -> int:
    """Which of these binaries will break in 2038: the static audit (--static,
    no boot), or with it the runtime audit (boots each machine once)."""
    broke = 0  # the static audit only says who binds 32-bit time, not who breaks
    if args.static:
        result = audit_static(args.inputs)
        rejected, text = result.rejected, audit_lines.report(result)
    else:
        from sandbox.audit import runtime_lines  # only the runtime audit boots
        from sandbox.audit.runtime import RuntimeOptions, audit_runtime
        options = RuntimeOptions(moments=parse_moments(args.at), timeout=args.timeout,
                                 overrides=tuple(args.commands), own=own_kernel_of(args))
        result = audit_runtime(args.inputs, options)
        rejected, text = result.static.rejected + result.rejected, runtime_lines.report(result)
        broke = result.counts().get(BROKE, 0)
    for bad in rejected:
        print(f"error: {bad.line()}", file=sys.stderr)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"inputs": args.inputs, **result.to_json()}, indent=1) + "\n")
        say(f"wrote {args.json}")
    return EXIT_ERROR if rejected else EXIT_FAILED if broke else EXIT_PASSED


def parse_moments(texts: list[str]) -> tuple:
    """--at LABEL=TIME ... -> the runtime audit's moments (default: before, after, y2106)."""
    from sandbox.audit.runtime_plan import DEFAULT_MOMENTS, Moment
    from sandbox.base.timefmt import format_time, parse_time
    moments = []
    for text in texts:
        label, sep, when = text.partition("=")
        try:
            moments.append(Moment(label, format_time(parse_time(when))))
        except ValueError as err:
            raise SandboxError(f"--at {text!r}: give LABEL=TIME, TIME as 2038-01-19T03:14:30Z ({err})") from None
        if not sep or not label.isidentifier():
            raise SandboxError(f"--at {text!r}: give LABEL=TIME, LABEL a word")
    return tuple(moments) or DEFAULT_MOMENTS


def cmd_mutants(args: argparse.Namespace) -> int:
    """Build each regression mutant, run its scenarios, print who caught it."""
    from sandbox.app import mutants as runner  # only this verb needs it
    chosen = load_mutants()
    unknown = sorted(set(args.only) - {m.name for m in chosen})
    if unknown:
        raise SandboxError(f"no mutant {', '.join(unknown)} in {MUTANTS_FILE} "
                           f"(known: {', '.join(m.name for m in chosen)})")
    # every scenario loaded, valid and meant for its mutant's kernel variant, before any build
    plans = {m: runner.scenarios_of(m) for m in chosen if not args.only or m.name in args.only}
    results = paths.new_results_dir("mutants")
    write_session(results)
    if args.control:
        runner.check_controls(plans, results)
    outcomes = []
    for number, (mutant, scenarios) in enumerate(plans.items(), 1):
        say(f"mutant {number}/{len(plans)}: {mutant.name} ({mutant.machine})")
        outcomes.append(runner.run_mutant(mutant, scenarios, results))
    text = runner.table(outcomes)
    (results / "mutants.txt").write_text(text + "\n")
    print("\n" + text + f"\n\nevidence: {results}")
    return EXIT_PASSED if all(o.verdict == runner.KILLED for o in outcomes) else EXIT_FAILED


def cmd_validate(args: argparse.Namespace) -> int:
    files = [Path(f) for f in args.scenarios] or suite.scenario_files()
    scenarios = suite.load_all(files)
    say(f"{len(files)} scenario file(s) valid ({len(scenarios)} scenarios)")
    return EXIT_PASSED


def _jobs(text: str) -> int:
    """--jobs N: a whole number of guests, at least one."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of guests, 1 or more, got {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sandbox", description="y2038 rollover sandbox")
    sub = p.add_subparsers(dest="command", required=True)

    def verb(name: str, func: object, help: str) -> argparse.ArgumentParser:
        v = sub.add_parser(name, help=help)
        v.set_defaults(func=func)
        return v

    def with_own_kernel(v: argparse.ArgumentParser) -> None:
        v.add_argument("--kernel", metavar="IMAGE", help="boot your own kernel image (zImage, bzImage) instead "
                       "of ours, for the machine its --kernel-config is for")
        v.add_argument("--kernel-config", metavar="CONFIG", help="the .config of --kernel, checked before boot")
        v.add_argument("--kernel-tree", metavar="PATH", help="build your own kernel source tree (its .config, "
                       "else tinyconfig, with our machine fragments merged in; out of tree, cached) and boot it")

    def with_machine(v: argparse.ArgumentParser) -> argparse.ArgumentParser:
        v.add_argument("--machine", default="x86_64", choices=sorted(MACHINES))
        return v

    def with_tree(v: argparse.ArgumentParser) -> argparse.ArgumentParser:
        v.add_argument("--tree", default=DEFAULT_TREE, choices=list(TREES),
                       help=f"the kernel source tree (default {DEFAULT_TREE}; sandbox/base/trees.py)")
        return v

    verb("deps", cmd_deps, "install the Debian packages the sandbox needs")
    k = with_tree(with_machine(verb("kernel", cmd_kernel, "build (or reuse) a kernel")))
    k.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(VARIANTS))
    with_tree(verb("kernels", cmd_kernels, "build (or reuse) every kernel the scenarios boot"))
    c = with_tree(verb("check-series", cmd_check_series,
             "check a tree's kernel series patch by patch: checkpatch --strict, git am, build"))
    c.add_argument("--machine", dest="machines", action="append", choices=sorted(MACHINES),
                   help="build for this machine (repeatable; default x86_64)")
    c.add_argument("--from", dest="start", metavar="PATCH",
                   help="check from this patch (a name or its number) on; the ones before it "
                        "are applied and built once, not checked")
    with_machine(verb("initramfs", cmd_initramfs, "build (or reuse) the initramfs"))
    verb("userlands", cmd_userlands, "build (or reuse) every Debian userland the scenarios run")
    r = with_tree(with_machine(verb("run", cmd_run, "run scenario files (default: all)")))
    r.add_argument("scenarios", nargs="*")
    with_own_kernel(r)
    d = with_machine(verb("demo", cmd_demo, "build what is missing, boot, show the rollover"))
    for v in (r, d):
        v.add_argument("--warp", choices=("on", "off"),
                       help="time warp for every scenario (default: each scenario's own `warp`)")
        v.set_defaults(warp=None)
        v.add_argument("--jobs", type=_jobs, default=default_jobs(), metavar="N",
                       help=f"guests side by side, each on its own core (default {default_jobs()}: "
                            f"the cores, at most {MAX_DEFAULT_JOBS}; 1: one after the other)")
    d.add_argument("where", nargs="?", metavar="machine", help="the machine, also as machine=<name>")
    d.add_argument("--live", action="store_true",
                   help="watch the clock cross the rollover, every flavour once a second (scenarios/clock/live.toml)")
    b = with_machine(verb("bench", cmd_bench, "print build, boot and demo timings"))
    b.add_argument("--no-cold", action="store_true", help="skip the cold (no ccache) build")
    b.add_argument("--static-audit", action="store_true",
                   help="only the static audit's figures: time per 100 binaries of each userland, agreement "
                        "with known answers (builds the probes; no kernel, no boot)")
    b.add_argument("--speed", action="store_true",
                   help="only the speed figures, each with its goal: boot and its phases, time warp, the "
                        "24-hour scenario, the author's loop, the warm demo and where its time goes, the warm suite")
    b.add_argument("--no-suite", dest="suite", action="store_false",
                   help="leave out the warm suite (minutes)")
    b.add_argument("--cold-ci", action="store_true",
                   help="also run .ci/run in a fresh clone with an empty cache (about an hour)")
    b.add_argument("--runtime-audit", action="store_true",
                   help="only the runtime audit's figures: time per program and agreement with known answers "
                        "on the machine (one boot)")
    rec = with_machine(verb("record", cmd_record,
                            "run a scenario and write what it observed as expectations into it"))
    rec.add_argument("scenario")
    rp = verb("report", cmd_report, "rebuild results/<run>/report.html from the evidence, without booting")
    rp.add_argument("folder", nargs="?", help="a results folder (default: the newest under results/)")
    doc = verb("programs-doc", cmd_programs_doc, "write docs/real-programs.md from results folders")
    doc.add_argument("results", nargs="+")
    ft = verb("faketime-doc", cmd_faketime_doc, "write the faketime table of docs/clock-sources.md from "
              "results folders of scenarios/faketime/")
    ft.add_argument("results", nargs="+")
    rh = verb("rehearse", cmd_rehearse, "which of these binaries break in 2038: run across the rollover "
              "(--static: without booting)")
    rh.add_argument("--static", action="store_true", help="the static audit only: symbols and system-call "
                    "instructions, nothing boots")
    rh.add_argument("--json", metavar="FILE", help="also write every record as JSON to FILE")
    rh.add_argument("--command", dest="commands", action="append", default=[], metavar="NAME=ARGS",
                    help="run the file NAME with ARGS (split as a shell would) instead of its --version "
                         "or sandbox/audit/commands.toml's line (repeatable)")
    rh.add_argument("--at", action="append", default=[], metavar="LABEL=TIME",
                    help="run at these times, each set with settimeofday, the RTC at the first "
                         "(repeatable; default before="
                         "2038-01-19T03:10:00Z after=2038-01-19T03:14:30Z y2106=2106-02-07T06:28:20Z)")
    rh.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                    help="stop a run after this long (guest seconds; default 30)")
    with_own_kernel(rh)
    rh.add_argument("--kernel-machine", choices=sorted(MACHINES),
                    help="the machine --kernel-tree is built for (default: the machine of the tree's .config, "
                         "else x86_64)")
    rh.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="an ELF file, a directory tree, a .deb, <userland>:<package> or <userland>:")
    mu = verb("mutants", cmd_mutants, "build each regression mutant kernel and run the scenarios "
              "that must catch it (kernel-series/regressions/)")
    mu.add_argument("--no-control", dest="control", action="store_false",
                    help="skip running each scenario on its mutant's kernel without the patch first "
                         "(just test did)")
    mu.add_argument("only", nargs="*", metavar="NAME", help="only these mutants (default: all)")
    v = verb("validate", cmd_validate, "check scenario files without booting")
    v.add_argument("scenarios", nargs="*")
    return p


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each ends a run at once: QEMU stopped, the run recorded as interrupted,
exit code 128 + the signal's number (130, 143, 129)."""


def _on_signal(signum: int, frame: object) -> None:
    """The first signal unwinds the main thread (every `with` block stops its
    QEMU, the runner records the run as interrupted); later ones are ignored
    while that clean-up, a few seconds at most, runs."""
    for other in STOP_SIGNALS:
        signal.signal(other, lambda *_: None)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(signum, _on_signal)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    install_signal_handlers()
    try:
        return int(args.func(args))
    except SandboxError as err:
        print(f"error: {printable(str(err))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as err:
        signum = getattr(err, "signum", signal.SIGINT)
        print(f"interrupted by {signal.Signals(signum).name}: stopped (a run stops its QEMU and "
              "records itself as interrupted in its results folder; a build leaves no kernel behind)",
              file=sys.stderr)
        return 128 + signum
    except Exception:  # noqa: BLE001 - a bug of ours is an infrastructure failure, never "failed" (1)
        traceback.print_exc()
        print(f"error: internal error (exit {EXIT_INFRA}: infrastructure, not the scenario)", file=sys.stderr)
        return EXIT_INFRA
