"""A Debian userland for the guest, built without root and without touching
the host's apt configuration or package database.

    build_userland(userland) -> UserlandArtifact(root, cpio, packages, ...)

1. A private apt state per suite and architecture under the cache
   (cache/apt/<suite>-<arch>/: its own sources, lists, archives and an empty
   dpkg status), refreshed once a day.
2. `apt-get install --download-only` of the userland's packages into it:
   with an empty status, apt fetches the whole dependency closure. What it
   chose is remembered until the lists are refreshed, so a warm build asks
   apt nothing.
3. The exact versions of what was fetched (name, version, architecture,
   read from each .deb) make the cache key; each .deb is unpacked with
   `dpkg-deb -x`, documentation and translations dropped, the merged-/usr
   links (bin -> usr/bin ...) made where the packages do not ship them, and
   Python's standard library compiled (compile_python).
4. The tree becomes a newc cpio under /userlands/<name>/, appended to the
   machine's initramfs for a boot that needs it (the kernel unpacks
   concatenated archives one after the other).

Every file gets mtime 0 in the archive: the userland's own file times are
never what a scenario measures (file-time steps write to /tmp or a disk).
"""
from __future__ import annotations

import compileall
import contextlib
import fcntl
import hashlib
import json
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.paths import cache_dir
from sandbox.base.progress import say, step
from sandbox.build import cpio
from sandbox.build.cpio import Entry
from sandbox.build.dynamic_probes import UserlandProbes
from sandbox.scenario.userlands import Userland, Userlands

LISTS_MAX_AGE = 24 * 3600  # seconds before the private apt lists are refreshed
MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
RECIPE = "2"  # bump when the way a userland is made changes


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    arch: str

    def __str__(self) -> str:
        return f"{self.name}:{self.arch}={self.version}"


@dataclass(frozen=True)
class UserlandArtifact:
    userland: Userland
    key: str
    root: Path  # the unpacked tree on the host
    cpio: Path  # the tree under /userlands/<name>/, as a newc archive
    packages: tuple[Package, ...]

    def record(self) -> dict[str, object]:
        """What run.json keeps, so that a result can be reproduced."""
        u = self.userland
        return {"name": u.name, "suite": u.suite, "arch": u.arch, "key": self.key,
                "packages": [str(p) for p in self.packages]}


# -- the private apt state ------------------------------------------------------
def _apt_dir(userland: Userland) -> Path:
    return cache_dir() / "apt" / f"{userland.suite}-{userland.arch}"


def _apt_options(state: Path) -> list[str]:
    return [
        "-o", "Dir::Etc::SourceList=/dev/null",
        "-o", f"Dir::Etc::SourceParts={state / 'sources'}",
        "-o", "Dir::Etc::Preferences=/dev/null",
        "-o", "Dir::Etc::PreferencesParts=/dev/null",
        "-o", f"Dir::State::Lists={state / 'lists'}",
        "-o", f"Dir::State::status={state / 'status'}",
        "-o", f"Dir::Cache={state / 'cache'}",
        "-o", "Debug::NoLocking=1",
        "-o", "APT::Sandbox::User=root",
        "-o", "Acquire::Retries=3",
    ]


def _arch_options(userland: Userland) -> list[str]:
    return ["-o", f"APT::Architecture={userland.arch}", "-o", f"APT::Architectures::={userland.arch}"]


