"""The user's kernel SOURCE TREE: built out of tree with
our machine fragments merged into its config, then handed to the own-kernel
path (sandbox/build/own_kernel.py) like a ready image and its .config.

    build_tree(path, machine) -> OwnKernel

The tree is only read: kbuild writes into a build folder in the cache
(O=), one per tree and machine, so a changed tree rebuilds incrementally;
the image and its .config are stored under kernels/ by a key of the tree's
identity (git HEAD and its uncommitted changes, else the newest mtime), the
config it started from (its .config, else tinyconfig) and our fragments
(kernel-series/config/common.config and the machine's; never series.config
or anything that needs our patches). kbuild refuses to build out of a
tree holding a .config, so such a tree is built from a mirror of symlinks
in the cache, without the .config. A tree built in place (include/config)
is refused: its objects would shadow ours.

Pure parts: check_tree, machine_of_config, merge_config, tree_key.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES, Machine
from sandbox.base.progress import metered, say
from sandbox.build import kbuild, kconfig
from sandbox.build.kernel import _make, _store, locked, remake_uncached
from sandbox.build.own_kernel import MACHINE_OF, OwnKernel, own_kernel

RECIPE = "2"  # bump when the way a tree is built changes
_VERSION = re.compile(r"^(VERSION|PATCHLEVEL)\s*=\s*(\d+)\s*$", re.M)


def check_tree(tree: Path) -> str:
    """The tree's version "V.P" (from its Makefile); SandboxError, one line
    naming the path, for a missing path, a folder that is not a Linux tree,
    or a tree built in place."""
    if not tree.exists():
        raise SandboxError(f"--kernel-tree {tree}: no such folder")
    makefile = tree / "Makefile"
    found = {m[1]: m[2] for m in _VERSION.finditer(makefile.read_text(errors="replace"))} \
        if makefile.is_file() else {}
    if not tree.is_dir() or "VERSION" not in found or "PATCHLEVEL" not in found:
        raise SandboxError(f"--kernel-tree {tree}: not a Linux kernel tree (no Makefile with VERSION and PATCHLEVEL)")
    built = [p for p in (tree / "include/config", *tree.glob("arch/*/include/generated")) if p.is_dir()]
    if built:
        raise SandboxError(f"--kernel-tree {tree}: built in place ({built[0].relative_to(tree)}): kbuild "
                           "builds out of tree only from a clean tree; `make mrproper` a copy (keep its "
                           ".config), or give --kernel IMAGE --kernel-config CONFIG")
    return f"{found['VERSION']}.{found['PATCHLEVEL']}"


def machine_of_config(text: str) -> str | None:
    """The machine a .config is for (own_kernel.MACHINE_OF), or None."""
    values = kconfig.options(text)
    return next((m for option, m in MACHINE_OF if values.get(option) == "y"), None)


def fragments_for(machine: Machine) -> list[Path]:
    """Our fragments for a tree that is not ours: what a boot of ours needs, no series."""
    folder = paths.KERNEL_SERIES / "config"
    found = [folder / "common.config", folder / machine.kernel.config_fragment]
    missing = [p.name for p in found if not p.is_file()]
    if missing:
        raise SandboxError(f"missing config fragment(s) in {folder}: {', '.join(missing)}")
    return found


def merge_config(base: str, fragments: list[tuple[str, str]]) -> str:
    """base (a .config, or "") with each fragment's options (name, text) set
    on top, later ones winning; olddefconfig then settles the rest. As
    merge_config.sh does, an option set is dropped where it was and written
    at the end: of a choice (HZ_100 against the base's HZ_250=y), the
    option read last wins."""
    ours: dict[str, str] = {}
    for name, text in fragments:
        for request in kconfig.parse_config(text, name):
            ours.pop(request.option, None)
            ours[request.option] = (f"# {request.option} is not set" if request.value == "n"
                                    else f"{request.option}={request.value}")
    kept = [line for line in base.splitlines() if not any(r.option in ours for r in kconfig.parse_config(line))]
    return "\n".join(kept + list(ours.values())) + "\n"


def _git(tree: Path, *args: str) -> bytes:
    # --no-optional-locks: status and diff never rewrite the user's index
    return subprocess.run(["git", "--no-optional-locks", "-C", str(tree), *args],
                          capture_output=True, check=True).stdout


def tree_identity(tree: Path) -> str:
    """What the tree's sources are: git HEAD, its uncommitted changes and the
    untracked files' sizes and mtimes; without git, the newest mtime and the
    file count."""
    if (tree / ".git").exists():
        try:
            h = hashlib.sha256(_git(tree, "rev-parse", "HEAD") + _git(tree, "diff", "HEAD", "--binary"))
            for untracked in _git(tree, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0"):
                if untracked:
                    st = (tree / os.fsdecode(untracked)).lstat()
                    h.update(untracked + f"\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            return "git:" + h.hexdigest()
        except (subprocess.CalledProcessError, FileNotFoundError, OSError):
            pass  # not a usable git tree: fall back to mtimes
    newest, count = 0, 0
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            newest, count = max(newest, os.lstat(os.path.join(folder, name)).st_mtime_ns), count + 1
    return f"mtime:{newest}:{count}"


def tree_key(identity: str, machine: str, base_config: str | None, fragments: list[tuple[str, str]]) -> str:
    """The stored kernel's key: the tree's identity, the machine, the config it
    starts from (None: tinyconfig), our fragments and the recipe."""
    h = hashlib.sha256(f"recipe={RECIPE}\0tree={identity}\0machine={machine}\0".encode())
    h.update(b"tinyconfig\0" if base_config is None else b"config\0" + base_config.encode() + b"\0")
    for name, text in fragments:
        h.update(name.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()[:16]


def _mirror(tree: Path, dest: Path, identity: str) -> Path:
    """A tree of symlinks to `tree`'s files without its .config (kbuild
    refuses O= next to one); remade when the tree's identity changes."""
    mark = dest / ".y2038-identity"
    if mark.is_file() and mark.read_text() == identity:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = Path(folder).relative_to(tree)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        for name in files:
            if rel == Path(".") and name == ".config":
                continue
            os.symlink(os.path.join(folder, name), dest / rel / name)
    mark.write_text(identity)
    return dest


