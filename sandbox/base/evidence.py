"""A run's folder and every file in it: the one owner of the evidence layout.

    results/<stamp>-<label>/                  a session (Session)
        session.json  junit.xml  report.html  observations.jsonl
        <scenario-slug>/<machine>/            a run (Evidence)
            run.json            the run's state: `running` (with the pid) from
                                its start, then its outcome (sandbox/run/record.py)
            observations.jsonl  verdicts.json  report.txt  traceback.txt
            console.log  kernel.log  agent.log  qemu.log  qemu-command.txt/.json
            disks.json  facts.json  scenario.toml  charts.json  chart-<n>.png
            time-server/        the time server guest's own evidence
        <system>/                             a whole system's rehearsal (sandbox/system/)
            boot.json  units-before.txt  units-after.txt  timeline.json
            kernel.log  journal/  journal.json  units.txt  units.json
            system.html  checks.txt  checks.json  <look>.txt (phases.FINAL_LOOKS)

Every stage that leaves a file there names it through this module and writes
it through `Evidence.write` (whole files, atomically: a reader never sees
half a run.json) or `Evidence.stream` (a transcript written as it comes);
QEMU itself writes console.log, at `Evidence.console`. A session's own files
(session.json, junit.xml, report.html, the session's observations.jsonl)
go through `Session` alike. Readers take the same names: nothing else in
the sandbox spells a file name of a run's folder.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

RUN = "run.json"
OBSERVATIONS = "observations.jsonl"
VERDICTS = "verdicts.json"
REPORT = "report.txt"
TRACEBACK = "traceback.txt"
CONSOLE = "console.log"
KERNEL_LOG = "kernel.log"
AGENT_LOG = "agent.log"
QEMU_LOG = "qemu.log"
QEMU_COMMAND = "qemu-command.txt"
QEMU_ARGV = "qemu-command.json"
DISKS = "disks.json"
FACTS = "facts.json"
SCENARIO_COPY = "scenario.toml"
CHARTS = "charts.json"
CHRONYD_LOG = "chronyd.log"
TIME_SERVER = "time-server"

RUNS = "runs.jsonl"
REHEARSE_INITRAMFS = "initramfs-rehearse.cpio"
OVERLAY = "overlay.cpio"
"""A runtime audit boot's folder (sandbox/audit/runtime/boot.py): each command
it ran, and the initramfs it booted with the user's files appended."""

SYSTEM_BOOT = "boot.json"
UNITS_BEFORE = "units-before.txt"
UNITS_AFTER = "units-after.txt"
TIMELINE = "timeline.json"
JOURNAL = "journal"  # a folder: the journal files copied out of the guest
JOURNAL_JSON = "journal.json"
UNITS_TEXT = "units.txt"
UNITS_JSON = "units.json"
SYSTEM_PAGE = "system.html"
CHECKS_TEXT = "checks.txt"
CHECKS_JSON = "checks.json"
UNPACKED = "unpacked"  # a folder: a root filesystem given as an archive, unpacked for the boot, then removed
SYSTEM_IMAGE = "system.ext4"  # the image a root filesystem given by the user is packed as
"""A whole system's rehearsal folder (sandbox/system/): what its boot saw
(boot.py), its verdicts and page (rehearse.py), its scenario's checks
(scenario_run.py); each look after the night is its Look's name."""

MUTANTS = "mutants.txt"
"""A mutants session's table (sandbox/app/verbs.py mutants)."""
BENCH = "bench.json"
FRESH_MACHINE_LOG = "fresh-machine.log"
FRESH_MACHINE_FIGURES = "figures.txt"
FRESH_MACHINE_JSON = "fresh-machine.json"
"""The folders of `just bench` and `just bench --fresh-machine` (sandbox/app/bench.py, fresh_machine.py)."""

FILES = (CONSOLE, KERNEL_LOG, AGENT_LOG, OBSERVATIONS, RUN, VERDICTS, REPORT, QEMU_COMMAND, QEMU_LOG,
         DISKS, FACTS, SCENARIO_COPY)
