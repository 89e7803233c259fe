"""Build a sandbox kernel and keep it in the cache, keyed by its inputs."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from sandbox.build import kbuild, kconfig
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.build.kernel_source import Series, baseline_tree, branch_with, checkout, debian_version, read_series
from sandbox.base.machines import Machine
from sandbox.base.progress import metered, say
from sandbox.base.runcmd import run
from sandbox.base.trees import DEFAULT as DEFAULT_TREE, Tree, tree as tree_named
from sandbox.base.variants import VARIANTS, Variant

LineSink = Callable[[str], None] | None
"""Where make's output lines go as they come (kbuild's steps counted), or nowhere."""

# Bump when the way a kernel is built changes, so old cache entries are not reused.
RECIPE = "1"
REPRODUCIBLE_ENV = {
    "KBUILD_BUILD_TIMESTAMP": "2038-01-19 03:14:08 UTC",
    "KBUILD_BUILD_USER": "y2038",
    "KBUILD_BUILD_HOST": "sandbox",
}


@dataclass(frozen=True)
class KernelRequest:
    machine: Machine
    variant: str = "series"  # a name in sandbox/variants.py VARIANTS
    tree: str = DEFAULT_TREE  # a name in sandbox/base/trees.py TREES


@dataclass(frozen=True)
class KernelArtifact:
    key: str
    folder: Path
    boot_image: Path
    config: Path
    info: dict[str, object]


def variant_of(request: KernelRequest) -> Variant:
    try:
        return VARIANTS[request.variant]
    except KeyError:
        raise SandboxError(f"unknown kernel variant '{request.variant}' "
                           f"(known: {', '.join(VARIANTS)})") from None


def tree_of(request: KernelRequest) -> Tree:
    return tree_named(request.tree)


def fragment_paths(request: KernelRequest) -> list[Path]:
    folder = paths.KERNEL_SERIES / "config"
    variant, machine = variant_of(request), request.machine
    disks_extra = (machine.kernel.disks_fragment,) if variant.has_disks and machine.kernel.disks_fragment else ()
    names = ("common.config", machine.kernel.config_fragment, *variant.fragments, *disks_extra)
    missing = [n for n in names if not (folder / n).is_file()]
    if missing:
        raise SandboxError(f"missing config fragment(s) in {folder}: {', '.join(missing)}")
    return [folder / n for n in names]


def _series_for(request: KernelRequest) -> Series:
    return read_series(tree_of(request).series_folder) if variant_of(request).series else Series(())


def fragment_digest_text(path: Path) -> str:
    """What of a fragment a build depends on: its requests in order, each
    written as kconfig writes it, not its comments or blank lines, so
    rewording a comment rebuilds nothing (a fragment of requests alone
    gives its own text, and the key it gave before comments were left out)."""
    return "".join(f"# {r.option} is not set\n" if r.value == "n" else f"{r.option}={r.value}\n"
                   for r in kconfig.parse_config(path.read_text()))


def cache_key(version: str, request: KernelRequest) -> str:
    """Source version, series, fragments' requests, machine, variant and recipe.

    Not the tree's name: the keys of the 6.1 kernels stay what they were
    before there were trees, and two trees' Debian versions differ."""
    h = hashlib.sha256()
    h.update(f"recipe={RECIPE}\0version={version}\0machine={request.machine.name}\0".encode())
    h.update(f"variant={request.variant}\0series={_series_for(request).digest}\0".encode())
    for path in fragment_paths(request):
        h.update(f"{path.name}\0{fragment_digest_text(path)}\0".encode())
    return h.hexdigest()[:16]


@contextmanager
def locked(name: str) -> Iterator[None]:
    """One build at a time in the shared tree (pytest-xdist, two shells)."""
    lock_path = paths.cache_dir() / f"{name}.lock"
    with lock_path.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # say why nothing moves: the wait can be long
            say(f"waiting for another build of the kernel sources to end ({lock_path})")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _make_env() -> dict[str, str]:
    env = dict(os.environ, **REPRODUCIBLE_ENV)
    env["CCACHE_DIR"] = str(paths.cache_dir() / "ccache")
    env.setdefault("CCACHE_MAXSIZE", "5G")
    # Depend mode: a miss compiles once, with no extra preprocessor run to hash
    # (kbuild's -Wp,-MMD gives ccache the headers). A cold CI run misses
    # nearly everything: each variant changes structs nearly every file sees.
    env["CCACHE_DEPEND"] = "1"
    env["KBUILD_OUTPUT"] = ""
    return env


