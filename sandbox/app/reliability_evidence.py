"""`just reliability`'s evidence section: results folders someone sent, given to `just report`.

    CASES                        the hostile evidence folders (one table: this section and
                                 pytest/unit/test_evidence_folders.py share it)
    baseline(results)            a small, sound results folder of one run, no boot
    try_case(case, folder)       the case made in a fresh copy, `python3 -m sandbox report` on it
    measure(folder, boot)        every case, as a Section

Each case damages one file of a sound folder: a link to a host file where a
chart or run.json should be, a charts.json naming "/etc/shadow" or "../x",
a FIFO or /dev/zero where a file is read, a file past its cap, JSON nested
200,000 deep, NaN, a 400-digit integer, a run.json that is no run's. Every
one must be refused with one line: exit 2 for what the bounded reader
(sandbox/base/evidence_read.py) refuses, 3 for damaged evidence (the page
names it); the host file's bytes never in report.html. The report runs in a
session of its own, under a memory cap (MEMORY_CAP: /dev/zero read whole
would take the host's memory) and a time limit (a FIFO opened for reading
blocks for good).
"""
from __future__ import annotations

import base64
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.reliability_sections import Section, Tally
from sandbox.base import evidence as files
from sandbox.base import paths
from sandbox.base.evidence import Evidence, Session
from sandbox.base.evidence_read import LIMITS

RUN = Path("clock-rollover") / "x86_64"
"""The run of the baseline folder, under the results folder."""
SCENARIO = paths.SCENARIOS / "clock" / "rollover.toml"
SECRET = b"HOST-SECRET-7f3a: a host file that must never reach the page\n"
REPORT_SECONDS = 60.0
"""Limit of one `report` (it answers in 1-3 s; on this shared machine starting Python took 5 s)."""
MEMORY_CAP = 4 << 30
"""Address space of one `report` (it needs ~300 MB)."""
REFUSED, DAMAGED = 2, 3
"""Exit codes: a file the bounded reader refuses; damaged evidence, named on the page."""
DEEP = "[" * 200_000 + "]" * 200_000
HUGE = "9" * 400


def _run_json(**changes: object) -> str:
    record = {"scenario": "clock/rollover", "machine": "x86_64", "accel": "tcg", "outcome": "completed",
              "detail": "", "release": "6.1.192+", "boot_seconds": 1.5, "commands": [], "findings": [],
              "userlands": []}
    return json.dumps({**record, **changes})


@dataclass(frozen=True)
class Where:
    """A case's paths: the run's folder and a host file outside the results folder."""

    run: Path
    secret: Path


@dataclass(frozen=True)
class EvidenceCase:
    name: str
    make: Callable[[Where], None]
    exit: int  # REFUSED or DAMAGED
    says: str  # in the one error line


def _write(name: str, text: str) -> Callable[[Where], None]:
    def make(w: Where) -> None:
        (w.run / name).write_text(text)
    return make


def _link(name: str, target: str | None = None) -> Callable[[Where], None]:
    def make(w: Where) -> None:
        (w.run / name).unlink(missing_ok=True)
        (w.run / name).symlink_to(target or w.secret)
    return make


def _fifo(name: str) -> Callable[[Where], None]:
    def make(w: Where) -> None:
        (w.run / name).unlink(missing_ok=True)
        os.mkfifo(w.run / name)
    return make


def _sparse(name: str, size: int) -> Callable[[Where], None]:
    def make(w: Where) -> None:
        with (w.run / name).open("wb") as out:
            out.truncate(size)
    return make


def _chart_file(value: Callable[[Where], str]) -> Callable[[Where], None]:
    """charts.json's first "file" set to `value` (its key kept, so the page takes it)."""
    def make(w: Where) -> None:
        index = json.loads((w.run / files.CHARTS).read_text())
        index["charts"][0]["file"] = value(w)
        (w.run / files.CHARTS).write_text(json.dumps(index))
    return make


def _dotdot(w: Where) -> str:
    (w.run.parent / "x").write_bytes(SECRET)
    return "../x"


def _scenario(old: str, new: str) -> Callable[[Where], None]:
    def make(w: Where) -> None:
        text = (w.run / files.SCENARIO_COPY).read_text()
        assert old in text
        (w.run / files.SCENARIO_COPY).write_text(text.replace(old, new, 1))
    return make


def _host_json(name: str) -> Callable[[Where], None]:
    """`name` a link to a host JSON file that looks like ours, holding the secret."""
    def make(w: Where) -> None:
        w.secret.write_text(json.dumps({"scenario": "clock/rollover", "machine": "x86_64", "outcome": "completed",
                                        "command": SECRET.decode(), "detail": SECRET.decode()}))
        folder = w.run.parents[1] if name == files.SESSION else w.run  # session.json: the results folder's
        (folder / name).unlink(missing_ok=True)
        (folder / name).symlink_to(w.secret)
    return make


