"""`just across --host [N*]HOST... [pytest args]`: the suite on other hosts, through
pytest-xdist's SSH gateways (docs/across-hosts.md).

pytest-xdist 3.1 (Debian 12) copies the repository to each host with its
`--rsyncdir` (deprecated there, the one way its SSH gateways relocate the
arguments: an argument that names a local path must lie under a copied
folder, and is then given to the remote as `<folder name>/<rest>`). The
copy lands in `<dir>/<repository folder name>` on the host, beside xdist's
copy of pytest itself; the remote Python finds the repository and the
plugin through PYTHONPATH, set by the command that starts it. Results and
the cache on each host are its own: the summary names each worker's
results folder, to bring back with rsync or scp.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import InputError
from sandbox.base.paths import REPO

REMOTE_PYTHON = "/usr/bin/python3"
DEFAULT_DIR = "y2038-across"
"""On each host, relative to the SSH user's home (or an absolute path)."""
HOST = re.compile(r"^[A-Za-z0-9_.@%:\[\]][A-Za-z0-9_.@%:\[\]-]*$")
NOT_COPIED = ("results", "rootfs/build")
"""The repository's folders of evidence and build output stay home."""


@dataclass(frozen=True)
class Host:
    name: str  # as ssh takes it: an alias of ~/.ssh/config, host, or user@host
    workers: int = 1


@dataclass(frozen=True)
class Across:
    hosts: tuple[Host, ...]
    remote_dir: str = DEFAULT_DIR
    ssh_config: Path | None = None  # ssh -F
    repo: Path = REPO


def parse_host(text: str) -> Host:
    """`host`, `user@host`, an ssh alias, or `N*host` for N workers there."""
    count, _, name = text.rpartition("*")
    if not HOST.match(name) or (count and not count.isdigit()) or count == "0":
        raise InputError("across", "host", f"expected [N*]host as ssh names it, got {text!r}")
    return Host(name, int(count) if count else 1)


def tx_spec(plan: Across, host: Host) -> str:
    """`N*ssh=host//python=mkdir -p ... && env PYTHONPATH=... /usr/bin/python3//chdir=dir`:
    the remote shell runs the python part. The folders exist before Python
    starts, or its import system would remember them as missing and not see
    the copy that arrives after."""
    remote_repo = f"{plan.remote_dir}/{plan.repo.name}"
    pythonpath = f"{remote_repo}:{remote_repo}/pytest"
    python = (f"mkdir -p {shlex.quote(remote_repo + '/pytest')} && "
              f"env PYTHONPATH={shlex.quote(pythonpath)} {REMOTE_PYTHON}")
    parts = [f"ssh={host.name}", f"python={python}", f"chdir={plan.remote_dir}"]
    if plan.ssh_config is not None:
        parts.insert(1, f"ssh_config={plan.ssh_config}")
    spec = "//".join(parts)
    return f"{host.workers}*{spec}" if host.workers > 1 else spec


def absolute_args(args: list[str], cwd: Path) -> list[str]:
    """Arguments that name a local path made absolute (`path::test` too):
    xdist relocates only those under a copied folder."""
    out = []
    for arg in args:
        path, sep, rest = arg.partition("::")
        if not arg.startswith("-") and path and (cwd / path).exists():
            arg = str((cwd / path).resolve()) + sep + rest
        out.append(arg)
    return out


def pytest_argv(plan: Across, args: list[str], cwd: Path) -> list[str]:
    """The whole command: pytest on the hosts' workers only (-d), the repository copied."""
    if "//" in plan.remote_dir or plan.remote_dir.startswith("-") or not plan.remote_dir.strip():
        raise InputError("across", "--dir", f"expected a folder without '//', got {plan.remote_dir!r}")
    argv = [sys.executable, "-m", "pytest", "-c", str(plan.repo / "pytest" / "pytest.ini"),
            "--rootdir", str(plan.repo), "-p", "no:cacheprovider", "-d", "--max-worker-restart=0"]
    for host in plan.hosts:
        argv += ["--tx", tx_spec(plan, host)]
    argv += ["--rsyncdir", str(plan.repo)]
    argv += [f"--rsyncignore={plan.repo / folder}" for folder in NOT_COPIED]
    return argv + absolute_args(args, cwd)


def command_for(options: argparse.Namespace, rest: list[str], cwd: Path) -> list[str]:
    """main()'s options (hosts, folder, ssh config) and pytest's arguments: the command."""
    plan = Across(tuple(map(parse_host, options.host)), options.dir, options.ssh_config)
    return pytest_argv(plan, [arg for arg in rest if arg != "--"], cwd)


def exec_pytest(command: list[str]) -> None:
    """Replace this process with pytest, the repository and the plugin on its path."""
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}")
    os.execve(command[0], command, env)