"""The files a run leaves, in the order a page links them."""



def chart(n: int) -> str:
    """The n-th chart's file (sandbox/report/chart_files.py), from 1."""
    return f"chart-{n}.png"


SESSION = "session.json"
JUNIT = "junit.xml"
PAGE = "report.html"

RUNNING = "running"
JUDGING = "judging"
KILLED = "killed"
"""run.json's state while the run goes on (`running`), and after the guest
completed until its verdicts are written (`judging`, beside the outcome); and
what a reader calls a run whose state is still one of them when its process
is gone."""


def write_atomically(path: Path, text: str) -> None:
    """The whole text, or the file as it was: written beside, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _beside(path)
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


def _beside(path: Path) -> Path:
    """A temporary name next to `path`, this thread's own (two runs may
    write one session.json at once)."""
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def _process_start(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat
    field 22), or "" when there is no such process: with the pid, it tells
    a live run from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]  # the fields after the command name start at field 3


@dataclass(frozen=True)
class _Folder:
    """A folder of results whose files are written whole (atomically) or as
    they come, by name."""

    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / name

    def write(self, name: str, text: str) -> Path:
        path = self.folder / name
        write_atomically(path, text)
        return path

    def write_bytes(self, name: str, data: bytes) -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _beside(path)
        tmp.write_bytes(data)
        tmp.replace(path)
        return path

    def write_json(self, name: str, data: Any) -> Path:
        return self.write(name, json.dumps(data, indent=2) + "\n")

    def stream(self, name: str, mode: str = "w") -> IO[Any]:
        """A file written as it comes (a transcript, QEMU's stderr): "w" or "wb"."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return (self.folder / name).open(mode)

    def stream_bytes(self, name: str) -> BinaryIO:
        """A binary file written as it comes (an archive)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return (self.folder / name).open("wb")

    def remove(self, name: str) -> None:
        (self.folder / name).unlink(missing_ok=True)


@dataclass(frozen=True)
class Session(_Folder):
    """A session's folder (results/<stamp>-<label>): its own files beside its runs."""


@dataclass(frozen=True)
class Evidence(_Folder):
    """One run's folder (one scenario on one machine, a runtime audit's
    boot, a whole system's rehearsal)."""

    @property
    def session(self) -> Path:
        """The session folder the run belongs to (<session>/<slug>/<machine>)."""
        return self.folder.parents[1]

    @property
    def console(self) -> Path:
        return self.folder / CONSOLE

    def server(self) -> Evidence:
        """The time server guest's evidence, inside this run's folder."""
        return Evidence(self.folder / TIME_SERVER)

    def mark_running(self, scenario: str, machine: str) -> None:
        """run.json says `running`, with this process, until the run's
        outcome replaces it: a run killed outright (SIGKILL) is read back
        as `killed`, never as missing or clean."""
        self.write_json(RUN, {"scenario": scenario, "machine": machine, **this_process(RUNNING)})


def this_process(state: str) -> dict[str, Any]:
    """run.json's keys that tie a state (RUNNING, JUDGING) to this process."""
    pid = os.getpid()
    return {"state": state, "pid": pid, "pid_start": _process_start(pid)}


def _process_gone(info: dict[str, Any]) -> bool:
    pid = info.get("pid")
    return not (isinstance(pid, int) and pid > 0 and _process_start(pid) == info.get("pid_start", ""))


def state_of(info: dict[str, Any]) -> str:
    """A run.json's state: its outcome; `running` (or `judging`, after the
    guest completed) while its process lives; `killed` when the process that
    wrote `running` or `judging` is gone."""
    state = info.get("state")
    if "outcome" in info and state != JUDGING:
        return str(info["outcome"])
    if state not in (RUNNING, JUDGING):
        return "unknown"
    return KILLED if _process_gone(info) else str(state)

