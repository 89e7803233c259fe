"""What each verb of the command line does (sandbox/app/cli.py parses the
arguments and calls one of these with them): build, run, record, rehearse,
report. Each returns the exit code (sandbox/app/exit_codes.py); bad input
raises SandboxError, which the command line prints as one line."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox.app import evidence_docs
from sandbox.app.caller import caller_input, caller_path
from sandbox.app.exit_codes import EXIT_ERROR, EXIT_FAILED, EXIT_INFRA, EXIT_PASSED, exit_code
from sandbox.app.facts import write_session
from sandbox.app.jobs import run_and_judge
from sandbox.app.kernel_args import own_kernel_of
from sandbox.app.runs import run_files, write_page
from sandbox.audit import lines as audit_lines
from sandbox.audit.baseline import compare, load_baseline
from sandbox.audit.findings import DEFAULT_FAIL_ON, failing, findings
from sandbox.audit.horizons import horizon_moments
from sandbox.audit.junit import junit_xml
from sandbox.audit.page import page_html
from sandbox.audit.sarif import sarif_log
from sandbox.audit.static import StaticAudit, audit_static
from sandbox.base import paths
from sandbox.base.evidence import MUTANTS, Session
from sandbox.base.errors import SandboxError, printable, shown
from sandbox.base.machines import DEFAULT_MACHINE, MACHINES, machine
from sandbox.base.progress import say
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, not_built_for
from sandbox.build import deps, series_check
from sandbox.build.initramfs import build_initramfs
from sandbox.build.kernel import KernelRequest, build_kernel
from sandbox.build.userland import build_userland
from sandbox.guest.target import prepare_target
from sandbox.report import html as html_report
from sandbox.report import recording
from sandbox.report import text as report
from sandbox.report.evidence import RUN_FILE, SESSION_FILE, newest_results
from sandbox.scenario import suite
from sandbox.scenario.mutants import MUTANTS_FILE, load_mutants
from sandbox.scenario.userlands import load_userlands

if TYPE_CHECKING:  # the runtime audit's modules are imported only when it runs
    from sandbox.audit.runtime.audit import RuntimeAudit

DEMO_SYSTEM = "system"  # `just demo system`: sandbox/app/system_verb.py demo_system
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
    "armhf": "programs/old-vs-new.toml[armhf]",
    "i386": "programs/old-vs-new.toml[i386]",
    "x86_64": "programs/old-vs-new.toml[x86_64]",
}

def cmd_deps(args: argparse.Namespace) -> int:
    """Listed with the other verbs; `python3 -m sandbox deps` never gets here
    (sandbox/__main__.py answers it before this module's imports)."""
    return deps.main()


def cmd_build(args: argparse.Namespace) -> int:
    """The kernel (series variant, default tree) and the initramfs of one machine."""
    cmd_kernel(args)
    return cmd_initramfs(args)


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


def cmd_build_all(args: argparse.Namespace) -> int:
    """What the suite boots, built or reused before it starts: every kernel
    of the default tree, every machine's initramfs, every Debian userland."""
    cmd_kernels(argparse.Namespace(tree=DEFAULT_TREE))
    for name in MACHINES:
        cmd_initramfs(argparse.Namespace(machine=name))
    return cmd_userlands(args)


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


def results_folder(folder: Path) -> Path:
    """A folder `just report` may write report.html into: one a run or a
    session made (session.json, or <scenario>/<machine>/run.json a level or
    two down: looked for only there, so `just report /` does not walk the disk)."""
    looks = folder.is_dir() and ((folder / SESSION_FILE).is_file() or any(
        next(folder.glob(pattern), None) for pattern in (f"*/*/{RUN_FILE}", f"*/*/*/{RUN_FILE}")))
    if not looks:
        raise SandboxError(f"{folder}: not a results folder (no {SESSION_FILE}, no <scenario>/<machine>/{RUN_FILE}); "
                           "give one under results/, or nothing for the newest")
    return folder


def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild results/<run>/report.html from the evidence, without booting."""
    folder = results_folder(caller_path(args.folder)) if args.folder else newest_results(paths.results_root())
    stats = html_report.write_report(folder)
    for line in stats.unsound:  # each on stderr, one line, as any error: the page names them too
        print(f"error: {printable(line)}", file=sys.stderr)
    print(html_report.page_line(stats))
    return EXIT_INFRA if stats.unsound else EXIT_PASSED  # a killed run or damaged evidence is never clean


def _warp(args: argparse.Namespace) -> bool | None:
    """--warp on|off, or None: each scenario's own choice."""
    return None if args.warp is None else args.warp == "on"


def cmd_run(args: argparse.Namespace) -> int:
    files = [caller_path(f) for f in args.scenarios]  # at least one: `sandbox run` alone is a usage error
    return run_files(files, args.machine, "run", _warp(args), own_kernel_of(args), args.jobs, args.tree)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.where == DEMO_SYSTEM:  # `just demo system`: whole systems, Debian 12 and 13 armhf side by side
        if args.live or args.machine:
            raise SandboxError("demo system: the systems are armhf's; --live and --machine are for the probes' demo")
        from sandbox.app.system_verb import demo_system
        return demo_system()
    if args.where:  # `just demo armhf` as `just demo --machine armhf`; `just demo --live i386`
        where = args.where.removeprefix("machine=")
        if where not in MACHINES:
            raise SandboxError(f"no machine '{where}' (machines: {', '.join(sorted(MACHINES))})")
        if args.machine not in (None, where):
            raise SandboxError(f"demo: two machines, --machine {args.machine} and {where}: give one")
        args.machine = where
    args.machine = args.machine or DEFAULT_MACHINE
    if args.live:  # the clock crossing the rollover, each round shown as it comes
        from sandbox.app.live import run_live
        judged, results = run_live(machine(args.machine))
        print("\n" + report.summary([judged]))
        if not judged.passed:
            print(shown(report.failure_report(judged.record, judged.result)))
        write_page(results)
        return exit_code([judged])
    first = [paths.SCENARIOS / DEMO_PROGRAMS[args.machine]] if args.machine in DEMO_PROGRAMS else []
    return run_files(first + [paths.SCENARIOS / s for s in DEMO_SCENARIOS], args.machine, "demo", _warp(args),
                     jobs=args.jobs)


def cmd_record(args: argparse.Namespace) -> int:
    """Run one scenario and write what it observed into its probe steps that
    have no expectations yet (sandbox/report/recording.py)."""
    path = caller_path(args.scenario)
    scenarios = suite.load_all([path], recording=True)  # its expectations are yet to be written
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
    print(shown(report.phase_tables(judged.record, scenario, judged.result)))
    say(f"recorded into {path}: review every TODO and name the deciding function; evidence: {results}")
    return EXIT_PASSED


def cmd_programs_doc(args: argparse.Namespace) -> int:
    """docs/real-programs.md from the results folders of runs of scenarios/programs/."""
    say(f"wrote {evidence_docs.programs_doc([caller_path(f) for f in args.results])}")
    return EXIT_PASSED


def cmd_faketime_doc(args: argparse.Namespace) -> int:
    """The faketime table of docs/clock-sources.md from runs of scenarios/faketime/."""
    say(f"wrote the faketime table of {evidence_docs.faketime_doc([caller_path(f) for f in args.results])}")
    return EXIT_PASSED


def cmd_bench(args: argparse.Namespace) -> int:
    if args.fresh_machine:  # the README's set-up in a pristine Debian 12 root
        from sandbox.app.fresh_machine import fresh_machine
        return fresh_machine(keep_root=args.keep_root)
    from sandbox.app.bench import bench  # only bench needs its imports
    bench(machine(args.machine), cold=not args.no_cold, static_audit_only=args.static_audit,
          runtime_audit_only=args.runtime_audit, speed_only=args.speed, suite=args.suite, cold_ci=args.cold_ci,
          command=" ".join(["just bench", *sys.argv[2:]]), system_only=args.system,
          futex_only=args.futex)
    return EXIT_PASSED


def cmd_rehearse(args: argparse.Namespace) -> int:
    """Which of these binaries will break in 2038: the static audit (--static,
    no boot), or with it the runtime audit (boots each machine once)."""
    args.inputs = [caller_input(text) for text in args.inputs]
    baseline = load_baseline(caller_path(args.baseline)) if args.baseline else None  # a bad file stops before any boot
    if args.horizons and args.static:
        raise SandboxError("--horizons runs programs: it cannot go with --static")
    result: StaticAudit | RuntimeAudit
    if args.static:
        result = audit_static(args.inputs)
        rejected, text = result.rejected, audit_lines.report(result)
    else:
        from sandbox.audit.runtime import lines as runtime_lines  # only the runtime audit boots
        from sandbox.audit.runtime.audit import RuntimeOptions, audit_runtime
        moments = parse_moments(args.at)
        if args.horizons:
            moments = horizon_moments(moments if args.at else ())
        options = RuntimeOptions(moments=moments, timeout=args.timeout,
                                 overrides=tuple(args.commands), own=own_kernel_of(args))
        result = audit_runtime(args.inputs, options)
        rejected, text = result.static.rejected + result.rejected, runtime_lines.report(result, args.horizons)
    for bad in rejected:
        print(f"error: {bad.line()}", file=sys.stderr)
    document: dict[str, object] = {"inputs": args.inputs, **result.to_json()}
    # the static audit only says who binds 32-bit time, not who breaks: it fails nothing unless asked
    level = args.fail_on or (None if args.static else DEFAULT_FAIL_ON)
    failed = failing(findings(document), level) if level else []
    if baseline is not None:
        comparison = compare(baseline, document, level or DEFAULT_FAIL_ON)
        document["baseline"] = comparison.to_json()
        text += "\n" + "\n".join(comparison.lines())
        failed = [p.new for p in comparison.new_breaks if p.new]  # the exit code follows the new breaks only
    print(text)
    outputs = {args.json: lambda: json.dumps(document, indent=1) + "\n",
               args.sarif: lambda: json.dumps(sarif_log(document), indent=1) + "\n",
               args.junit: lambda: junit_xml(document, level or DEFAULT_FAIL_ON),
               args.html: lambda: page_html(document)}
    for name, render in outputs.items():
        if name:
            caller_path(name).write_text(render())
            say(f"wrote {name}")
    return EXIT_ERROR if rejected else EXIT_FAILED if failed else EXIT_PASSED


def parse_moments(texts: list[str]) -> tuple:
    """--at LABEL=TIME ... -> the runtime audit's moments (default: before, after, y2106)."""
    from sandbox.audit.runtime.plan import DEFAULT_MOMENTS, Moment
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
    """Build each regression mutant of the tree, run its scenarios, print who
    caught it (--list: what would run, nothing built)."""
    from sandbox.app import mutants as runner  # only this verb needs it
    listed = load_mutants(args.tree)
    unknown = sorted(set(args.only) - {m.name for m in listed})
    if unknown:
        raise SandboxError(f"no mutant {', '.join(unknown)} in {MUTANTS_FILE} "
                           f"(known: {', '.join(m.name for m in listed)})")
    chosen = [m for m in listed if not args.only or m.name in args.only]
    # every scenario loaded, valid and meant for its mutant's kernel variant and tree, before any build
    plans = {m: runner.scenarios_of(m) for m in chosen if not m.absent}
    if args.list:
        print(runner.plan(tuple(chosen), args.tree))
        return EXIT_PASSED
    results = paths.new_results_dir("mutants")
    write_session(results)
    if args.control:
        runner.check_controls(plans, results)
    outcomes = []
    for mutant in chosen:
        if mutant.absent:
            say(f"mutant {mutant.name}: not on the {args.tree} tree: {mutant.absent}")
            outcomes.append(runner.absent_result(mutant))
            continue
        number = sum(o.verdict != runner.ABSENT for o in outcomes) + 1
        say(f"mutant {number}/{len(plans)}: {mutant.name} ({mutant.machine}, {args.tree} tree)")
        outcomes.append(runner.run_mutant(mutant, plans[mutant], results))
    text = runner.table(outcomes, args.tree)
    Session(results).write(MUTANTS, text + "\n")
    print("\n" + text + f"\n\nevidence: {results}")
    return EXIT_PASSED if runner.all_killed(outcomes) else EXIT_FAILED


def cmd_validate(args: argparse.Namespace) -> int:
    """Probe scenarios, and whole systems' (scenarios/system/, sandbox/system/scenario.py)."""
    from sandbox.system.scenario import is_system_scenario, load_system_scenario, system_scenario_files
    given = [caller_path(f) for f in args.scenarios]
    systems = [f for f in given if is_system_scenario(f)] if given else system_scenario_files()
    files = [f for f in given if f not in systems] if given else suite.scenario_files()
    scenarios = suite.load_all(files)
    for path in systems:
        load_system_scenario(path)
    of_systems = f", {len(systems)} of whole systems" if systems else ""
    say(f"{len(files) + len(systems)} scenario file(s) valid ({len(scenarios) + len(systems)} scenarios{of_systems})")
    return EXIT_PASSED


def cmd_tree_diff(args: argparse.Namespace) -> int:
    """Two results folders compared run by run: 0 the same, 1 different."""
    from sandbox.app import tree_diff
    pairs, alone = tree_diff.compare_folders(caller_path(args.results_a), caller_path(args.results_b))
    print(tree_diff.report(pairs, alone))
    return EXIT_PASSED if all(not p.verdicts and not p.differences for p in pairs) else EXIT_FAILED


def cmd_lint(args: argparse.Namespace) -> int:
    """pyflakes and mypy over sandbox/ and pytest/ (sandbox/app/lint.py)."""
    from sandbox.app.lint import lint
    return lint()


def cmd_reliability(args: argparse.Namespace) -> int:
    """Figures of hostile or careless use (sandbox/app/reliability.py)."""
    from sandbox.app import reliability
    from sandbox.app.benchmarks_doc import add_text_entry
    if args.compare:
        compared = reliability.compare(args.compare)
        print(compared, end="")
        command = f"just reliability --compare {args.compare}"
        print(f"\nwritten into {add_text_entry(reliability.COMPARED, compared, command)}")
        return EXIT_PASSED
    tables = reliability.measure(boot=not args.no_boot)
    print(tables, end="")
    command = "just reliability" + (" --no-boot" if args.no_boot else "")
    print(f"\nwritten into {add_text_entry(reliability.WHAT, tables, command)}")
    return EXIT_PASSED


def cmd_across(args: argparse.Namespace) -> int:
    """The suite on other hosts: pytest replaces this process (sandbox/app/across.py)."""
    from sandbox.app import across
    across.exec_pytest(across.command_for(args, args.rest, Path.cwd()))
    return EXIT_ERROR  # not reached: exec_pytest replaces the process