def ccache_counts() -> tuple[int, int]:
    """(hits, misses) so far in the sandbox's ccache, from `ccache --print-stats`."""
    out = subprocess.run(["ccache", "--print-stats"], env=_make_env(), capture_output=True,
                         text=True, check=True).stdout
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    hits = sum(int(stats.get(k, 0)) for k in ("direct_cache_hit", "preprocessed_cache_hit"))
    return hits, int(stats.get("cache_miss", 0))


def _make(tree: Path, build: Path, machine: Machine, *targets: str, log: Path,
          ccache: bool = True, on_line: LineSink = None, env: dict[str, str] | None = None) -> None:
    launcher = "ccache " if ccache else ""
    # HOSTCC too: the host tools (objtool, kconfig, dtc, fixdep) are the same
    # for every variant of a machine, so later variants get them from ccache.
    argv = ["make", "-C", str(tree), f"O={build}", f"ARCH={machine.kernel.make_arch}",
            f"CROSS_COMPILE={machine.kernel.cross_compile}", f"CC={launcher}{machine.kernel.cross_compile}gcc",
            f"HOSTCC={launcher}gcc",
            f"-j{os.cpu_count() or 1}", *targets]
    run(argv, env={**_make_env(), **(env or {})}, log=log, on_line=on_line)


