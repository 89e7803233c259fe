"""`just bench --fresh-machine`: the README's set-up on a pristine Debian 12.

A minimal Debian 12 root (`mmdebstrap --variant=minbase`, plus npm and
ca-certificates, from the host's own mirrors) gets a clean `git clone` of
the repository; inside it, through `chroot`, the lines of the README's
set-up block run one by one, literally, up to and including `just demo`
(the ones after it, `just test`, are left out: they are the suite, not the
first ten minutes). The root has its own empty cache, so everything is
built cold. Printed: how long each line took, the phases of the demo read
from its own `==> ` progress lines (packages, kernel, initramfs, userlands,
the demo's runs), and what the set-up installed (dpkg's package count and
installed size in the root, before and after). The whole output is kept in
the results folder. A benchmark, not part of .ci/run.

The root trusts what the host's network needs: the host's local CA
certificates (/usr/local/share/ca-certificates, as a TLS-inspecting proxy
requires) are added to the root's store, and NODE_EXTRA_CA_CERTS passes in
when the host sets it, as resolv.conf does for names. Nothing else of the
host's configuration goes in.

QEMU in the root runs with TCG (Y2038_ACCEL=tcg): the host's /dev is bound
into the root, and /dev/kvm there hangs guests on this kind of machine.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from sandbox.app.benchmarks_doc import add_entry
from sandbox.app.figures import Figure, render
from sandbox.base import evidence as files
from sandbox.base import paths
from sandbox.build import deps
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.evidence import Session
from sandbox.base.progress import PREFIX, say

SUITE = "bookworm"
SETUP_HEADING = re.compile(r"^#+\s*set[- ]?up\b", re.IGNORECASE)
LAST_LINE = "just demo"
"""The set-up runs up to and including the first line that starts so."""
WHAT = "the fresh-machine check: the README's set-up lines to the end of `just demo`"
CLONE = "/root/y2038-sandbox"
"""Where the clone lies inside the root."""
MOUNTS = (  # (inside the root, mount's arguments), mounted in this order, unmounted in the reverse
    ("proc", ("-t", "proc", "proc")),
    ("sys", ("-t", "sysfs", "sysfs")),
    ("dev", ("--bind", "/dev")),
    ("dev/pts", ("--bind", "/dev/pts")),
    ("dev/shm", ("-t", "tmpfs", "tmpfs")),  # the root's own, not the host's
)
PHASES = (  # (phase, what its progress lines say), the first match decides
    ("packages", ("installing ", "fetching ")),
    ("kernel", ("kernel ", "unpacking linux-source", "committing the pristine tree", "making a worktree")),
    ("initramfs", ("initramfs",)),
    ("userlands", ("userland", "apt-get update for", "making ")),
    ("runs", ("running ",)),
)
"""The demo's phases. Until its first progress line the demo is installing
packages (sandbox/__main__.py installs before anything else); a progress
line that names no phase leaves the phase as it was."""
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
PASSED_IN = ("NODE_EXTRA_CA_CERTS",)
"""The host's environment variables the root gets (the network's trust)."""
CHROOT_ENV = {"HOME": "/root", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
              "LANG": "C.UTF-8", "TERM": "dumb", "Y2038_ACCEL": "tcg"}


def setup_lines(readme: str, source: str = "README.md") -> list[str]:
    """The commands of the first ```sh block under the set-up heading, up to
    and including the first `just demo`; comments and blank lines left out."""
    lines = readme.splitlines()
    start = next((i for i, line in enumerate(lines) if SETUP_HEADING.match(line)), None)
    if start is None:
        raise InputError(source, "set-up", "no heading named 'Set-up' (the fresh-machine check follows its lines)")
    opening = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == "```sh"), None)
    if opening is None:
        raise InputError(source, "set-up", "no ```sh block under the set-up heading")
    commands: list[str] = []
    for line in lines[opening + 1:]:
        if line.strip().startswith("```"):
            break
        if line.strip() and not line.strip().startswith("#"):
            commands.append(line.strip())
            if line.strip().startswith(LAST_LINE):
                return commands
    raise InputError(source, "set-up", f"the set-up block has no line starting '{LAST_LINE}'")


