"""Figures, not assertions: build, boot and demo timings and QEMU memory.

Cold build: the shared tree into an empty build folder without ccache.
Warm build: the same with ccache filled (an empty build folder: what a
config change costs). Cached: build_kernel() when the artifact exists.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from sandbox.audit.corpus import (BROKE_AFTER, Agreement, agree, agreement, cached_userland,
                                  program_answers, program_files)
from sandbox.audit.runtime.audit import RuntimeOptions
from sandbox.audit.runtime.corpus import run_corpus
from sandbox.audit.static import audit_static
from sandbox.app.benchmarks_doc import add_entry
from sandbox.app.figures import Figure, render
from sandbox.app.futex_bench import futex_figures
from sandbox.app.speed import speed_figures
from sandbox.base import paths
from sandbox.base.evidence import BENCH, Session
from sandbox.guest.deadline import Deadline
from sandbox.build.kernel import (KernelRequest, build_kernel, ccache_counts, compile_in, debian_version, locked,
                     source_for)
from sandbox.base.machines import MACHINES, Machine
from sandbox.run.prepare import takes_memory_disks
from sandbox.app.system_bench import system_figures
from sandbox.guest.qemu import Guest
from sandbox.build.userland import UserlandArtifact, build_userland, userland_image, with_userlands
from sandbox.run import drive
from sandbox.run.drive import Asked, Driven
from sandbox.run.plan import GuestCommand, userland_commands
from sandbox.build.dynamic_probes import build_probes
from sandbox.guest.target import Target, prepare_target
from sandbox.scenario.catalogue import load_catalogue
from sandbox.scenario.userlands import load_userlands

RTC = "2038-01-19T03:13:50"
USERLAND_BOOT_SECONDS = 120.0  # to the agent, a userland in the initramfs or as a memory disk


def build_figures(machine: Machine, cold: bool) -> list[Figure]:
    request = KernelRequest(machine)
    start = time.monotonic()
    build_kernel(request)
    figures = [Figure("kernel build, cached artifact", time.monotonic() - start, "s")]
    modes = ((False, "kernel build, cold (no ccache, empty build folder)"),) if cold else ()
    modes += ((True, "kernel build, warm ccache, empty build folder"),)
    with locked("kernel-tree"):
        tree, _ = source_for(request, debian_version())
        for ccache, name in modes:
            hits, misses = ccache_counts()
            with tempfile.TemporaryDirectory(dir=paths.cache_dir(), prefix="bench-") as tmp:
                seconds = compile_in(tree, Path(tmp), request, f"bench {machine.name}", ccache)
            note = f"{machine.name}, {_cpus()} CPUs"
            if ccache:  # warm only if it hit: a changed config or series misses
                new_hits, new_misses = ccache_counts()
                note += f", ccache hits {new_hits - hits}/{new_hits - hits + new_misses - misses}"
            figures.append(Figure(name, seconds, "s", note))
    return figures




def _boot_seconds(target: Target, initramfs: Path, memory_mib: int | None = None) -> float:
    with tempfile.TemporaryDirectory(prefix="y2038-bench-") as tmp:
        request = target.boot(RTC, Path(tmp), initramfs=initramfs, memory_mib=memory_mib)
        with Guest(request) as guest:
            driven: Driven[Asked] = Driven()
            drive.boot(guest, Deadline(USERLAND_BOOT_SECONDS), driven, USERLAND_BOOT_SECONDS)
            return driven.boot_seconds


def _disk_boot_seconds(target: Target, artifact: UserlandArtifact) -> float:
    """Boot to agent with the userland as a memory disk, plus the command
    that maps and mounts it (sandbox/run/plan.py userland_commands)."""
    image = userland_image(artifact)
    name = artifact.userland.name
    with tempfile.TemporaryDirectory(prefix="y2038-bench-") as tmp:
        request = target.boot(RTC, Path(tmp), memory_disks=(image,), memory_disk_names=(name,))
        with Guest(request) as guest:
            driven: Driven[GuestCommand] = Driven()
            drive.boot(guest, Deadline(USERLAND_BOOT_SECONDS), driven, USERLAND_BOOT_SECONDS)
            (mount,) = userland_commands((name,), request.disk_regions())
            reply = drive.run_one(guest, mount, Deadline(60), driven)
            if reply.exit_code != 0:
                raise RuntimeError(f"mounting {name}'s memory disk failed: {reply.stderr!r}")
            return driven.boot_seconds + driven.records[-1].seconds


def userland_figures(target: Target) -> list[Figure]:
    """Each userland the machine runs: built cold (a private apt state and
    archive cache of its own: download and unpack), warm (from the cache),
    its size, and what its archive adds to the boot; and, where the kernel
    takes memory disks, what it adds as one."""
    table = load_userlands()
    figures = []
    base = _boot_seconds(target, target.initramfs.path)
    for userland in table.by_name.values():
        if userland.arch not in target.machine.debian_archs:
            continue
        with tempfile.TemporaryDirectory(prefix="bench-userland-") as tmp:
            old = os.environ.get("Y2038_CACHE")
            os.environ["Y2038_CACHE"] = tmp
            try:
                start = time.monotonic()
                build_userland(userland, table)
                cold_seconds = time.monotonic() - start
            finally:
                if old is None:
                    del os.environ["Y2038_CACHE"]
                else:
                    os.environ["Y2038_CACHE"] = old
        start = time.monotonic()
        artifact = build_userland(userland, table)
        warm_seconds = time.monotonic() - start
        size = artifact.cpio.stat().st_size / 2**20
        initrd = with_userlands(target.initramfs.path, (artifact,))
        boot = _boot_seconds(target, initrd, 256 + 3 * int(size))
        figures += [
            Figure(f"userland {userland.name}, cold build", cold_seconds, "s",
                   f"{len(artifact.packages)} packages downloaded and unpacked"),
            Figure(f"userland {userland.name}, warm (cached)", warm_seconds, "s", "apt-get resolves, nothing fetched"),
            Figure(f"userland {userland.name}, archive size", size, "MiB", "appended to the initramfs"),
            Figure(f"userland {userland.name}, boot to agent", boot, "s",
                   f"+{boot - base:.2f} s over the bare initramfs ({base:.2f} s)"),
        ]
        if takes_memory_disks(target):
            disk = _disk_boot_seconds(target, artifact)
            figures.append(Figure(f"userland {userland.name}, as a memory disk", disk, "s",
                                  f"boot to agent and mount: +{disk - base:.2f} s over the bare initramfs"))
    return figures


def static_audit_figures(machine: Machine) -> list[Figure]:
    """`just rehearse --static` over each userland the machine runs, whole
    (the tree as the guest gets it; nothing boots, nothing is fetched when
    the userland is cached): seconds per 100 ELF files, walking the tree
    included."""
    table = load_userlands()
    figures = []
    for userland in table.by_name.values():
        if userland.arch not in machine.debian_archs:
            continue
        build_userland(userland, table)  # cached: what the timing leaves out
        start = time.monotonic()
        result = audit_static([f"{userland.name}:"])
        seconds = time.monotonic() - start
        files = len(result.audits)
        counts = ", ".join(f"{v} {n}" for v, n in result.counts().items())
        figures.append(Figure(f"static audit, {userland.name}, per 100 ELF files", 100 * seconds / max(files, 1),
                              "s", f"{files} files in {seconds:.2f} s: {counts}"))
    return figures


def _agreement_figure(what: str, found: Agreement) -> Figure:
    share = 100 * found.agreeing / found.decided if found.decided else 0.0
    return Figure(f"static audit agreement, {what}", share, "%", found.figure())


def agreement_figures() -> list[Figure]:
    """The static audit against known answers: Debian's programs against
    what their runs saw (docs/real-programs.md; the userlands in the cache),
    and every probe in every flavour, built here for x86_64 (whose 32-bit
    flavours are the i386 binaries) and armhf, static as the guest gets them
    and linked dynamically."""
    judged = []
    for name in BROKE_AFTER:
        root = cached_userland(name)
        if root is not None:
            judged += program_answers(name, audit_static([str(f) for f in program_files(root)]).audits)
    figures = [_agreement_figure("Debian's programs vs their runs", agree(judged))]
    probes = tuple(load_catalogue().names())
    for linkage in ("static", "dynamic"):
        with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
            folders = [str(build_probes(MACHINES[m], Path(tmp) / m, linkage, probes)) for m in ("x86_64", "armhf")]
            found = agreement(audit_static(folders).audits)
        figures.append(_agreement_figure(f"{len(probes)} probes x flavours, {linkage}", found))
    return figures


def runtime_audit_figures(machine: Machine) -> list[Figure]:
    """`just rehearse` (the runtime audit) over its ground truth on this
    machine, one boot: the clock probe in each flavour, static and dynamic,
    and Debian's programs of every cached userland of its architecture, each
    run before, just after and after 2106 (sandbox/audit/runtime/corpus.py).
    Seconds per program, the boot and what it needs built or reused included."""
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as tmp:
        folders = [build_probes(machine, Path(tmp) / linkage, linkage, ("clock",)) for linkage in ("static", "dynamic")]
        found = run_corpus(machine.name, folders, paths.new_results_dir("bench-runtime") / machine.name,
                           RuntimeOptions())
    share = 100 * found.agreement.agreeing / found.agreement.decided if found.agreement.decided else 0.0
    return [Figure(f"runtime audit, {machine.name}, per program", found.seconds / max(found.programs, 1), "s",
                   f"{found.programs} programs x 3 times in {found.seconds:.1f} s, one boot"),
            Figure(f"runtime audit agreement, {machine.name}", share, "%", found.agreement.figure())]




def _cpus() -> int:
    return os.cpu_count() or 1


def bench(machine: Machine, cold: bool = True, static_audit_only: bool = False,
          runtime_audit_only: bool = False, speed_only: bool = False, suite: bool = True,
          cold_ci: bool = False, command: str = "just bench",
          system_only: bool = False, futex_only: bool = False) -> Path:
    what = ("speed figures" if speed_only else "static audit figures" if static_audit_only
            else "runtime audit figures" if runtime_audit_only else "system figures" if system_only
            else "futex_time32 figures" if futex_only else "build, boot, audit and speed figures")
    if futex_only:  # two kernels of each 32-bit machine, one boot each
        figures = futex_figures()
    elif system_only:  # a system image and one boot of it
        figures = system_figures(paths.new_results_dir("bench-system"))
    elif speed_only:
        figures = speed_figures(prepare_target(machine), suite, cold_ci)
    elif static_audit_only:  # no kernel, no boot
        figures = static_audit_figures(machine) + agreement_figures()
    elif runtime_audit_only:  # one boot
        figures = runtime_audit_figures(machine)
    else:
        target = prepare_target(machine)
        figures = (build_figures(machine, cold) + userland_figures(target)
                   + static_audit_figures(machine) + agreement_figures() + runtime_audit_figures(machine)
                   + speed_figures(target, suite, cold_ci))
    out = Session(paths.new_results_dir("bench")).write_json(BENCH, [f.__dict__ for f in figures])
    print(render(figures))
    print(f"\nfigures: {out}\nwritten into {add_entry(what, figures, command)}")
    return out
