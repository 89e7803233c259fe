"""The runtime audit: the static audit's records, then each program run on
its machine's series kernel at each moment, and a runtime verdict joined to
its record (BinaryAudit.runtime).

    audit_runtime(inputs, RuntimeOptions) -> RuntimeAudit
    run_items(machine, items, options, evidence) -> per-item runtime records

One boot per machine: the userlands the programs run in (a package named
as <userland>:<package> is added to that userland, with what it depends
on), and an overlay archive with the user's root filesystems (a directory
input holding bin/sh or usr/bin/env: its programs run in it), the user's
other files (run in the machine's Debian 12 userland) and the EOVERFLOW
shim.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from sandbox.audit.commands import Commands, load_commands
from sandbox.audit.horizons import first_broken
from sandbox.audit.inputs import USERLAND_INPUT, Candidate, expand
from sandbox.audit.record import BinaryAudit, Rejected
from sandbox.build.own_kernel import OwnKernel
from sandbox.audit.runtime.boot import BootPlan, GuestFailed, Ran, boot_and_run
from sandbox.audit.runtime.facts import process_counts, refusals, time32_calls, time32_truncations
from sandbox.audit.runtime.plan import (COLLECT, DEFAULT_MOMENTS, FILES_GUEST_DIR, RUN, SHIM_GUEST_PATH, Moment,
                                        Subject, plan, split_collected)
from sandbox.audit.runtime.verdict import (RUNTIME_VERDICTS, NOT_EXERCISED, Runs, RunFacts, refusals_unseen,
                                           runtime_verdict)
from sandbox.audit.shim import build_shim
from sandbox.audit.static import StaticAudit, audit_pairs
from sandbox.audit.symbols import load_symbols
from sandbox.base.errors import SandboxError
from sandbox.base.machines import machine as machine_named
from sandbox.base.paths import new_results_dir
from sandbox.base.progress import say
from sandbox.build.userland import UserlandArtifact, build_userland
from sandbox.guest.target import prepare_target, target_with
from sandbox.scenario.userlands import load_userlands

BASE_USERLANDS = {"armhf": "debian12-armhf", "i386": "debian12-i386", "x86_64": "debian12-amd64"}
"""Where a file named by path (not <userland>:<package>) runs: its machine's
Debian 12 userland gives it a C library and a shell."""
TRUNCATIONS = ("recorded per run (each run's \"truncations\": the series v2 kernel's reports of a time "
               "it truncated to 32 bits for the program, with the site) and judged: one makes the program "
               "broke, whatever its output; glibc's own EOVERFLOW and a wrong time the program computed "
               "itself are not the kernel's to see")
SECONDS_PER_RUN_MARGIN = 15.0  # the agent's round trips and the collection, under TCG


@dataclass(frozen=True)
class RuntimeOptions:
    moments: tuple[Moment, ...] = DEFAULT_MOMENTS
    timeout: float = 30.0  # one run, in guest seconds (then /tools/inroot kills it)
    overrides: tuple[str, ...] = ()  # --command NAME=ARGS
    own: OwnKernel | None = None  # the user's kernel, for the machine its config is for


@dataclass(frozen=True)
class Item:
    """One audited file and where it runs (run=False: a library, only joined)."""

    audit: BinaryAudit
    userland: str
    guest_path: str  # inside the userland's root
    host_file: Path | None = None  # copied in through the overlay, when not part of the userland
    package: str = ""  # added to the userland (with its dependencies) when set
    run: bool = True
    tree: Path | None = None  # the user's root filesystem it runs in (userland is then its name)


@dataclass
class RuntimeAudit:
    static: StaticAudit
    rejected: list[Rejected] = field(default_factory=list)  # machines that failed, beside the inputs'
    seconds: float = 0.0  # booting and running, every machine
    programs: int = 0  # files run
    kernels: list[str] = field(default_factory=list)  # "<machine>: <which kernel>", one per boot

    @property
    def audits(self) -> list[BinaryAudit]:
        return self.static.audits

    def counts(self) -> dict[str, int]:
        verdicts = [a.runtime.get("verdict") for a in self.audits if a.runtime]
        return {v: n for v in RUNTIME_VERDICTS if (n := verdicts.count(v))}

    def to_json(self) -> dict[str, object]:
        return {**self.static.to_json(), "rejected": [r.to_json() for r in self.static.rejected + self.rejected],
                "runtime_seconds": round(self.seconds, 3), "programs_run": self.programs,
                "runtime_counts": self.counts(), "truncations": TRUNCATIONS, "kernels": self.kernels}


def runnable(audit: BinaryAudit) -> bool:
    """A program, not a library: an executable, a PIE, or a static PIE."""
    return audit.kind in ("exec", "pie") or (audit.kind == "shared" and audit.linkage == "static")


ROOT_MARKS = ("bin/sh", "usr/bin/env")
"""A directory input holding one of these is a root filesystem: its programs
run in it, with its own loader and libraries."""


def is_root_tree(path: Path) -> bool:
    return path.is_dir() and any(os.path.lexists(path / mark) for mark in ROOT_MARKS)


def tree_name(tree: Path) -> str:
    """The guest folder of a user's root filesystem: /userlands/<this>."""
    return "rootfs-" + hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:8]


