"""The Debian packages the sandbox needs: one list, shared with .ci/run."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .errors import SandboxError
from .paths import PACKAGES_LIST
from .progress import step


def required(path: Path = PACKAGES_LIST) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def missing(packages: list[str]) -> list[str]:
    """Packages dpkg does not report as installed."""
    absent = []
    for package in packages:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", package],
                              capture_output=True, text=True, check=False)
        if not proc.stdout.startswith("ii"):
            absent.append(package)
    return absent


def ensure(packages: list[str] | None = None) -> list[str]:
    """Install what is missing (needs root); returns what was installed."""
    absent = missing(packages if packages is not None else required())
    if not absent:
        return []
    if os.geteuid() != 0:
        raise SandboxError(f"missing Debian packages: {' '.join(absent)} "
                           f"(run as root, or: sudo apt-get install {' '.join(absent)})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    with step(f"installing {len(absent)} Debian package(s): {' '.join(absent)}"):
        for argv in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *absent]):
            proc = subprocess.run(argv, env=env, check=False)
            if proc.returncode != 0:
                raise SandboxError(f"'{' '.join(argv)}' failed with exit code {proc.returncode}")
    return absent
