"""The facts a report needs that only the running side knows, written beside
the evidence so that `just report` can rebuild the page from the folder alone
(read back by sandbox/report/evidence.py):

    <results>/session.json              the invocation: command, repository commit, host packages
    <results>/<slug>/<machine>/facts.json   kernel build info, initramfs, accelerator, timings
    <results>/<slug>/<machine>/scenario.toml  the scenario file as it ran (its comments), from its start
"""
from __future__ import annotations

import platform
import subprocess
import sys
import time
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.errors import InputError
from sandbox.base.evidence import Evidence, Session
from sandbox.base.paths import REPO
from sandbox.build import deps
from sandbox.guest.target import Target
from sandbox.scenario import guards
from sandbox.scenario.model import Scenario


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def keep_scenario(scenario: Scenario, evidence: Path) -> None:
    """scenario.toml: the scenario file as it runs, copied when the run starts,
    so that a run killed outright keeps it too (`just report` reads only this
    copy, never the repository's file of that name)."""
    source = Path(scenario.file)
    source = source if source.is_absolute() else REPO / source
    try:
        text = guards.read_text(source, scenario.file)  # a regular file, bounded: what was parsed
    except InputError:  # gone or changed since it was loaded: the page shows the run without its matrix
        return
    Evidence(evidence).write(files.SCENARIO_COPY, text)


def write_run_facts(target: Target, scenario: Scenario, evidence: Path, started: float, seconds: float) -> None:
    """facts.json of one run (`started`: time.time() at its start)."""
    kernel = {key: value for key, value in target.kernel.info.items()}
    kernel.setdefault("key", target.kernel.key)
    kernel["boot_image"] = str(target.kernel.boot_image)
    facts = {
        "scenario": scenario.name,
        "scenario_file": scenario.file,
        "machine": target.machine.name,
        "accel": target.accel.name,
        "tree": target.tree,
        "kernel": kernel,
        "initramfs": {"key": target.initramfs.key, "path": str(target.initramfs.path)},
        "started": _utc(started),
        "wall_seconds": round(seconds, 2),
    }
    Evidence(evidence).write_json(files.FACTS, facts)


def _quiet(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def package_versions() -> dict[str, str]:
    """The installed versions of the Debian packages the sandbox lists."""
    names = [p.name for p in deps.listed() if not p.unpack]
    out = _quiet(["dpkg-query", "-W", "-f", "${Package}:${Architecture}\t${Version}\t${Status}\n", *names])
    versions = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2].endswith(" installed") and parts[1]:
            versions[parts[0]] = parts[1]
    return versions


def write_session(results: Path, argv: list[str] | None = None) -> None:
    """session.json of a results folder, once."""
    session = Session(results)
    if session.path(files.SESSION).exists():
        return
    commit = _quiet(["git", "-C", str(REPO), "rev-parse", "HEAD"]).strip()
    dirty = bool(_quiet(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"]).strip())
    record = {
        "command": " ".join(argv if argv is not None else sys.argv),
        "started": _utc(time.time()),
        "host": f"{platform.node()} {platform.machine()} {platform.release()}",
        "python": sys.version.split()[0],
        "git": {"commit": commit, "dirty": dirty} if commit else {},
        "packages": package_versions(),
    }
    session.write_json(files.SESSION, record)