def item_of(audit: BinaryAudit, candidate: Candidate, number: int) -> Item:
    origin = candidate.origin
    match = USERLAND_INPUT.fullmatch(origin.input)
    if match and origin.path and not Path(origin.input).exists():
        return Item(audit, match["userland"], "/" + origin.path, package=match["package"] or "",
                    run=runnable(audit))
    if origin.path and candidate.tree is not None and is_root_tree(candidate.tree):
        tree = candidate.tree
        return Item(audit, tree_name(tree), "/" + origin.path, run=runnable(audit), tree=tree)
    name = origin.path or Path(origin.input).name
    return Item(audit, BASE_USERLANDS[audit.machine], f"{FILES_GUEST_DIR}/{number}/{name}", candidate.path,
                run=runnable(audit))


def _runs_of(subject: Subject, ran: list[Ran], moments: tuple[Moment, ...]) -> tuple[RunFacts, ...]:
    """The subject's runs, each with the collection that followed it."""
    runs = []
    for index, r in enumerate(ran):
        if r.command.kind == RUN and r.command.subject == subject.key:
            collected = ran[index + 1] if index + 1 < len(ran) and ran[index + 1].command.kind == COLLECT else None
            kernel, shim, counts = split_collected(collected.stdout) if collected else ("", "", "")
            moment = moments[r.command.moment]
            runs.append(RunFacts(moment.label, moment.at, r.exit_code, r.stdout, r.stderr, r.seconds,
                                 time32_calls(kernel), refusals(shim), time32_truncations(kernel),
                                 process_counts(counts)))
    return tuple(runs)


def runtime_record(audit: BinaryAudit, command: str, runs: tuple[RunFacts, ...], timeout: float) -> dict[str, object]:
    unseen = refusals_unseen(audit.bits, audit.linkage, audit.libc)
    verdict, reason = runtime_verdict(Runs(audit.verdict, runs, timeout, refusals_seen=not unseen))
    first, at_each = first_broken(audit.verdict, runs, timeout)
    return {"verdict": verdict, "reason": reason, "command": command, "runs": [r.to_json() for r in runs],
            "truncations": [t.describe() for run in runs for t in run.truncations],
            "first_broken": first, "at_each": at_each}


def _userlands(items: list[Item]) -> tuple[UserlandArtifact, ...]:
    """The userlands of a boot, each with the packages its items name added
    (the user's own root filesystems apart)."""
    table = load_userlands()
    artifacts = []
    for name in dict.fromkeys(i.userland for i in items if i.tree is None):
        userland = table.by_name[name]
        extra = tuple(dict.fromkeys(i.package for i in items if i.userland == name and i.package))
        wanted = replace(userland, packages=tuple(dict.fromkeys(userland.packages + extra)))
        artifacts.append(build_userland(wanted, table))
    return tuple(artifacts)


@dataclass(frozen=True)
class MachineRun:
    seconds: float  # booting and running, what it needed built or reused included
    kernel: str  # which kernel booted, for the report


def refuses_time32(tree: Path) -> bool:
    """Whether the tree's glibc is 2.34 or later (its libc.so.6 defines
    GLIBC_2.34): only those refuse a 32-bit time with EOVERFLOW, and the
    shim, built against 2.36, needs their dlsym. Older ones call the old
    system calls, which the kernel log shows."""
    for folder in ("lib", "usr/lib", "lib32", "usr/lib32"):
        for libc in sorted((tree / folder).glob("**/libc.so.6")):
            if libc.is_symlink():  # libc.so.6 -> libc-2.31.so, or an absolute link inside the tree
                target = os.readlink(libc)
                libc = tree / target.lstrip("/") if target.startswith("/") else libc.parent / target
            try:
                if b"GLIBC_2.34" in libc.read_bytes():
                    return True
            except OSError:
                continue
    return False


