"""Build the guest initramfs: probes in every flavour, busybox, init, agent.

    build_initramfs("x86_64") -> InitramfsArtifact(path, key)

The key is a sha256 over everything that goes in: every file under rootfs/
(except rootfs/build), the busybox binary, the host binaries and the shared
libraries they need, the compiler's `--version`, the machine's row in
sandbox/base/machines.py, and this builder's own source.
The archive is cached at cache_dir()/initramfs/<key[:16]>/initramfs.cpio and
reused when present. It is an uncompressed newc cpio: quick to unpack under
emulation. The host binaries (util-linux's hwclock and the glibc it needs)
are a second archive beside it, host-binaries.cpio, which a boot appends
only when its scenario runs one.

What goes in comes from rootfs/manifest.toml (sandbox/build/rootfs_manifest.py);
what differs per machine (compiler, flags, flavours) is its Machine row.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from sandbox.base.errors import InputError, SandboxError
from sandbox.base.machines import Machine, machine
from sandbox.base.paths import ROOTFS, cache_dir
from sandbox.base.progress import say, step
from sandbox.build import cpio, rootfs_manifest
from sandbox.build.cpio import Entry
from sandbox.build.deps import cflags32, unpacked_package
from sandbox.build.rootfs_manifest import MANIFEST, Busybox, HostBinary, Manifest, load_manifest

MULTICALL = "multicall"  # rootfs/Makefile's name for a flavour's one binary
HOST_BINARIES = "host-binaries.cpio"  # beside initramfs.cpio: InitramfsArtifact.host_binaries
INIT = "init"  # the tool (rootfs/probes/init.c) the initramfs's /init links to
_BUILDER_SOURCES = (Path(__file__), Path(cpio.__file__), Path(rootfs_manifest.__file__))
_C_LOCALE = {**os.environ, "LC_ALL": "C"}


# --------------------------------------------------------------------------
# Inputs and the cache key.


@dataclass(frozen=True)
class InitramfsArtifact:
    path: Path
    key: str

    @property
    def host_binaries(self) -> Path | None:
        """The archive of the machine's host binaries ([host-binaries.<machine>]
        in rootfs/manifest.toml: util-linux's hwclock and its glibc), built
        beside the initramfs and appended only for a scenario that runs one
        (sandbox/app/jobs.py); None for a machine without any."""
        path = self.path.with_name(HOST_BINARIES)
        return path if path.is_file() else None


@dataclass(frozen=True)
class HostFile:
    """A host file copied into the guest at the same path (a program or a
    shared library; symlinks are followed, so the guest gets the contents)."""

    path: Path

    @property
    def name(self) -> str:
        return self.path.as_posix().lstrip("/")


@dataclass(frozen=True)
class _Inputs:
    machine: Machine
    manifest: Manifest
    busybox: Busybox
    cc_version: str
    host_files: tuple[HostFile, ...] = ()


def parse_ldd(output: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(paths of the shared libraries and the ELF interpreter, names ldd did
    not find) from `ldd` output. The vDSO is in the kernel, not a file."""
    found: list[str] = []
    missing: list[str] = []
    for line in output.splitlines():
        name, arrow, rest = line.strip().partition("=>")
        target = (rest if arrow else name).strip()
        if target == "not found":
            missing.append(name.strip())
            continue
        path = target.split(" (", 1)[0].strip()
        if path.startswith("/"):
            found.append(path)
    return tuple(dict.fromkeys(found)), tuple(missing)


def _shared_libraries(binary: HostBinary) -> list[HostFile]:
    result = _run(["ldd", str(binary.path)], "initramfs", "libc-bin")
    found, missing = parse_ldd(result.stdout)
    if result.returncode != 0 or missing:
        why = f"libraries not found: {', '.join(missing)}" if missing else result.stderr.strip()
        raise SandboxError(f"initramfs: `ldd {binary.path}` failed ({why}); "
                           f"install what the Debian package {binary.package} depends on")
    return [HostFile(Path(path)) for path in found]


def _host_files(binaries: tuple[HostBinary, ...]) -> tuple[HostFile, ...]:
    """The host binaries and every shared library they need, once each."""
    files: dict[str, HostFile] = {}
    for binary in binaries:
        if not binary.path.is_file():
            raise SandboxError(f"{binary.path} not found; install the Debian package {binary.package}")
        for file in (HostFile(binary.path), *_shared_libraries(binary)):
            files.setdefault(file.name, file)
    return tuple(files.values())


def _run(args: list[str], what: str, package: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, capture_output=True, text=True, env=_C_LOCALE, check=False)
    except FileNotFoundError:
        raise SandboxError(f"{what}: {args[0]} not found; install the Debian package {package}") from None