CASES: tuple[EvidenceCase, ...] = (
    EvidenceCase("chart-1.png a link to a host file", _link(files.chart(1)), REFUSED,
                 "chart-1.png: file: a symbolic link"),
    EvidenceCase("charts.json file: the host file's absolute path", _chart_file(lambda w: str(w.secret)), REFUSED,
                 "charts[0].file: "),
    EvidenceCase('charts.json file: "/etc/shadow"', _chart_file(lambda w: "/etc/shadow"), REFUSED,
                 "charts[0].file: '/etc/shadow' is not one plain file name"),
    EvidenceCase('charts.json file: "../x"', _chart_file(_dotdot), REFUSED, "charts[0].file: '../x' is not"),
    EvidenceCase("run.json a link to a host JSON file", _host_json(files.RUN), REFUSED, "run.json: file: a symbolic link"),
    EvidenceCase("session.json a link to a host JSON file", _host_json(files.SESSION), REFUSED,
                 "session.json: file: a symbolic link"),
    EvidenceCase("scenario.toml a link to a host file", _link(files.SCENARIO_COPY), REFUSED,
                 "scenario.toml: file: a symbolic link"),
    EvidenceCase("observations.jsonl a FIFO", _fifo(files.OBSERVATIONS), REFUSED, "a FIFO, not a regular file"),
    EvidenceCase("chart-1.png a FIFO", _fifo(files.chart(1)), REFUSED, "a FIFO, not a regular file"),
    EvidenceCase("observations.jsonl a link to /dev/zero", _link(files.OBSERVATIONS, "/dev/zero"), REFUSED,
                 "observations.jsonl: file: a symbolic link"),
    EvidenceCase("chart-1.png a link to /dev/zero", _link(files.chart(1), "/dev/zero"), REFUSED,
                 "chart-1.png: file: a symbolic link"),
    EvidenceCase("facts.json past its cap (sparse)", _sparse(files.FACTS, LIMITS[files.FACTS] + 1), REFUSED,
                 f"past the cap of {LIMITS[files.FACTS]} bytes"),
    EvidenceCase("chart-1.png past its cap (sparse)", _sparse(files.chart(1), LIMITS["chart"] + 1), REFUSED,
                 f"past the cap of {LIMITS['chart']} bytes"),
    EvidenceCase("run.json 200,000-deep arrays", _write(files.RUN, DEEP), REFUSED, "run.json: json: nested more than"),
    EvidenceCase("observations.jsonl a 200,000-deep line", _write(files.OBSERVATIONS, DEEP + "\n"), REFUSED,
                 "observations.jsonl: line 1: nested more than"),
    EvidenceCase("verdicts.json 200,000-deep arrays", _write(files.VERDICTS, DEEP), REFUSED,
                 "verdicts.json: json: nested more than"),
    EvidenceCase("run.json boot_seconds NaN", _write(files.RUN, _run_json().replace("1.5", "NaN")), REFUSED,
                 "run.json: boot_seconds: NaN is not a JSON number"),
    EvidenceCase("observations.jsonl a value Infinity",
                 _write(files.OBSERVATIONS, '{"scenario": "clock/rollover", "machine": "x86_64", "step": 1, '
                        '"phase": "p", "flavour": "f", "call": "time", "seconds": Infinity}\n'), REFUSED,
                 "observations.jsonl: line 1.seconds: Infinity is not a JSON number"),
    EvidenceCase("run.json boot_seconds a 400-digit integer", _write(files.RUN, _run_json().replace("1.5", HUGE)),
                 REFUSED, "run.json: boot_seconds: an integer of 400 digits"),
    EvidenceCase("verdicts.json a 5,000-digit step",
                 _write(files.VERDICTS, '[{"step": ' + "9" * 5000 + ', "phase": "p", "flavour": "f", "call": "c", '
                        '"field": "x", "expected": "1", "observed": "1", "passed": true}]'), REFUSED,
                 "verdicts.json: [0].step: an integer of 5000 digits"),
    EvidenceCase("scenario.toml timeout = nan", _scenario("\ntimeout = 120\n", "\ntimeout = nan\n"), REFUSED,
                 "scenario.toml: timeout: nan is not a finite number"),
    EvidenceCase("scenario.toml timeout a 400-digit integer", _scenario("\ntimeout = 120\n", f"\ntimeout = {HUGE}\n"),
                 REFUSED, "scenario.toml: timeout: an integer of 400 digits"),
    EvidenceCase("run.json null", _write(files.RUN, "null"), DAMAGED, "run.json is null, not a run's record"),
    EvidenceCase("run.json a list", _write(files.RUN, '["clock/rollover", "completed"]'), DAMAGED,
                 "run.json is a JSON list, not a run's record"),
    EvidenceCase("run.json another tool's JSON", _write(files.RUN, '{"name": "left-pad", "version": "1.3.0"}'),
                 DAMAGED, "run.json has no scenario, machine"),
    EvidenceCase("run.json without outcome or state",
                 _write(files.RUN, '{"scenario": "clock/rollover", "machine": "x86_64"}'), DAMAGED,
                 "run.json has neither outcome nor state"),
    EvidenceCase("run.json commands: 5", _write(files.RUN, _run_json(commands=5)), DAMAGED,
                 "run.json: commands: not of a run's record's shape"),
    EvidenceCase("verdicts.json an object", _write(files.VERDICTS, '{"passed": true}'), DAMAGED,
                 "verdicts.json is not a list of verdicts"),
    EvidenceCase('facts.json kernel: "x"', _write(files.FACTS, '{"kernel": "x"}'), DAMAGED,
                 "facts.json: kernel: not of a run's facts's shape"),
)