def build_tree(tree: Path, wanted: Machine | None) -> OwnKernel:
    """The user's tree built for `wanted` (None: the machine of the tree's
    .config, else x86_64), cached, checked like --kernel."""
    tree = tree.expanduser()
    version = check_tree(tree)
    tree = tree.resolve()
    base = (tree / ".config").read_text(errors="replace") if (tree / ".config").is_file() else None
    found = machine_of_config(base) if base is not None else None
    if base is not None and (found is None or (wanted is not None and found != wanted.name)):
        raise SandboxError(f"--kernel-tree {tree}: its .config is for {found or 'no machine here'}"
                           + (f", not {wanted.name}" if wanted is not None else ""))
    machine = wanted or MACHINES[found or "x86_64"]
    fragments = [(p.name, p.read_text()) for p in fragments_for(machine)]
    identity = tree_identity(tree)
    key = tree_key(identity, machine.name, base, fragments)
    folder = paths.cache_dir() / "kernels" / f"{machine.name}-tree-{key}"
    label = f"kernel {machine.name} from {tree} {key}"
    if not (folder / "build-info.json").is_file():
        where = hashlib.sha256(f"{tree}\0{machine.name}".encode()).hexdigest()[:12]
        with locked(f"tree-{where}"):
            if not (folder / "build-info.json").is_file():
                source = tree if base is None else _mirror(tree, paths.cache_dir() / "own-trees" / where, identity)
                build = paths.cache_dir() / "build" / f"{machine.name}-tree-{where}"
                info = _build(tree, source, build, machine, base, fragments, label)
                _store(build, folder, machine, {"key": key, "tree": str(tree), "version": version,
                                                "identity": identity, **info})
    else:
        say(f"{label}: reusing the cached build ({folder})")
    return replace(own_kernel(folder / Path(machine.kernel.boot_image).name, folder / "config"), tree=tree)


def _build(tree: Path, source: Path, build: Path, machine: Machine, base: str | None,
           fragments: list[tuple[str, str]], label: str) -> dict[str, object]:
    build.mkdir(parents=True, exist_ok=True)
    log = build / "build.log"
    expected = kbuild.steps_in_log(log)
    log.write_text("")
    say(f"{label}: configuring ({'its .config' if base is not None else 'tinyconfig'} + "
        f"{' + '.join(n for n, _ in fragments)}), then building {' '.join(machine.kernel.make_targets)} "
        f"with ccache (log: {log})")
    start, started_from = time.monotonic(), "its .config" if base is not None else "tinyconfig"
    try:
        with metered(label, expected) as tick:
            def on_line(text: str) -> None:
                if kbuild.step_of(text):
                    tick(1)
            if base is None:
                _make(source, build, machine, "tinyconfig", log=log, on_line=on_line)
                base = (build / ".config").read_text()
            (build / ".config").write_text(merge_config(base, fragments))
            _make(source, build, machine, "olddefconfig", log=log, on_line=on_line)
            _make(source, build, machine, *machine.kernel.make_targets, log=log, on_line=on_line)
            remake_uncached(source, build, machine, log, on_line)
    except SandboxError:
        raise SandboxError(f"--kernel-tree {tree}: the kernel build failed (log: {log})") from None
    seconds = round(time.monotonic() - start, 1)
    wanted = {r.option: r for n, t in fragments for r in kconfig.parse_config(t, n)}  # later wins
    lost = kconfig.mismatches(list(wanted.values()), (build / ".config").read_text())
    if lost:  # the own-kernel check names what a boot needs; the rest is said
        say(f"{label}: {len(lost)} of our options did not hold in this tree: {'; '.join(map(str, lost))}")
    say(f"{label}: built in {seconds}s")
    return {"machine": machine.name, "fragments": [n for n, _ in fragments],
            "base_config": started_from,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": seconds, kbuild.STEPS_KEY: kbuild.steps_in_log(log)}