def configure(tree: Path, build: Path, request: KernelRequest, log: Path,
              ccache: bool = True, require: bool = True,
              on_line: LineSink = None) -> list[kconfig.Mismatch]:
    """tinyconfig, then the fragments in order, then olddefconfig, then check.
    require=False returns the options that did not hold instead of failing
    (sandbox/series_check.py: options appear patch by patch)."""
    machine, fragments = request.machine, fragment_paths(request)
    _make(tree, build, machine, "tinyconfig", log=log, ccache=ccache, on_line=on_line)
    run([str(tree / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(build),
         str(build / ".config"), *map(str, fragments)], cwd=build, log=log)
    _make(tree, build, machine, "olddefconfig", log=log, ccache=ccache, on_line=on_line)
    lost = kconfig.mismatches(kconfig.parse_fragments(fragments), (build / ".config").read_text())
    if lost and require:
        listing = "; ".join(map(str, lost))
        raise SandboxError(f"{len(lost)} requested option(s) did not survive olddefconfig: {listing}")
    return lost


def make_image(tree: Path, build: Path, machine: Machine, log: Path, ccache: bool = True,
               on_line: LineSink = None) -> None:
    """make the machine's targets (incremental in an existing build folder).

    The machine's uncached objects are then made again with ccache off (same
    command line, so kbuild redoes only them and what links them): ccache
    keys an object by its source and the headers the compiler names, and
    never sees the file an .incbin pulls in."""
    _make(tree, build, machine, *machine.kernel.make_targets, log=log, ccache=ccache, on_line=on_line)
    if ccache:
        remake_uncached(tree, build, machine, log, on_line)


def remake_uncached(tree: Path, build: Path, machine: Machine, log: Path, on_line: LineSink = None) -> None:
    """The machine's uncached objects made again without ccache, and the image with them."""
    if not machine.kernel.uncached_objects:
        return
    for name in machine.kernel.uncached_objects:
        (build / name).unlink(missing_ok=True)
    _make(tree, build, machine, *machine.kernel.make_targets, log=log, on_line=on_line, env={"CCACHE_DISABLE": "1"})


def source_for(request: KernelRequest, version: str, series: Series | None = None) -> tuple[Path, str]:
    """The tree to build this request in, with `series` (default: the request's,
    read now) checked out (hold the kernel-tree lock)."""
    return checkout(baseline_tree(version, tree_of(request)), _series_for(request) if series is None else series)


def compile_in(tree: Path, build: Path, request: KernelRequest, label: str,
               ccache: bool = True, expected: int | None = None) -> float:
    """Configure and build in `build`, showing kbuild's steps done of
    `expected` (the previous build's count); returns the seconds it took.
    build.log keeps make's output: kbuild.count_steps() reads the count back."""
    build.mkdir(parents=True, exist_ok=True)
    log = build / "build.log"
    log.write_text("")
    targets = " ".join(request.machine.kernel.make_targets)
    say(f"{label}: configuring, then building {targets}{' with ccache' if ccache else ''} (log: {log})")
    start = time.monotonic()
    with metered(label, expected) as tick:
        on_line = kbuild.step_counter(tick)
        configure(tree, build, request, log, ccache, on_line=on_line)
        make_image(tree, build, request.machine, log, ccache, on_line=on_line)
    return round(time.monotonic() - start, 1)


def build_kernel(request: KernelRequest) -> KernelArtifact:
    """Return the cached kernel for these inputs, building it only if missing."""
    tree = tree_of(request)
    key = cache_key(debian_version(tree), request)
    folder = paths.cache_dir() / "kernels" / f"{tree.folder_name(request.machine.name, request.variant)}-{key}"
    label = f"kernel {request.machine.name}/{request.variant}{tree.build_suffix} {key}"
    return _cached_build(request, folder, key, label, lambda tree, branch: branch, {})


def mutant_key(version: str, machine: Machine, patch: Path, variant: str = "series",
               tree: str = DEFAULT_TREE) -> str:
    """The key of the variant's kernel (the series by default) of the tree and
    the mutant's patch (for 6.1, the key it had before there were trees)."""
    base = cache_key(version, KernelRequest(machine, variant, tree))
    h = hashlib.sha256(base.encode() + b"\0" + patch.read_bytes())
    return h.hexdigest()[:16]


def build_mutant(machine: Machine, name: str, patch: Path, variant: str = "series",
                 tree: str = DEFAULT_TREE) -> KernelArtifact:
    """The variant's kernel (one that applies the series) of the tree with one
    regression patch on top, built incrementally in the variant's build
    folder of the machine and tree (a mutant touches a file or two: the rest
    comes from that folder's objects, and ccache), cached like every kernel:
    kernels/<machine>-mutant-<name>[-6.12]-<key>."""
    source = tree_named(tree)
    key = mutant_key(debian_version(source), machine, patch, variant, tree)
    folder = paths.cache_dir() / "kernels" / f"{source.folder_name(machine.name, 'mutant-' + name)}-{key}"
    label = f"kernel {machine.name}/mutant {name}{source.build_suffix} {key}"
    return _cached_build(KernelRequest(machine, variant, tree), folder, key, label,
                         lambda git_tree, series: branch_with(git_tree, f"mutant-{key}", series, (patch,),
                                                              f"the {tree} series"),
                         {"mutant": patch.name})


def _cached_build(request: KernelRequest, folder: Path, key: str, label: str,
                  branch_for: Callable[[Path, str], str], extra: dict[str, object]) -> KernelArtifact:
    """The kernel stored in `folder`; if missing, check out the request's tree
    (then branch_for(tree, its branch)), build it in the request's build
    folder and store it there."""
    if (folder / "build-info.json").is_file():
        info = json.loads((folder / "build-info.json").read_text())
        say(f"{label}: reusing the cached build from {info['built_at']} ({folder})")
        return _artifact(folder, request.machine, key, info)
    with locked("kernel-tree"):
        if (folder / "build-info.json").is_file():  # built while we waited
            return _cached_build(request, folder, key, label, branch_for, extra)
        version = debian_version(tree_of(request))
        # read once: the series file may change during the build, and the
        # record names the patches checked out
        series = _series_for(request)
        tree, branch = source_for(request, version, series)
        branch = branch_for(tree, branch)
        build = build_folder(request)
        kind = "mutant" if "mutant" in extra else request.variant
        # kernels cached before counts were kept: the build folder's last log,
        # read before a seed's copy replaces it (the seed's full build is no
        # measure of the seeded one's: 61 steps of 1471 on armhf 6.12 strict)
        expected = (kbuild.previous_steps(paths.cache_dir() / "kernels", request.machine.name, kind, request.tree)
                    or kbuild.steps_in_log(build / "build.log"))
        seed_build_folder(build, request, cache_key(version, seed_request(request)))
        (build / BUILT_MARKER).unlink(missing_ok=True)  # a killed build names no kernel
        seconds = compile_in(tree, build, request, label, expected=expected)
        (build / BUILT_MARKER).write_text(key + "\n")
        steps = kbuild.steps_in_log(build / "build.log")
        info = {
            "key": key, "machine": request.machine.name, "variant": request.variant,
            "tree": request.tree, "debian_version": version, "branch": branch,
            "series": [p.name for p in series.patches],
            "fragments": [p.name for p in fragment_paths(request)],
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": seconds, kbuild.STEPS_KEY: steps, **extra,
        }
        _store(build, folder, request.machine, info)
    say(f"{label}: built in {seconds}s, stored in {folder}")
    return _artifact(folder, request.machine, key, info)


BUILT_MARKER = ".sandbox-built"
"""In a build folder: the key of the kernel last built there, written after the build."""


def build_folder(request: KernelRequest) -> Path:
    """Where kbuild builds the request's kernel: build/<machine>-<variant>, and
    the tree's suffix (build/x86_64-series-6.12; none for 6.1)."""
    return paths.cache_dir() / "build" / tree_of(request).folder_name(request.machine.name, request.variant)


def seed_request(request: KernelRequest) -> KernelRequest:
    """The request whose build folder a seeded variant's build starts from
    (the request itself for a variant without a seed), of the same tree."""
    return KernelRequest(request.machine, variant_of(request).seed or request.variant, request.tree)


def seed_build_folder(build: Path, request: KernelRequest, seed_key: str) -> None:
    """A seeded variant's build starts from a copy of its seed's build folder
    of the same machine (same sources, a config a few options apart), so
    kbuild recompiles only what those options reach: when the variant has no
    build folder yet, or when the seed's folder holds the seed's current
    kernel (BUILT_MARKER is seed_key: a series change is then a minute of
    strict build instead of a rebuild of what the change reached, whose
    objects ccache cannot share between the two configs). The copy is made
    aside and renamed: a killed copy leaves no half folder to build in."""
    seed = variant_of(request).seed
    if seed is None:
        return
    origin = build.with_name(tree_of(request).folder_name(request.machine.name, seed))
    current = (origin / BUILT_MARKER).is_file() and (origin / BUILT_MARKER).read_text().strip() == seed_key
    if not (origin / ".config").is_file() or (build.exists() and not current):
        return
    say(f"{build.name}: starting from a copy of {origin}")
    partial, old = build.with_name(build.name + ".seeding"), build.with_name(build.name + ".old")
    for leftover in (partial, old):
        shutil.rmtree(leftover, ignore_errors=True)
    run(["cp", "-a", str(origin), str(partial)])
    for record in tool_records(partial):
        record.write_text(record.read_text().replace(f"{origin}/", f"{build}/"))
    if build.exists():
        os.rename(build, old)
    os.rename(partial, build)
    shutil.rmtree(old, ignore_errors=True)


def tool_records(build: Path) -> list[Path]:
    """The dependency records of the host tools kbuild builds with their own
    Makefiles (x86's objtool: tools/**/.*.cmd, .*.d). Unlike kbuild's, they
    name their targets by absolute path: left as they are in a copy, objtool
    is relinked, and every object that objtool checked is rebuilt after it."""
    return [p for p in (build / "tools").rglob(".*") if p.is_file() and p.suffix in (".cmd", ".d")]


def _store(build: Path, folder: Path, machine: Machine, info: dict[str, object]) -> None:
    """Copy the outputs into the cache atomically: a folder appears whole or not at all."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(build / machine.kernel.boot_image, tmp / Path(machine.kernel.boot_image).name)
    shutil.copy2(build / ".config", tmp / "config")
    (tmp / "build-info.json").write_text(json.dumps(info, indent=2) + "\n")
    os.rename(tmp, folder)


def _artifact(folder: Path, machine: Machine, key: str, info: dict[str, object]) -> KernelArtifact:
    return KernelArtifact(key=key, folder=folder,
                          boot_image=folder / Path(machine.kernel.boot_image).name,
                          config=folder / "config", info=info)
