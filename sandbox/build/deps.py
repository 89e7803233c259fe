"""The Debian packages the sandbox needs: one list, shared with .ci/run.

.ci/debian-packages.txt holds one package a line, `#` starts a comment:

    qemu-system-arm              installed on the host (apt-get install)
    busybox-static:armhf unpack  a guest binary of another architecture:
                                 fetched with `apt-get download` and unpacked
                                 into the cache, never installed (the i386 and
                                 armhf busybox-static conflict with the host's)

An `:arch` qualifier names a foreign architecture; `ensure()` (`sandbox deps`,
which .ci/run calls) runs `dpkg --add-architecture` for each one before
`apt-get update`.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import InputError, SandboxError, printable
from sandbox.base.machines import Machine
from sandbox.base.paths import PACKAGES_LIST, cache_dir
from sandbox.base.progress import say, step

UNPACK = "unpack"


@dataclass(frozen=True)
class Package:
    name: str  # as apt names it, with an ":arch" qualifier for a foreign one
    unpack: bool  # fetched and unpacked into the cache rather than installed

    @property
    def arch(self) -> str | None:
        return self.name.split(":", 1)[1] if ":" in self.name else None


def parse(text: str, source: str = str(PACKAGES_LIST)) -> list[Package]:
    """The packages a list names; InputError names the line of a bad one."""
    packages = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2 or (len(words) == 2 and words[1] != UNPACK):
            raise InputError(source, f"line {number}",
                             f"expected '<package>[:<arch>] [{UNPACK}]', got {raw.strip()!r}")
        packages.append(Package(words[0], len(words) == 2))
    return packages


def listed(path: Path = PACKAGES_LIST) -> list[Package]:
    return parse(path.read_text(), str(path))


def required(path: Path = PACKAGES_LIST) -> list[str]:
    """The packages to install on the host."""
    return [p.name for p in listed(path) if not p.unpack]


def foreign_architectures(packages: list[Package]) -> list[str]:
    return sorted({p.arch for p in packages if p.arch})


STATUS_FORMAT = "${db:Status-Abbrev}|${Package}|${Architecture}\n"
"""dpkg-query's line for each package it knows: "ii |bc|amd64" (wanted,
installed, no error)."""


def installed_in(status: str, native: str) -> set[str]:
    """The names the installed packages answer to in a list: "name:arch",
    and "name" alone for the native architecture and "all"."""
    names: set[str] = set()
    for line in status.splitlines():
        state, _, rest = line.partition("|")
        name, _, arch = rest.partition("|")
        if state[1:2] == "i" and name:  # the second letter: installed ("hi": held, too)
            names.add(f"{name}:{arch}")
            if arch in (native, "all"):
                names.add(name)
    return names


def missing(packages: list[str]) -> list[str]:
    """Packages dpkg does not report as installed, asked in one dpkg-query
    (one per package took a second at every `just demo`)."""
    if not packages:
        return []
    native = _native()
    proc = subprocess.run(["dpkg-query", "-W", f"-f={STATUS_FORMAT}", *packages],
                          capture_output=True, text=True, check=False)  # exit 1: some unknown
    names = installed_in(proc.stdout, native)
    return [p for p in packages if p not in names]


def _run(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    proc = subprocess.run(argv, env=env, cwd=cwd, check=False)
    if proc.returncode != 0:
        raise SandboxError(f"'{' '.join(argv)}' failed with exit code {proc.returncode}")


APT_PAUSES = (10, 30)
"""Seconds between the tries of an apt-get that reaches the mirror (update,
install, download). A mirror caught mid-sync serves an index that disagrees
with its Release file ("File has unexpected size ... Mirror sync in
progress?", seen here for bookworm-security's i386 and armhf indexes), and a
download can be cut; both pass within minutes."""


def _tried(argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
           capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Run argv, again after each of APT_PAUSES while it fails; the last
    try's result."""
    def once() -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=capture, text=True, check=False)

    for pause in APT_PAUSES:
        proc = once()
        if proc.returncode == 0:
            return proc
        say(f"'{' '.join(argv)}' failed (exit {proc.returncode}); trying again in {pause} s")
        time.sleep(pause)
    return once()


def _update(env: dict[str, str]) -> None:
    """apt-get update; if it still fails after its tries, each repository's
    native index first, then the others once more, and go on with what apt
    could fetch: a package the indexes lack makes the install that follows
    fail with apt's own message.

    apt keeps or drops a repository's indexes as a whole: one foreign index
    that will not fetch (bookworm-security's i386 index served with a size
    its Release file does not say, for hours, on a fresh machine) left that
    repository with no index at all, and linux-source-6.12, which only it
    has, "Unable to locate". Fetched natively first, its native index
    stays when the full update fails again ("old ones used instead")."""
    proc = _tried(["apt-get", "update", "-q"], env)
    if proc.returncode == 0:
        return
    say(f"warning: 'apt-get update -q' failed (exit {proc.returncode}) {len(APT_PAUSES) + 1} times; "
        f"fetching each repository's {_native()} index alone, then the others once more")
    subprocess.run(["apt-get", "update", "-q", "-o", f"APT::Architectures={_native()}"], env=env, check=False)
    if subprocess.run(["apt-get", "update", "-q"], env=env, check=False).returncode != 0:
        say("warning: going on with the package indexes apt could fetch")