def _host_busybox(busybox: Busybox) -> Busybox:
    """An absolute path is the host's own file; a relative one lies inside the
    package unpacked into the cache (a foreign arch's busybox-static, which
    cannot be installed beside the host's)."""
    if busybox.path.is_absolute():
        return busybox
    return Busybox(unpacked_package(busybox.package) / busybox.path, busybox.package)


def _inputs(machine_name: str) -> _Inputs:
    target = machine(machine_name)
    manifest = load_manifest()
    busybox = manifest.busybox.get(target.name)
    if busybox is None:
        raise InputError(str(MANIFEST), f"busybox.{target.name}", "missing")
    busybox = _host_busybox(busybox)
    if not busybox.path.is_file():
        raise SandboxError(f"busybox for {target.name} not found at {busybox.path}; "
                           f"install the Debian package {busybox.package}")
    version = _run([target.cc, "--version"], "initramfs", target.cc_package)
    if version.returncode != 0:
        raise SandboxError(f"initramfs: `{target.cc} --version` failed: {version.stderr.strip()}")
    host_files = _host_files(manifest.host_binaries.get(target.name, ()))
    return _Inputs(target, manifest, busybox, version.stdout, host_files)


def rootfs_files(root: Path = ROOTFS) -> list[Path]:
    """Every file under rootfs/ that feeds the initramfs (not rootfs/build)."""
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).parts[0] != "build")


def _key(inputs: _Inputs) -> str:
    h = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        h.update(f"{label}\0{len(data)}\0".encode())
        h.update(data)

    part("machine", repr(inputs.machine).encode())  # name, compiler, flags, flavours
    for path in rootfs_files():
        part(f"rootfs/{path.relative_to(ROOTFS).as_posix()}", path.read_bytes())
    part("busybox", inputs.busybox.path.read_bytes())
    for file in inputs.host_files:
        part(f"host/{file.name}", file.path.read_bytes())
    part("cc --version", inputs.cc_version.encode())
    for source in _BUILDER_SOURCES:
        part(f"builder/{source.name}", source.read_bytes())
    return h.hexdigest()


# --------------------------------------------------------------------------
# Building.


def _check_toolchain(target: Machine) -> None:
    for flags, package in target.static_libcs:
        args = [target.cc, *flags.split(), "-print-file-name=libc.a"]
        found = _run(args, "initramfs", target.cc_package).stdout.strip()
        if not (os.path.isabs(found) and os.path.isfile(found)):
            raise SandboxError(f"no static libc for `{' '.join(args[:-1])}`; install the Debian package {package}")
    _run(["make", "--version"], "initramfs", "make")


def _make_probes(inputs: _Inputs, out: Path, log: Path) -> None:
    target, manifest = inputs.machine, inputs.manifest
    args = [
        "make", "--no-print-directory", "-C", str(ROOTFS), f"-j{min(os.cpu_count() or 1, 4)}",
        f"OUT={out}",
        f"CC={target.cc}",
        f"CFLAGS32={cflags32(target)}",
        f"FLAVOURS={' '.join(target.flavours)}",
        f"TOOLS_FLAVOUR={target.tools_flavour}",
        f"PROBES={' '.join(manifest.catalogue.names())}",
        f"TOOLS={' '.join(manifest.catalogue.tools)}",
        "MULTICALL=1",  # one static binary per flavour, every probe and tool a symlink to it
    ]
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=_C_LOCALE, check=False)
    if result.returncode != 0:
        log.write_text(f"$ {' '.join(args)}\n{result.stdout}")
        lines = [ln.strip() for ln in result.stdout.splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower()]
        first = (errors or lines or ["no output"])[0]
        raise SandboxError(f"building the probes failed: {first} (full log: {log})")


def _busybox_applets(busybox: Path) -> list[str]:
    """Applet paths ("bin/sh", "usr/bin/awk"...) or [] if busybox cannot run
    here (foreign arch): /init then runs `busybox --install -s` itself."""
    try:
        result = subprocess.run([str(busybox), "--list-full"], capture_output=True, text=True, check=False)
    except OSError:
        return []
    if result.returncode != 0:
        return []
    return sorted({ln.strip().lstrip("/") for ln in result.stdout.splitlines() if ln.strip()})


def _binary(path: Path) -> bytes:
    if not path.is_file():
        raise SandboxError(f"initramfs: the probe build did not produce {path.name} ({path})")
    return path.read_bytes()