def mirror_lines(sources: dict[str, str]) -> list[str]:
    """One-line `deb URI SUITE COMPONENTS` entries for Debian 12 from apt's
    source files: deb822 (*.sources) and one-line (*.list) alike."""
    found: list[str] = []
    for name, text in sources.items():
        if name.endswith(".sources"):
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.MULTILINE))
                if "deb" not in fields.get("Types", "").split() or fields.get("Enabled", "yes") == "no":
                    continue
                for uri in fields.get("URIs", "").split():
                    for suite in fields.get("Suites", "").split():
                        if suite.startswith(SUITE):
                            found.append(f"deb {uri} {suite} {fields.get('Components', 'main')}")
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
                if len(words) >= 3 and words[0] == "deb" and words[2].startswith(SUITE):
                    found.append(" ".join(words))
    return list(dict.fromkeys(found))


def host_mirrors(apt: Path = Path("/etc/apt")) -> list[str]:
    files = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.sources")),
             *sorted((apt / "sources.list.d").glob("*.list"))]
    found = mirror_lines({f.name: f.read_text() for f in files if f.is_file()})
    if not found:
        raise SandboxError(f"no Debian 12 ({SUITE}) mirror in {apt}/sources.list or {apt}/sources.list.d")
    return found


def phase_of(progress: str, current: str) -> str:
    """The phase a `==> ` line belongs to (PHASES), else the current one."""
    text = progress.removeprefix(PREFIX)
    return next((phase for phase, marks in PHASES if any(m in text for m in marks)), current)


def phase_seconds(lines: list[tuple[float, str]], end: float) -> dict[str, float]:
    """(seconds since the demo started, line) -> seconds spent in each phase,
    in the order the phases came."""
    spent: dict[str, float] = {}
    current, since = PHASES[0][0], 0.0
    for at, line in lines:
        if line.startswith(PREFIX):
            phase = phase_of(line, current)
            if phase != current:
                spent[current] = spent.get(current, 0.0) + at - since
                current, since = phase, at
    spent[current] = spent.get(current, 0.0) + end - since
    return spent


@dataclass(frozen=True)
class Packages:
    count: int
    kib: int

    @staticmethod
    def parse(status: str) -> "Packages":
        """dpkg-query lines `<status abbrev>|<Installed-Size in KiB>`: the installed ones."""
        sizes = [int(size or 0) for state, _, size in (line.partition("|") for line in status.splitlines())
                 if state[1:2] == "i"]
        return Packages(len(sizes), sum(sizes))


def installed_in(root: Path) -> Packages:
    proc = subprocess.run(["dpkg-query", f"--admindir={root / 'var/lib/dpkg'}", "-W",
                           "-f=${db:Status-Abbrev}|${Installed-Size}\n"],
                          capture_output=True, text=True, check=False)
    return Packages.parse(proc.stdout)


def simulated_apt_lines(simulation: str) -> list[str]:
    """`apt-get install -s` output: the `name=version` of each `Inst` line."""
    found = re.findall(r"^Inst (\S+) (?:\[[^]]*\] )?\((\S+)", simulation, re.MULTILINE)
    return [f"{name}={version}" for name, version in found]


def installed_sizes(show: str) -> int:
    """`apt-cache show` stanzas: the sum of their Installed-Size (KiB)."""
    return sum(int(size) for size in re.findall(r"^Installed-Size: (\d+)$", show, re.MULTILINE))