def baseline(results: Path) -> Path:
    """A sound results folder: one completed run of clock/rollover with its
    scenario copy, facts and a kept chart (`just report` on it: exit 0)."""
    from sandbox.report import chart_files, timeline
    from sandbox.report.evidence import default_reader, read_run
    run = Evidence(results / RUN)
    Session(results).write_json(files.SESSION, {"command": "sandbox run", "started": "2026-12-07T20:00:00Z"})
    run.write(files.SCENARIO_COPY, SCENARIO.read_text())
    run.write(files.RUN, _run_json())
    run.write(files.OBSERVATIONS, "")
    run.write_json(files.VERDICTS, [])
    run.write_json(files.FACTS, {"scenario_file": "scenarios/clock/rollover.toml", "kernel": {}, "initramfs": {}})
    chart_files.save(read_run(run.folder, default_reader()), [timeline.Chart("clock", b"\x89PNG kept", "a chart")])
    return results


@dataclass(frozen=True)
class Outcome:
    case: EvidenceCase
    code: int | None  # None: no answer within REPORT_SECONDS
    error: str  # stderr, progress lines left out
    leaked: bool  # the host file's bytes in report.html

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.error

    @property
    def lines(self) -> list[str]:
        return [line for line in self.error.splitlines() if line.strip()]

    @property
    def right(self) -> bool:
        return (self.code == self.case.exit and not self.leaked and len(self.lines) == 1
                and self.lines[0].startswith("error: ") and self.case.says in self.lines[0])

    @property
    def shown(self) -> str:
        if self.code is None:
            return "hang"
        if self.traceback:
            return f"traceback (exit {self.code})"
        return f"exit {self.code}" + (", host file in the page" if self.leaked else "")


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def report(folder: Path, repo: Path = paths.REPO) -> tuple[int | None, str]:
    """`python3 -m sandbox report folder` of `repo`'s code in a session of its
    own, capped; (exit code or None when it did not answer, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(repo), Y2038_RESULTS=str(folder.parent))
    proc = subprocess.Popen([sys.executable, "-m", "sandbox", "report", str(folder)], env=env, cwd=repo,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_capped)
    try:
        _, err = proc.communicate(timeout=REPORT_SECONDS)
        return proc.returncode, err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, ""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def leaked(page: Path) -> bool:
    try:
        text = page.read_bytes()
    except OSError:
        return False
    return SECRET.strip() in text or base64.b64encode(SECRET) in text or b"HOST-SECRET" in text


def try_case(case: EvidenceCase, folder: Path, base: Path, repo: Path = paths.REPO) -> Outcome:
    """`case` made in a copy of the sound folder `base`, under `folder`, and reported on."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    results = folder / "results"
    shutil.copytree(base, results, symlinks=True)
    where = Where(results / RUN, folder / "host-secret.txt")
    where.secret.write_bytes(SECRET)
    case.make(where)
    code, error = report(results, repo)
    shown = "\n".join(line for line in error.splitlines() if not line.startswith("==>"))
    return Outcome(case, code, shown, leaked(results / files.PAGE))


def measure(folder: Path, boot: bool) -> Section:
    """Every case of CASES (no boot: `report` reads the folder only)."""
    base = baseline(folder / "baseline")
    outcomes = [try_case(case, folder / f"case-{n}", base) for n, case in enumerate(CASES)]
    rows = [[o.case.name, f"exit {o.case.exit}: {o.case.says}", o.shown,
             "right" if o.right else (o.lines[-1][:120] if o.lines else "no error line")] for o in outcomes]
    tally = Tally(tracebacks=sum(o.traceback for o in outcomes), hangs=sum(o.code is None for o in outcomes),
                  false_passes=sum(o.code == 0 or o.leaked for o in outcomes))
    return Section("Evidence folders given to `just report`", ["case", "goal", "outcome", "error line"], rows, tally,
                   "Each case damages one file of a sound results folder (one run, no boot) and runs "
                   "`python3 -m sandbox report` on it with a 4 GiB memory cap and a 60 s limit "
                   "(sandbox/app/reliability_evidence.py). A host file's bytes in report.html, or exit 0, is a "
                   "false pass.")