def _entries(inputs: _Inputs, key: str, built: Path) -> list[Entry]:
    """The archive members, parents first, in a stable order."""
    target, manifest = inputs.machine, inputs.manifest
    entries: list[Entry] = [Entry.directory(d, 0o1777 if d == "tmp" else 0o755) for d in manifest.dirs]
    entries += [Entry.directory(d) for d in ("bin", "sbin", "usr", "usr/bin", "usr/sbin")]
    entries += [Entry.directory(s.path, mtime=s.mtime) for s in manifest.stamped]
    for dev in manifest.devices:
        make = Entry.chardev if dev.kind == "char" else Entry.blockdev
        entries.append(make(dev.path, dev.major, dev.minor, dev.mode))

    entries.append(Entry.file("bin/busybox", inputs.busybox.path.read_bytes(), 0o755))
    taken = {e.name for e in entries} | {f.name for f in inputs.host_files}
    applets = ["bin/sh", *(a for a in _busybox_applets(inputs.busybox.path) if a != "bin/sh")]
    entries += [Entry.symlink(a, "/bin/busybox") for a in applets if a not in taken]

    entries += _programs(inputs, built)

    info = f"machine={target.name}\nkey={key}\n".encode()
    entries.append(Entry.file("etc/y2038-initramfs", info))
    return cpio.with_parents(entries)


def _host_entries(inputs: _Inputs) -> list[Entry]:
    """The host binaries and their libraries, at their host paths: 3.3 MiB
    on x86_64, 0.04 s of guest time of every boot under warp for the kernel
    to unpack (12.6 ms per MiB, docs/time-warp.md), so they come only with
    the scenarios that run them."""
    return cpio.with_parents(Entry.file(f.name, f.path.read_bytes(), 0o755) for f in inputs.host_files)


def _link(path: Path, target: str) -> None:
    """The probe build (MULTICALL=1) made `path` a symlink to `target`."""
    if not path.is_symlink() or os.readlink(path) != target:
        raise SandboxError(f"initramfs: the probe build did not link {path} to {target}")


def _programs(inputs: _Inputs, built: Path) -> list[Entry]:
    """Each flavour's multi-call binary (rootfs/probes/multicall.c), once, at
    /probes/<flavour>/multicall; every probe of the flavour a symlink to it,
    every tool a symlink to the tools' flavour's (they are linked into it)."""
    target, manifest = inputs.machine, inputs.manifest
    entries = [Entry.file(f"{manifest.probes_dir}/{flavour}/{MULTICALL}", _binary(built / flavour / MULTICALL), 0o755)
               for flavour in target.flavours]
    for probe in manifest.catalogue.probes:
        for flavour in target.flavours:
            if flavour in probe.flavours:
                _link(built / flavour / probe.name, MULTICALL)
                entries.append(Entry.symlink(f"{manifest.probes_dir}/{flavour}/{probe.name}", MULTICALL))
    tools_binary = f"/{manifest.probes_dir}/{target.tools_flavour}/{MULTICALL}"
    for tool in manifest.catalogue.tools:
        _link(built / "tools" / tool, f"../{target.tools_flavour}/{MULTICALL}")
        entries.append(Entry.symlink(f"{manifest.tools_dir}/{tool}", tools_binary))
    if INIT not in manifest.catalogue.tools:
        raise SandboxError(f"initramfs: rootfs/manifest.toml has no [tool.{INIT}]: the guest's /init")
    entries.append(Entry.symlink(INIT, tools_binary))  # the kernel starts /init: the multicall picks init.c
    return entries


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder per key at a time (pytest-xdist workers share the cache)."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(inputs: _Inputs, key: str, root: Path, target: Path) -> None:
    _check_toolchain(inputs.machine)
    with tempfile.TemporaryDirectory(dir=root, prefix=f".build-{key[:16]}-") as tmp:
        built = Path(tmp) / "bin"
        log = root / f"{key[:16]}.build.log"
        _make_probes(inputs, built, log)
        log.unlink(missing_ok=True)
        target.parent.mkdir(exist_ok=True)
        if inputs.host_files:  # before the initramfs: its presence says the folder is whole
            _write(_host_entries(inputs), Path(tmp) / HOST_BINARIES, target.with_name(HOST_BINARIES))
        _write(_entries(inputs, key, built), Path(tmp) / "initramfs.cpio", target)


def _write(entries: list[Entry], partial: Path, target: Path) -> None:
    with open(partial, "wb") as out:
        cpio.write_newc(entries, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, target)  # same filesystem: atomic


def build_initramfs(machine_name: str = "x86_64") -> InitramfsArtifact:
    """The initramfs of a machine, from the cache when its inputs are unchanged."""
    inputs = _inputs(machine_name)
    key = _key(inputs)
    root = cache_dir() / "initramfs"
    root.mkdir(parents=True, exist_ok=True)
    target = root / key[:16] / "initramfs.cpio"
    if target.is_file():
        return InitramfsArtifact(target, key)
    with _locked(root / f"{key[:16]}.lock"):
        if target.is_file():  # another process built it while we waited
            return InitramfsArtifact(target, key)
        with step(f"Building the {machine_name} initramfs ({key[:16]})"):
            _build(inputs, key, root, target)
    say(f"initramfs: {target} ({target.stat().st_size // 1024} KiB)")
    return InitramfsArtifact(target, key)