def _apt(argv: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd,
                              env={**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"})
    except FileNotFoundError:
        raise SandboxError(f"{what}: {argv[0]} not found (Debian package apt)") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(("E:", "W:"))] or proc.stderr.splitlines()
        raise SandboxError(f"{what}: {' '.join(lines[-3:]) or f'exit {proc.returncode}'}")
    return proc.stdout


def _prepare_state(userland: Userland, userlands: Userlands) -> Path:
    state = _apt_dir(userland)
    for sub in ("sources", "lists/partial", "cache/archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    (state / "sources" / "debian.sources").write_text(
        f"Types: deb\nURIs: {userlands.mirror}\nSuites: {userland.suite}\nComponents: main\n"
        f"Signed-By: {userlands.keyring}\n")
    stamp = state / "lists" / ".updated"
    with state_locked(state):  # asked again under the lock: another process may have updated meanwhile
        if not stamp.exists() or time.time() - stamp.stat().st_mtime > LISTS_MAX_AGE:
            with step(f"apt-get update for {userland.suite}/{userland.arch} (private state in {state})"):
                _apt(["apt-get", *_apt_options(state), *_arch_options(userland), "update", "-q"],
                     f"userland {userland.name}: apt-get update")
            stamp.touch()
    return state


@contextlib.contextmanager
def state_locked(state: Path) -> Iterator[None]:
    """One process at a time in a private apt state: two `apt-get update`s
    in one lists folder take each other's partial files ("can not open
    .../lists/partial/..._InRelease", seen when two tests built the same
    userland at once)."""
    with (state.parent / f"{state.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _download(userland: Userland, state: Path) -> list[Path]:
    """The .debs of the packages and everything they depend on."""
    archives = state / "cache" / "archives"
    _apt(["apt-get", *_apt_options(state), *_arch_options(userland), "install", "--download-only",
          "-y", "-q", "--no-install-recommends", *userland.packages],
         f"userland {userland.name}: apt-get install --download-only")
    wanted = _apt(["apt-get", *_apt_options(state), *_arch_options(userland), "install", "-s", "-q",
                   "--no-install-recommends", *userland.packages],
                  f"userland {userland.name}: apt-get install -s")
    # "Inst libc6 (2.36-9+deb12u13 Debian:12.12/stable [armhf])"
    chosen = [line.split()[1:3] for line in wanted.splitlines() if line.startswith("Inst ")]
    debs = []
    for name, version in chosen:
        version = version.strip("(")
        matches = sorted(archives.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
        if not matches:
            raise SandboxError(f"userland {userland.name}: {name} {version} was not downloaded")
        debs.append(matches[0])
    return debs


def package_of(deb: Path) -> Package:
    """The name, version and architecture a .deb declares."""
    fields = _apt(["dpkg-deb", "-f", str(deb), "Package", "Version", "Architecture"], f"dpkg-deb -f {deb.name}")
    values = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line)
    return Package(values["Package"], values["Version"], values["Architecture"])


def _resolved(userland: Userland, state: Path) -> tuple[list[Path], list[Package]]:
    """The .debs and their exact versions: asked of apt once per package list
    and refresh of the apt lists, then read back from resolved-<hash>.json."""
    lists = (state / "lists" / ".updated").stat().st_mtime
    wanted = hashlib.sha256(json.dumps([userland.arch, *userland.packages, lists]).encode()).hexdigest()[:16]
    memo = state / f"resolved-{wanted}.json"
    if memo.is_file():
        known = json.loads(memo.read_text())
        debs = [Path(d) for d in known["debs"]]
        if all(d.is_file() for d in debs):
            return debs, [Package(*p) for p in known["packages"]]
    debs = _download(userland, state)
    packages = [package_of(deb) for deb in debs]
    memo.write_text(json.dumps({"debs": [str(d) for d in debs],
                                "packages": [[p.name, p.version, p.arch] for p in packages]}))
    return debs, packages


def download_package(userland: Userland, userlands: Userlands, package: str, into: Path) -> Path:
    """One package's .deb (not what it depends on), fetched from the
    userland's private apt state into the folder `into`."""
    state = _prepare_state(userland, userlands)
    with state_locked(state):
        _apt(["apt-get", *_apt_options(state), *_arch_options(userland), "download", "-q", package],
             f"apt-get download {package} ({userland.suite}/{userland.arch})", cwd=into)
    found = sorted(into.glob(f"{package}_*.deb"))
    if not found:
        raise SandboxError(f"apt-get download {package} left no .deb in {into}")
    return found[0]


def userland_key(userland: Userland, packages: list[Package], drop: tuple[str, ...]) -> str:
    text = json.dumps({"recipe": RECIPE, "name": userland.name,
                       "packages": sorted(map(str, packages)), "drop": list(drop),
                       "python": list(sys.version_info[:2])})  # which bytecode compile_python makes
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- the tree and its archive -------------------------------------------------------
def unpack_deb(deb: Path, root: Path) -> None:
    """The files of one .deb under root (dpkg-deb -x: no root, no scripts run)."""
    _apt(["dpkg-deb", "-x", str(deb), str(root)], f"dpkg-deb -x {deb.name}")


def _unpack(debs: list[Path], root: Path, drop: tuple[str, ...]) -> None:
    for deb in debs:
        unpack_deb(deb, root)
    for path in drop:
        shutil.rmtree(root / path, ignore_errors=True)
    for name in MERGED_USR:
        if (root / "usr" / name).is_dir() and not (root / name).exists():
            (root / name).symlink_to(f"usr/{name}")
    for name in ("proc", "sys", "dev", "tmp"):
        (root / name).mkdir(exist_ok=True)
    compile_python(root)


def compile_python(root: Path) -> list[Path]:
    """The standard library's bytecode, as Debian's python3 packages make it
    when installed (py3compile, in a maintainer script `dpkg-deb -x` does not
    run). Without it the guest's python3 compiled the modules it imports at
    its first start in each boot: about 0.5 s more for that first run step
    under TCG (docs/time-warp.md). Only the host's own minor version can be compiled here
    (Debian 12's 3.11, not Debian 13's 3.13); unchecked hash-based .pyc
    files, which the guest's python3 loads without comparing them to the
    sources (whose mtime the archive sets to 0). Returns the folders compiled."""
    folders = [root / "usr" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"]
    compiled = [f for f in folders if f.is_dir()]
    for folder in compiled:
        compileall.compile_dir(folder, quiet=2, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return compiled


def tree_entries(root: Path, prefix: str) -> list[Entry]:
    """Every file, link and folder under root, named under prefix, in a stable order."""
    entries = [Entry.directory(prefix)]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames) + sorted(filenames):
            path = base / name
            member = f"{prefix}/{path.relative_to(root).as_posix()}"
            mode = path.lstat().st_mode & 0o7777
            if path.is_symlink():
                entries.append(Entry.symlink(member, os.readlink(path)))
            elif path.is_dir():
                entries.append(Entry.directory(member, mode))
            elif path.is_file():
                entries.append(Entry.file(member, path.read_bytes(), mode))
    return cpio.with_parents(entries)


def _store(userland: Userland, debs: list[Path], packages: list[Package], drop: tuple[str, ...],
           folder: Path) -> None:
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        root = tmp / "root"
        _unpack(debs, root, drop)
        with (tmp / "userland.cpio").open("wb") as out:
            cpio.write_newc(tree_entries(root, userland.guest_root.lstrip("/")), out)
        (tmp / "packages.txt").write_text("".join(f"{p}\n" for p in packages))
        os.rename(tmp, folder)  # whole or not at all
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def build_userland(userland: Userland, userlands: Userlands) -> UserlandArtifact:
    """The userland from the cache, or downloaded and unpacked first."""
    state = _prepare_state(userland, userlands)
    with state_locked(state):
        debs, packages = _resolved(userland, state)
    key = userland_key(userland, packages, userlands.drop)
    root = cache_dir() / "userlands"
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{userland.name}-{key}"
    with (root / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not folder.is_dir():
            with step(f"unpacking userland {userland.name} ({len(debs)} packages) into {folder}"):
                _store(userland, debs, packages, userlands.drop, folder)
    size = (folder / "userland.cpio").stat().st_size
    say(f"userland {userland.name}: {len(packages)} packages, {size // 2**20} MiB")
    return UserlandArtifact(userland, key, folder / "root", folder / "userland.cpio", tuple(packages))


MIB_PER_USERLAND_MIB = 3  # guest memory per MiB added to the initramfs: the archive, its files, headroom


IMAGE_RECIPE = "1"  # bump when image_command or the image's size changes: old images are not reused
IMAGE_NAME = f"userland-{IMAGE_RECIPE}.ext4"
IMAGE_ROOM_MIB = 16  # free room on a userland's image: what its programs write outside /tmp (chronyd's log)


def image_command(root: Path, image: Path, size_mib: int, label: str) -> list[str]:
    """mke2fs of an ext4 image holding `root`: no journal (nothing outlives
    the boot), 256-byte inodes (file times past 2038, which mke2fs's
    default for a small file system, 128 bytes, cannot hold)."""
    return ["mke2fs", "-q", "-F", "-t", "ext4", "-I", "256", "-O", "^has_journal", "-L", label[:16],
            "-d", str(root), str(image), f"{size_mib}M"]


def userland_image(artifact: UserlandArtifact) -> Path:
    """The userland as an ext4 image beside its archive, made on first use
    (mke2fs -d: 0.8 s for 80 MiB here): what a boot copies into guest
    RAM as a memory disk (sandbox/guest/qemu.py memory_disk_args) instead of
    the archive the kernel would unpack."""
    folder = artifact.cpio.parent
    image = folder / IMAGE_NAME
    if image.is_file():
        return image
    with (folder.parent / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not image.is_file():
            size = -(-artifact.cpio.stat().st_size * 9 // 8 // 2**20) + IMAGE_ROOM_MIB
            tmp = image.with_suffix(f".{os.getpid()}.tmp")
            with step(f"making {image} ({size} MiB)"):
                done = subprocess.run(image_command(artifact.root, tmp, size, artifact.userland.name),
                                      capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    tmp.unlink(missing_ok=True)
                    raise SandboxError(f"mke2fs of userland {artifact.userland.name} failed: "
                                       f"{(done.stderr or done.stdout).strip()}")
                os.replace(tmp, image)
    return image


def guest_memory_mib(added_bytes: int) -> int | None:
    """The -m a boot needs when `added_bytes` of userlands (and their probes)
    ride on the initramfs; None (the machine's own) for less than a MiB."""
    if added_bytes <= 2**20:
        return None
    return 256 + MIB_PER_USERLAND_MIB * (added_bytes // 2**20)


def with_userlands(initramfs: Path, artifacts: tuple[UserlandArtifact, ...],
                   probes: tuple[UserlandProbes, ...] = (), extras: tuple[Path, ...] = ()) -> Path:
    """The initramfs with `extras` appended (archives made beside it: its host
    binaries), then the userlands' archives, then the dynamic probes of those
    that run them, cached by their keys."""
    if not artifacts and not extras and not probes:
        return initramfs
    names = [str(initramfs), *map(str, extras), *(a.key for a in artifacts),
             *(f"{p.key}:{p.userland}" for p in probes)]
    key = hashlib.sha256("\0".join(names).encode()).hexdigest()[:16]
    target = cache_dir() / "initrd-with-userlands" / f"{key}.cpio"
    if target.is_file():
        os.utime(target)  # used now: the last to go (prune_combined)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with tmp.open("wb") as out:
        for part in (initramfs, *extras, *(a.cpio for a in artifacts), *(p.cpio for p in probes)):
            with part.open("rb") as source:
                shutil.copyfileobj(source, out)
    os.replace(tmp, target)
    prune_combined(target.parent, COMBINED_CACHE_BYTES)
    return target


COMBINED_CACHE_BYTES = 4 * 2**30
"""What the combined initramfs files (100 to 260 MB each) may take together.
Each new probe initramfs makes new ones; without a bound they had grown to
13 GB in a day of work on this project."""


def prune_combined(folder: Path, limit: int) -> list[Path]:
    """Remove the least recently used combined initramfs files until the rest
    fit in `limit` bytes; the newest always stays. Returns what went."""
    files = sorted(folder.glob("*.cpio"), key=lambda f: f.stat().st_mtime, reverse=True)
    kept, removed = 0, []
    for number, path in enumerate(files):
        size = path.stat().st_size
        if number > 0 and kept + size > limit:
            path.unlink(missing_ok=True)
            removed.append(path)
        else:
            kept += size
    return removed


def has_program(artifact: UserlandArtifact, program: str, path: str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin") -> bool:
    """Whether `program` (a name looked up in PATH, or an absolute path) is an
    executable file in the userland, following its links inside its root."""
    candidates = [program] if program.startswith("/") else [f"{d}/{program}" for d in path.split(":")]
    found = [resolve_in(artifact.root, c) for c in candidates]
    return any(f is not None and f.is_file() and os.access(f, os.X_OK) for f in found)


def resolve_in(root: Path, guest_path: str, depth: int = 0) -> Path | None:
    """The host file behind a guest path inside root; links are followed as
    the guest would (absolute ones from root), at most 20 deep."""
    if depth > 20:
        return None
    current = root
    for part in Path(guest_path).relative_to("/").parts:
        candidate = current / part
        if candidate.is_symlink():
            target = os.readlink(candidate)
            base = current.relative_to(root).as_posix()
            joined = target if target.startswith("/") else f"{base}/{target}"
            resolved = resolve_in(root, "/" + os.path.normpath("/" + joined).lstrip("/"), depth + 1)
            if resolved is None:
                return None
            current = resolved
        elif candidate.exists():
            current = candidate
        else:
            return None
    return current


# What sandbox/system/image.py reuses: a system's packages come from the same private apt states.
prepare_state = _prepare_state
resolved = _resolved
