"""A second "host" for tests: Debian's sshd started as a process of its own
on a free loopback port, with its own temporary host key, sshd_config,
authorized key and client key, and stopped after, also on failure. The
host's own sshd (its configuration, port 22) is never touched."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

SSHD = Path("/usr/sbin/sshd")
PRIVSEP_DIR = Path("/run/sshd")  # compiled into Debian's sshd: it must exist, root-owned
ALIAS = "y2038-loopback"


@dataclass(frozen=True)
class LoopbackHost:
    alias: str  # the Host entry of ssh_config
    ssh_config: Path  # ssh -F: port, user, client key, known hosts
    port: int
    log: Path  # sshd's own log (-E)


def unavailable() -> str | None:
    """Why no loopback sshd can run here, or None."""
    if not SSHD.is_file():
        return f"{SSHD} is missing: openssh-server is not installed (`just deps` installs it)"
    if os.geteuid() != 0:
        return "a login host for root needs root to run sshd"
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return "ssh or ssh-keygen is missing (openssh-client)"
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "y2038-test", "-f", str(path)],
                   check=True, capture_output=True)


def _write_configs(folder: Path, port: int) -> LoopbackHost:
    _keygen(folder / "host_key")
    _keygen(folder / "client_key")
    (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
    (folder / "authorized_keys").chmod(0o600)
    (folder / "sshd_config").write_text(f"""\
ListenAddress 127.0.0.1
Port {port}
HostKey {folder / 'host_key'}
PidFile {folder / 'sshd.pid'}
PermitRootLogin prohibit-password
AuthorizedKeysFile {folder / 'authorized_keys'}
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
StrictModes no
""")
    (folder / "ssh_config").write_text(f"""\
Host {ALIAS}
  HostName 127.0.0.1
  Port {port}
  User root
  IdentityFile {folder / 'client_key'}
  IdentitiesOnly yes
  UserKnownHostsFile {folder / 'known_hosts'}
  StrictHostKeyChecking accept-new
  BatchMode yes
  ConnectTimeout 10
""")
    return LoopbackHost(ALIAS, folder / "ssh_config", port, folder / "sshd.log")


def _wait_for_login(host: LoopbackHost, sshd: subprocess.Popen[bytes], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while True:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd exited with {sshd.returncode}: {host.log.read_text(errors='replace')}")
        probe = subprocess.run(["ssh", "-F", str(host.ssh_config), host.alias, "true"],
                               capture_output=True, text=True, timeout=seconds)
        if probe.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"no login through sshd on port {host.port}: {probe.stderr.strip()}")
        time.sleep(0.2)


@contextmanager
def loopback_sshd(folder: Path) -> Iterator[LoopbackHost]:
    """sshd on 127.0.0.1:<free port> for root with the key in `folder`, stopped on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    host = _write_configs(folder, free_port())
    # Left in place after: an empty runtime folder Debian's own ssh service makes
    # too, and another test's sshd may be using it.
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    sshd = subprocess.Popen([str(SSHD), "-D", "-f", str(folder / "sshd_config"), "-E", str(host.log)],
                            stdin=subprocess.DEVNULL)
    try:
        _wait_for_login(host, sshd)
        yield host
    finally:
        sessions = _children(sshd.pid)  # a session left by a client killed on a timeout
        sshd.terminate()
        for pid in sessions:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            sshd.wait(10)
        except subprocess.TimeoutExpired:
            sshd.kill()
            sshd.wait()


def _children(pid: int) -> list[int]:
    """The processes whose parent is pid (from /proc/<pid>/stat)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found