def deps_would_install(root: Path, recommends: bool, log: "Log") -> Packages:
    """What `sandbox deps` would install in the root, with or without
    recommends, simulated by apt in the root (nothing installed)."""
    names = [p.name for p in deps.listed() if not p.unpack]
    argv = ["apt-get", "install", "-s", "-q", *([] if recommends else ["--no-install-recommends"]), *names]
    chroot = ["chroot", str(root)]
    simulation = subprocess.run([*chroot, *argv], capture_output=True, text=True, env=CHROOT_ENV, check=False)
    if simulation.returncode != 0:
        log.write(simulation.stdout + simulation.stderr)
        raise SandboxError(f"'{' '.join(argv[:4])} ...' failed in {root} (log: {log.path})")
    wanted = simulated_apt_lines(simulation.stdout)
    show = subprocess.run([*chroot, "apt-cache", "show", "--no-all-versions", *wanted], capture_output=True,
                          text=True, env=CHROOT_ENV, check=False).stdout if wanted else ""
    return Packages(len(wanted), installed_sizes(show))


def simulate_deps(root: Path, log: "Log") -> dict[str, Packages]:
    """`sandbox deps`' install as it is (without recommends) and as it was
    (with them), simulated in the fresh root before the set-up runs."""
    subprocess.run(["chroot", str(root), "apt-get", "update", "-q"], stdout=log.file, stderr=subprocess.STDOUT,
                   env=CHROOT_ENV, check=False)
    return {"without recommends": deps_would_install(root, False, log),
            "with recommends": deps_would_install(root, True, log)}


@dataclass
class LineRun:
    command: str
    seconds: float = 0.0
    exit_code: int = 0
    output: list[tuple[float, str]] = field(default_factory=list)  # (seconds since its start, line)


def _mounted_under(root: Path) -> list[str]:
    inside = str(root.resolve())
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [p for p in points if p == inside or p.startswith(inside + "/")]


@contextmanager
def mounted(root: Path) -> Iterator[None]:
    """MOUNTS inside the root, all unmounted when the block ends, also on
    failure (lazily if busy); refuses to go on if one stays."""
    done: list[Path] = []
    try:
        for where, args in MOUNTS:
            point = root / where
            point.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", *args, str(point)], check=True)
            done.append(point)
        yield
    finally:
        for point in reversed(done):
            if subprocess.run(["umount", str(point)], check=False).returncode != 0:
                subprocess.run(["umount", "--lazy", str(point)], check=False)
        left = _mounted_under(root)
        if left:
            raise SandboxError(f"still mounted under {root}: {' '.join(left)} (umount them by hand)")


