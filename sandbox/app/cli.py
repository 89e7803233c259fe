"""Command line: parses the arguments of `python3 -m sandbox VERB ...` (one
parser, a subcommand per verb) and calls the verb's function in
sandbox/app/verbs.py. Exit codes: sandbox/app/exit_codes.py; a SandboxError
is one line on stderr (exit 2), a signal 128 + its number, a bug of ours 3."""
from __future__ import annotations

import argparse
import errno
import signal
import sys
import traceback
from pathlib import Path

from sandbox.app import lifeline, system_verb, verbs
from sandbox.app.across import DEFAULT_DIR
from sandbox.app.exit_codes import EXIT_ERROR, EXIT_INFRA
from sandbox.app.parallel import MAX_DEFAULT_JOBS, default_jobs
from sandbox.app.signals import install_signal_handlers
from sandbox.base.errors import SandboxError, printable
from sandbox.base.machines import DEFAULT_MACHINE, MACHINES
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, TREES
from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT, VARIANTS


DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)
"""A full disk, a quota, a read-only or failing disk: one line, exit 3."""


def _jobs(text: str) -> int:
    """--jobs N: a whole number of guests, at least one."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of guests, 1 or more, got {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sandbox", description="y2038 rollover sandbox")
    sub = p.add_subparsers(dest="command", required=True)

    def verb(name: str, func: object, help: str, takes_rest: bool = False) -> argparse.ArgumentParser:
        """takes_rest: the arguments this parser does not know are the verb's
        (`across` hands them to pytest); any other verb refuses them."""
        v = sub.add_parser(name, help=help, description=help, allow_abbrev=not takes_rest)
        v.set_defaults(func=func, takes_rest=takes_rest, verb_parser=v)
        return v

    def with_own_kernel(v: argparse.ArgumentParser) -> None:
        v.add_argument("--kernel", metavar="IMAGE", help="boot your own kernel image (zImage, bzImage) instead "
                       "of ours, for the machine its --kernel-config is for")
        v.add_argument("--kernel-config", metavar="CONFIG", help="the .config of --kernel, checked before boot")
        v.add_argument("--kernel-tree", metavar="PATH", help="build your own kernel source tree (its .config, "
                       "else tinyconfig, with our machine fragments merged in; out of tree, cached) and boot it")

    def with_machine(v: argparse.ArgumentParser, default: str | None = DEFAULT_MACHINE,
                     default_is: str = DEFAULT_MACHINE) -> argparse.ArgumentParser:
        v.add_argument("--machine", default=default, choices=sorted(MACHINES),
                       help=f"the machine (default {default_is})")
        return v

    def with_tree(v: argparse.ArgumentParser) -> argparse.ArgumentParser:
        v.add_argument("--tree", default=DEFAULT_TREE, choices=list(TREES),
                       help=f"the kernel source tree (default {DEFAULT_TREE}; sandbox/base/trees.py)")
        return v

    verb("deps", verbs.cmd_deps, "install the Debian packages the sandbox needs")
    k = with_tree(with_machine(verb("kernel", verbs.cmd_kernel, "build (or reuse) a kernel")))
    k.add_argument("--variant", default=DEFAULT_VARIANT, choices=sorted(VARIANTS))
    with_tree(verb("kernels", verbs.cmd_kernels, "build (or reuse) every kernel the scenarios boot"))
    c = with_tree(verb("check-series", verbs.cmd_check_series,
             "check a tree's kernel series patch by patch: checkpatch --strict, git am, build"))
    c.add_argument("--machine", dest="machines", action="append", choices=sorted(MACHINES),
                   help="build for this machine (repeatable; default x86_64)")
    c.add_argument("--from", dest="start", metavar="PATCH",
                   help="check from this patch (a name or its number) on; the ones before it "
                        "are applied and built once, not checked")
    with_machine(verb("initramfs", verbs.cmd_initramfs, "build (or reuse) the initramfs"))
    with_machine(verb("build", verbs.cmd_build, "build (or reuse) the kernel and the initramfs of a machine")
                 ).set_defaults(variant=DEFAULT_VARIANT, tree=DEFAULT_TREE)
    verb("build-all", verbs.cmd_build_all, "build (or reuse) every kernel the scenarios boot, every initramfs, "
         "every Debian userland")
    verb("userlands", verbs.cmd_userlands, "build (or reuse) every Debian userland the scenarios run")
    r = with_tree(with_machine(verb("run", verbs.cmd_run, "run scenario files and print their matrices"),
                               None, f"each file's own: {DEFAULT_MACHINE} when it names it, else its first"))
    r.add_argument("scenarios", nargs="+", metavar="FILE", help="a scenario file, or file.toml[variant]")
    with_own_kernel(r)
    d = with_machine(verb("demo", verbs.cmd_demo, "build what is missing, boot, show the rollover"))
    for v in (r, d):
        v.add_argument("--warp", choices=("on", "off"),
                       help="time warp for every scenario (default: each scenario's own `warp`)")
        v.set_defaults(warp=None)
        v.add_argument("--jobs", type=_jobs, default=default_jobs(), metavar="N",
                       help=f"guests side by side, each on its own core (default {default_jobs()}: "
                            f"the cores, at most {MAX_DEFAULT_JOBS}; 1: one after the other)")
    d.set_defaults(machine=None)  # --machine, or the one positional name; x86_64 if neither
    d.add_argument("where", nargs="?", metavar="MACHINE", help="the machine, as --machine (also machine=<name>); "
                   "`system`: Debian 12 and Debian 13 armhf whole systems across the rollover, side by side")
    d.add_argument("--live", action="store_true",
                   help="watch the clock cross the rollover, every flavour once a second (scenarios/clock/live.toml)")
    b = with_machine(verb("bench", verbs.cmd_bench, "print build, boot and demo timings"))
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
    b.add_argument("--fresh-machine", action="store_true",
                   help="only the fresh-machine check: the README's set-up lines up to `just demo` in a pristine "
                        "Debian 12 root (mmdebstrap, chroot; root; 20-60 min, cold), each phase timed")
    b.add_argument("--keep-root", action="store_true", help="with --fresh-machine: keep the root in /var/tmp")
    b.add_argument("--futex", action="store_true",
                   help="only the futex_time32 round trips: pristine against series kernels on i386 and "
                        "armhf, under allow (kernel-series 0028)")
    b.add_argument("--system", action="store_true",
                   help="only the whole-system figures: the Debian 12 armhf image's build and size, power-on "
                        "to settled, the night across the rollover under warp (docs/system-rehearsal.md)")
    b.add_argument("--runtime-audit", action="store_true",
                   help="only the runtime audit's figures: time per program and agreement with known answers "
                        "on the machine (one boot)")
    rec = with_machine(verb("record", verbs.cmd_record,
                            "run a scenario and write what it observed as expectations into it"))
    rec.add_argument("scenario")
    rp = verb("report", verbs.cmd_report, "rebuild results/<run>/report.html from the evidence, without booting")
    rp.add_argument("folder", nargs="?", help="a results folder (default: the newest under results/)")
    doc = verb("programs-doc", verbs.cmd_programs_doc, "write docs/real-programs.md from results folders")
    doc.add_argument("results", nargs="+")
    ft = verb("faketime-doc", verbs.cmd_faketime_doc, "write the faketime table of docs/clock-sources.md from "
              "results folders of scenarios/faketime/")
    ft.add_argument("results", nargs="+")
    rh = verb("rehearse", verbs.cmd_rehearse, "which of these binaries break in 2038: run across the rollover "
              "(--static: without booting)")
    rh.add_argument("--static", action="store_true", help="the static audit only: symbols and system-call "
                    "instructions, nothing boots")
    rh.add_argument("--json", metavar="FILE", help="also write every record as JSON to FILE")
    rh.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE: a test case per file, "
                    "a failure for each --fail-on fails")
    rh.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 to FILE: a result per finding, "
                    "located at the file's path in the input")
    rh.add_argument("--fail-on", choices=("broke", "calls-time32", "time32"),  # sandbox/audit/findings.py FAIL_ON
                    help="exit 1 when a file is at this level or worse: broke, calls-time32 (or broke), time32 "
                         "(or binds 32-bit time); default broke, with --static nothing")
    rh.add_argument("--html", metavar="FILE", help="also write a page to FILE: every verdict, and with "
                    "--horizons a chart of programs against horizons")
    rh.add_argument("--horizons", action="store_true", help="run each program at the horizons (2036-02-07 NTP, "
                    "2038-01-19, a day later, 2050-01-01 X.509, 2100-03-01, 2106-02-07 unsigned 32-bit) "
                    "after a reference in 2036, and the --at times after them; report the first it broke at")
    rh.add_argument("--baseline", metavar="OLD.json", help="compare with an earlier run's --json: new breaks, "
                    "fixed, unchanged, by build-id and path; the exit code follows the new breaks only")
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
    rh.add_argument("--machine", "--kernel-machine", dest="machine", choices=sorted(MACHINES),
                    help="the machine --kernel-tree is built for (default: the machine of the tree's .config, "
                         "else x86_64)")
    rh.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="an ELF file, a directory tree, a .deb, a firmware image (tar, cpio, ext2/3/4, "
                         "squashfs), <userland>:<package> or <userland>:")
    sy = verb("system", system_verb.cmd_system, "rehearse whole systems with their own "
              "init across the rollover: a verdict per unit (docs/system-rehearsal.md)")
    system_verb.add_arguments(sy)
    with_own_kernel(sy)
    sy.set_defaults(machine=None)  # --kernel-tree: the machine of the tree's .config
    mu = with_tree(verb("mutants", verbs.cmd_mutants, "build each regression mutant kernel of a tree and run "
                        "the scenarios that must catch it (kernel-series/regressions/)"))
    mu.add_argument("--list", action="store_true",
                    help="print each mutant on the tree (machine, kernel, patch, scenarios, or why it is not "
                         "on the tree) and build nothing")
    mu.add_argument("--no-control", dest="control", action="store_false",
                    help="skip running each scenario on its mutant's kernel without the patch first "
                         "(just test did)")
    mu.add_argument("only", nargs="*", metavar="NAME", help="only these mutants (default: all)")
    v = verb("validate", verbs.cmd_validate, "check scenario files without booting")
    v.add_argument("scenarios", nargs="*", metavar="FILE")
    td = verb("tree-diff", verbs.cmd_tree_diff, "compare two results folders run by run (e.g. a 6.1 and a 6.12 "
              "session): 0 the same, 1 different")
    td.add_argument("results_a", metavar="RESULTS_A")
    td.add_argument("results_b", metavar="RESULTS_B")
    verb("lint", verbs.cmd_lint, "pyflakes and mypy over sandbox/ and pytest/ (just test runs it first)")
    rl = verb("reliability", verbs.cmd_reliability, "figures of hostile or careless use: malformed files, "
              "signals, kernel findings (docs/reliability.md keeps the output)")
    rl.add_argument("--no-boot", action="store_true", help="skip the signal trials (they boot x86_64)")
    rl.add_argument("--compare", metavar="COMMIT", help="give the malformed files to COMMIT's code and to this "
                    "tree's and show what changed (no boot)")
    ac = verb("across", verbs.cmd_across, "run the suite (or the pytest arguments given) on other hosts "
              "through pytest-xdist's SSH gateways (docs/across-hosts.md); every other argument goes to pytest",
              takes_rest=True)
    ac.add_argument("--host", action="append", required=True, metavar="[N*]HOST",
                    help="an ssh host or alias, N* for N workers there (repeatable)")
    ac.add_argument("--dir", default=DEFAULT_DIR, help=f"folder on each host (default ~/{DEFAULT_DIR})")
    ac.add_argument("--ssh-config", type=Path, help="an ssh_config file (ssh -F)")
    return p


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args, rest = cli.parse_known_args(sys.argv[1:] if argv is None else argv)
    if rest and not args.takes_rest:
        args.verb_parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    install_signal_handlers()
    lifeline.watch(lifeline.watched())  # our parent or the `just` above us killed: stop as for SIGTERM
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
    except Exception as err:  # noqa: BLE001 - a bug of ours is an infrastructure failure, never "failed" (1)
        if isinstance(err, OSError) and err.errno in DISK_ERRORS:  # one line: the disk, not a bug
            where = f" writing {err.filename}" if err.filename else ""
            print(printable(f"error: {err.strerror or err}{where}: the host's disk, not the scenario "
                            f"(exit {EXIT_INFRA}); free some space or point Y2038_RESULTS at another disk"),
                  file=sys.stderr)
            return EXIT_INFRA
        traceback.print_exc()
        print(f"error: internal error (exit {EXIT_INFRA}: infrastructure, not the scenario)", file=sys.stderr)
        return EXIT_INFRA