def _native() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=False).stdout.strip()


def _added_architectures() -> set[str]:
    proc = subprocess.run(["dpkg", "--print-foreign-architectures"],
                          capture_output=True, text=True, check=False)
    return set(proc.stdout.split())


def ensure(packages: list[str] | None = None) -> list[str]:
    """Install what is missing (needs root) and unpack the guest packages;
    returns what was installed or unpacked."""
    entries = listed() if packages is None else [Package(p, False) for p in packages]
    archs = [a for a in foreign_architectures(entries) if a not in _added_architectures()]
    absent = missing([p.name for p in entries if not p.unpack])
    if archs or absent:
        if os.geteuid() != 0:
            need = [f"dpkg --add-architecture {a}" for a in archs]
            need += [f"apt-get install {' '.join(absent)}"] if absent else []
            raise SandboxError(f"missing Debian packages or architectures (run as root, or: "
                               f"sudo sh -c '{'; '.join(need)}')")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        with step(f"installing {len(absent)} Debian package(s): {' '.join(absent)}"):
            for arch in archs:
                _run(["dpkg", "--add-architecture", arch])
            _update(env)
            install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *absent]
            if absent and _tried(install, env).returncode != 0:
                raise SandboxError(f"'{' '.join(install)}' failed "
                                   f"{len(APT_PAUSES) + 1} times (apt's message is above)")
            _leave_services_off(absent)
    unpacked = [p.name for p in entries if p.unpack and not _unpacked_dir(p.name).is_dir()]
    for name in unpacked:
        unpacked_package(name)
    return absent + unpacked


UNWANTED_SERVICES = {"openssh-server": ("ssh.service", "ssh.socket")}
"""Services a package enables on a host with systemd that the sandbox never
uses: `just across`'s test starts its own sshd on a loopback port. Turned off
right after the install that brought them, and only then."""


def _leave_services_off(installed: list[str]) -> None:
    units = [u for p in installed for u in UNWANTED_SERVICES.get(p, ())]
    if units and Path("/run/systemd/system").is_dir():  # systemd is the host's init
        subprocess.run(["systemctl", "disable", "--now", "--quiet", *units], check=False)
        say(f"turned off {' '.join(units)}: installed for the tests, never used as a service")


def _unpacked_dir(package: str) -> Path:
    return cache_dir() / "debs" / package.replace(":", "_")


def unpacked_package(package: str) -> Path:
    """The root of `package` unpacked into the cache (apt-get download and
    dpkg-deb -x, no root needed), fetched on first use."""
    target = _unpacked_dir(package)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".unpack-") as tmp:
        with step(f"fetching {package} (apt-get download) into {target}"):
            proc = _tried(["apt-get", "download", "-q", package], cwd=tmp, capture=True)
            if proc.returncode != 0:
                arch = Package(package, unpack=True).arch
                hint = f"dpkg --add-architecture {arch} && " if arch else ""
                raise SandboxError(f"cannot download {package}: {proc.stderr.strip()} "
                                   f"(as root: {hint}apt-get update, or `just deps`)")
            debs = sorted(Path(tmp).glob("*.deb"))
            root = Path(tmp) / "root"
            for deb in debs:
                _run(["dpkg-deb", "-x", str(deb), str(root)])
            (root / ".deb").write_text("".join(f"{d.name}\n" for d in debs))
            try:
                os.rename(root, target)
            except OSError:  # unpacked by another process meanwhile
                shutil.rmtree(root, ignore_errors=True)
    return target


def cflags32(machine: Machine) -> str:
    """rootfs/Makefile's CFLAGS32 for `machine`: what selects the 32-bit ABI,
    and the folder of its <asm/*.h> headers where the machine names a package
    for them. x86's gcc -m32 looks for them in /usr/include/i386-linux-gnu,
    which only linux-libc-dev:i386 fills; installed, that package must have
    the very version of the host's linux-libc-dev, from an i386 index of the
    same mirror state, which a mirror mid-sync once did not serve. Unpacked
    into the cache it needs neither."""
    if not machine.toolchain.asm_headers32:
        return machine.toolchain.cflags32
    package, folder = machine.toolchain.asm_headers32
    return f"{machine.toolchain.cflags32} -isystem {shlex.quote(str(unpacked_package(package) / folder))}"


def bootstrap(say_when_present: bool = False) -> int | None:
    """Install what is missing: what every verb does first (sandbox/__main__.py),
    quietly when nothing is. None to go on, or 2 after a one-line error."""
    try:
        installed = ensure()
    except SandboxError as err:
        print(f"error: {printable(str(err))}", file=sys.stderr)
        return 2
    if installed or say_when_present:
        say(f"installed: {' '.join(installed)}" if installed else "all Debian packages present")
    return None


def main(argv: list[str] | None = None) -> int:
    """`sandbox deps`: install what is missing. It imports only the standard
    library and sandbox.base, as it runs before the python3-* packages it
    installs are there (sandbox/__main__.py). 0, or 2 with a one-line error."""
    if argv:
        print(f"error: sandbox deps takes no arguments, got {printable(' '.join(argv))}", file=sys.stderr)
        return 2
    return bootstrap(say_when_present=True) or 0