def run_in_root(root: Path, command: str, log: "Log") -> LineRun:
    """One set-up line, as a user types it, in the clone inside the root."""
    run = LineRun(command)
    log.write(f"\n$ {command}\n")
    start = time.monotonic()
    env = CHROOT_ENV | {name: os.environ[name] for name in PASSED_IN if name in os.environ}
    argv = ["chroot", str(root), "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()),
            "/bin/bash", "-c", f"cd {CLONE} && {command}"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            at = time.monotonic() - start
            line = line.rstrip("\n").split("\r")[-1]
            run.output.append((at, line))
            log.write(f"[{at:8.1f}] {line}\n")
            if line.startswith(PREFIX):
                print(f"  [{at:7.1f} s] {line}", file=sys.stderr, flush=True)
    run.exit_code = proc.returncode
    run.seconds = time.monotonic() - start
    log.write(f"exit {run.exit_code} after {run.seconds:.1f} s\n")
    return run


class Log:
    def __init__(self, session: Session) -> None:
        self.path = session.path(files.FRESH_MACHINE_LOG)
        self.file = session.stream(files.FRESH_MACHINE_LOG)

    def write(self, text: str) -> None:
        self.file.write(text)
        self.file.flush()


def build_root(root: Path, log: Log) -> float:
    """mmdebstrap's minimal Debian 12 with npm; its seconds."""
    argv = ["mmdebstrap", "--variant=minbase", "--include=npm,ca-certificates", SUITE, str(root), *host_mirrors()]
    log.write("$ " + " ".join(argv) + "\n")
    start = time.monotonic()
    proc = subprocess.run(argv, stdout=log.file, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise SandboxError(f"mmdebstrap failed with exit code {proc.returncode} (log: {log.path})")
    if not (root / "etc/resolv.conf").exists():  # names resolve inside as outside
        shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    local_cas = sorted(LOCAL_CAS.glob("*.crt"))
    if local_cas:  # the network's trust, as the host has it
        for ca in local_cas:
            shutil.copy(ca, root / str(LOCAL_CAS).lstrip("/") / ca.name)
        subprocess.run(["chroot", str(root), "update-ca-certificates"], stdout=log.file, stderr=subprocess.STDOUT,
                       check=True)
    return time.monotonic() - start


def clone_into(root: Path, log: Log) -> str:
    """A clean clone of this repository's committed HEAD; its commit."""
    target = root / CLONE.lstrip("/")
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(paths.REPO), str(target)], check=True)
    commit = subprocess.run(["git", "-C", str(target), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    log.write(f"clone of {paths.REPO} at {commit} in {CLONE}\n")
    return commit


def figures_of(root_seconds: float, base: Packages, after: Packages, runs: list[LineRun],
               simulated: dict[str, Packages]) -> list[Figure]:
    figures = [Figure("minimal Debian 12 root (mmdebstrap, not the user's time)", root_seconds, "s",
                      f"{base.count} packages, {base.kib / 1024:.0f} MiB")]
    figures += [Figure(f"sandbox deps {how} (apt-get -s)", packages.count, "pkgs",
                       f"{packages.kib / 1024:.0f} MiB installed size") for how, packages in simulated.items()]
    for run in runs:
        figures.append(Figure(f"$ {run.command.split(' #')[0].strip()[:60]}", run.seconds, "s",
                              f"exit {run.exit_code}"))
        if run.command.startswith(LAST_LINE):
            for phase, seconds in phase_seconds(run.output, run.seconds).items():
                figures.append(Figure(f"  demo phase: {phase}", seconds, "s"))
    figures.append(Figure("installed by the set-up (dpkg)", after.count - base.count, "pkgs",
                          f"{(after.kib - base.kib) / 1024:.0f} MiB installed size"))
    return figures


def fresh_machine(keep_root: bool = False) -> int:
    """The check; 0 if every set-up line exited 0, else the first failure's exit code."""
    if os.geteuid() != 0:
        raise SandboxError("the fresh-machine check needs root (mmdebstrap, mount, chroot)")
    commands = setup_lines((paths.REPO / "README.md").read_text())
    results = paths.new_results_dir("fresh-machine")
    session = Session(results)
    log = Log(session)
    root = Path("/var/tmp") / f"y2038-{results.name}"
    say(f"fresh machine in {root}; the set-up lines: {' ; '.join(commands)}; log: {log.path}")
    runs: list[LineRun] = []
    try:
        root_seconds = build_root(root, log)
        base = installed_in(root)
        commit = clone_into(root, log)
        with mounted(root):
            simulated = simulate_deps(root, log)
            for command in commands:
                say(f"$ {command}")
                runs.append(run_in_root(root, command, log))
                if runs[-1].exit_code != 0:
                    break
        after = installed_in(root)
        figures = figures_of(root_seconds, base, after, runs, simulated)
        text = render(figures)
        print(f"fresh-machine check at {commit}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}\n{text}")
        session.write(files.FRESH_MACHINE_FIGURES, text + "\n")
        if runs and runs[-1].command.startswith(LAST_LINE) and runs[-1].exit_code == 0:
            say(f"written into {add_entry(WHAT, figures, 'just bench --fresh-machine')}")
        session.write(files.FRESH_MACHINE_JSON, json.dumps(
            {"commit": commit, "commands": commands, "exit_codes": [r.exit_code for r in runs],
             "figures": [f.__dict__ for f in figures]}, indent=1) + "\n")
    finally:
        log.file.close()
        if not keep_root and root.exists() and not _mounted_under(root):
            shutil.rmtree(root, ignore_errors=True)
    say(f"log: {log.path}")
    failed = [r for r in runs if r.exit_code != 0]
    if failed:
        say(f"'{failed[0].command}' failed with exit code {failed[0].exit_code}: the end of {log.path} says why")
    return failed[0].exit_code if failed else (0 if len(runs) == len(commands) else 1)