def run_items(machine_name: str, items: list[Item], options: RuntimeOptions, evidence: Path,
              commands: Commands | None = None) -> MachineRun:
    """Boot the machine once, run every runnable item at each moment, and
    set each item's audit.runtime."""
    start = time.monotonic()
    commands = (commands or load_commands()).with_overrides(list(options.overrides))
    machine = machine_named(machine_name)
    shim = build_shim(machine)
    subjects: list[Subject] = []
    for key, item in enumerate(items):
        if item.run:
            preload = (shim is not None and item.audit.libc == "glibc" and item.audit.linkage == "dynamic"
                       and (item.tree is None or refuses_time32(item.tree)))
            subjects.append(Subject(key, item.userland, item.guest_path, commands.for_file(item.audit.origin.name),
                                    preload))
    ran: list[Ran] = []
    own = options.own if options.own is not None and options.own.machine == machine_name else None
    logged = own is None or own.series
    kernel = own.describe() if own else "series kernel"
    if subjects:
        target = target_with(machine, own.artifact()) if own else prepare_target(machine)
        kernel += "" if own else f" {target.kernel.key}"
        userlands = _userlands([i for i in items if i.run])
        overlay = [(f"userlands/{i.userland}{i.guest_path}", i.host_file) for i in items
                   if i.run and i.host_file is not None]
        trees = {f"userlands/{i.userland}": i.tree for i in items if i.run and i.tree is not None}
        if shim is not None:
            roots = [u.userland.name for u in userlands] + [i.userland for i in items if i.run and i.tree is not None]
            overlay += [(f"userlands/{name}{SHIM_GUEST_PATH}", shim) for name in dict.fromkeys(roots)]
        guest_commands = plan(subjects, options.moments, options.timeout, log=logged)
        runs = sum(c.kind == RUN for c in guest_commands)
        seconds = 120 + runs * (options.timeout + SECONDS_PER_RUN_MARGIN)
        ran = boot_and_run(BootPlan(target, userlands, tuple(overlay), tuple(guest_commands),
                                    options.moments[0].at, seconds, tuple(trees.items())), evidence)
    by_key = {s.key: s for s in subjects}
    for key, item in enumerate(items):
        subject = by_key.get(key)
        runs_of = _runs_of(subject, ran, options.moments) if subject else ()
        shown = subject.command.shown(item.guest_path) if subject else ""
        item.audit.runtime = runtime_record(item.audit, shown, runs_of, options.timeout)
        item.audit.runtime.update(kernel=kernel, time32_logged=logged)
    return MachineRun(time.monotonic() - start, kernel)


def audit_runtime(inputs: list[str], options: RuntimeOptions) -> RuntimeAudit:
    """The static audit of the inputs, then one boot per machine they need."""
    results = new_results_dir("rehearse")
    with tempfile.TemporaryDirectory(prefix="y2038-rehearse-") as tmp:
        expanded = expand(inputs, Path(tmp))
        start = time.monotonic()
        pairs, bad = audit_pairs(expanded.candidates, load_symbols())
        static = StaticAudit([a for a, _ in pairs], expanded.rejected + bad, expanded.not_elf,
                             time.monotonic() - start)
        result = RuntimeAudit(static)
        items = [item_of(audit, candidate, n) for n, (audit, candidate) in enumerate(pairs)]
        for machine_name in dict.fromkeys(i.audit.machine for i in items):
            mine = [i for i in items if i.audit.machine == machine_name]
            say(f"runtime audit on {machine_name}: {sum(i.run for i in mine)} program(s), "
                f"{len(options.moments)} time(s) each")
            try:
                done = run_items(machine_name, mine, options, results / machine_name)
                result.seconds += done.seconds
                result.kernels.append(f"{machine_name}: {done.kernel}")
            except SandboxError as err:  # the guest failed, or what it needed could not be made
                what = "guest failed" if isinstance(err, GuestFailed) else "not run"
                result.rejected.append(Rejected(machine_name, str(err)))
                for item in mine:
                    item.audit.runtime = {"verdict": NOT_EXERCISED, "reason": f"{what}: {err}",
                                          "command": "", "runs": [], "truncations": None}
                continue
            result.programs += sum(i.run for i in mine)
    say(f"evidence: {results}")
    return result
