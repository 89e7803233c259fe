"""A results folder read back: every run's evidence, as the page needs it.

    results/<stamp>-<label>/
        session.json                       the invocation (sandbox/app/facts.py): packages, git
        junit.xml                          a pytest session's
        <scenario-slug>/<machine>/
            run.json                       outcome, release, boot time, commands (sandbox/run/record.py)
            observations.jsonl, verdicts.json, console.log, kernel.log, agent.log, ...
            facts.json                     kernel build info, initramfs, accelerator, timings
            scenario.toml                  the scenario file as it ran (its comments explain the cells)

Every file is read through sandbox/base/evidence_read.py: regular files
inside the folder only, each to its cap, JSON bounded; what it refuses is
one InputError (exit 2). A damaged file (cut short, not a run's) is named
in the run's `damage` (`just report` exits 3). The scenario is read from
the run's own scenario.toml only (a run writes it when it starts); a
folder without one is shown without its matrix, and one without facts.json
without the kernel facts. Nothing here boots or judges: the verdicts are
the ones written at run time.
"""
from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.base import evidence as files
from sandbox.base import evidence_read as read
from sandbox.base.errors import InputError, SandboxError
from sandbox.judge.evaluate import Verdict
from sandbox.run.observations import Observation
from sandbox.run.record import INTERRUPTED
from sandbox.scenario.catalogue import Catalogue
from sandbox.scenario.model import Scenario
from sandbox.scenario.userlands import Userlands

RUN_FILE = files.RUN
FACTS_FILE = files.FACTS
SCENARIO_COPY = files.SCENARIO_COPY
SESSION_FILE = files.SESSION
EVIDENCE_FILES = files.FILES
"""The files a run leaves, in the order the page links them."""
DEATHS = (files.KILLED, INTERRUPTED)
"""The outcomes of a run whose process was stopped by a signal (sandbox/run/record.py INTERRUPTED)."""


@dataclass(frozen=True)
class RunEvidence:
    """One scenario on one machine, as its folder tells it."""

    folder: Path
    info: dict[str, Any]  # run.json
    observations: tuple[Observation, ...]
    verdicts: tuple[Verdict, ...] | None  # None: not judged (the guest did not complete)
    scenario: Scenario | None  # None: its file could not be read (problem says why)
    scenario_text: str = ""
    facts: dict[str, Any] = field(default_factory=dict)
    problem: str = ""
    damage: tuple[str, ...] = ()  # why run.json or observations.jsonl cannot be read whole

    @property
    def name(self) -> str:
        return str(self.info.get("scenario", self.folder.parent.name))

    @property
    def machine(self) -> str:
        return str(self.info.get("machine", self.folder.name))

    @property
    def outcome(self) -> str:
        """The run's outcome; `running`, or `killed` when its process is gone
        before writing one (sandbox/base/evidence.py); `unknown` for a run.json
        that cannot be read (damage says why)."""
        return files.state_of(self.info)

    @property
    def ended_badly(self) -> bool:
        """Killed, interrupted by a signal, or evidence damaged: what `just
        report` exits non-zero for (a run that did not complete is never a
        clean page)."""
        return self.outcome in DEATHS or bool(self.damage)

    @property
    def completed(self) -> bool:
        return self.outcome == "completed"

    @property
    def failures(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts or () if not v.passed)

    @property
    def passed(self) -> bool:
        return self.completed and self.verdicts is not None and not self.failures and not self.damage

    @property
    def state(self) -> str:
        """PASSED, FAILED (an expectation), or the outcome in capitals (PANIC, HANG, STEP-FAILED)."""
        if self.passed:
            return "PASSED"
        return "FAILED" if self.completed else self.outcome.upper()

    @property
    def slug(self) -> str:
        return f"{self.folder.parent.name}-{self.folder.name}"


@dataclass(frozen=True)
class ResultsEvidence:
    folder: Path
    runs: tuple[RunEvidence, ...]
    session: dict[str, Any]
    damage: tuple[str, ...] = ()  # why session.json cannot be read whole

    @property
    def junit(self) -> Path | None:
        return self.folder / files.JUNIT if read.regular(self.folder, files.JUNIT) else None


def _document(folder: Path, name: str) -> tuple[Any, str]:
    """(a JSON file's document, "") or (None, why it is damaged); (None, "")
    when it is missing. A value past the reader's bounds is an InputError."""
    data = read.read_bytes(folder, name)
    if data is None:
        return None, ""
    why = read.damage(name, data)
    return (None, why) if why else (read.loads(data.decode("utf-8"), str(folder / name)), "")


def _shape(document: Any, name: str, fields: dict[str, Callable[[Any], bool]], required: tuple[str, ...],
           what: str) -> tuple[dict[str, Any], str]:
    """The object's fields that have their shape, and why it is damaged ("" when
    not): not an object, a required key missing, a field of another type."""
    if not isinstance(document, dict):
        return {}, f"{name} is {_kind(document)}, not {what}"
    missing = [key for key in required if key not in document]
    if missing:
        return {}, f"{name} has no {', '.join(missing)}: not {what}"
    bad = [key for key, test in fields.items() if key in document and not test(document[key])]
    kept = {key: value for key, value in document.items() if key not in bad}
    return kept, (f"{name}: {', '.join(bad)}: not of {what}'s shape" if bad else "")


def _kind(value: Any) -> str:
    return "null" if value is None else f"a JSON {type(value).__name__}".replace("dict", "object")


def _is(*types: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, types) and not (isinstance(value, bool) and bool not in types)


def _objects(**fields: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A list of objects whose named fields, where present, pass their test."""
    return lambda value: isinstance(value, list) and all(
        isinstance(item, dict) and all(test(item[k]) for k, test in fields.items() if k in item) for item in value)


_TEXT, _NUMBER, _LIST, _OBJECT = _is(str), _is(int, float), _is(list), _is(dict)
RUN_FIELDS: dict[str, Callable[[Any], bool]] = {
    "scenario": _TEXT, "machine": _TEXT, "outcome": _TEXT, "state": _TEXT, "detail": _TEXT, "release": _TEXT,
    "accel": _TEXT, "boot_seconds": _NUMBER, "pid": _is(int), "pid_start": _TEXT, "findings": _LIST,
    "commands": _objects(step=_is(int), shell=_TEXT), "userlands": _LIST,
}
"""run.json's fields the page reads (sandbox/run/record.py writes them), each with its shape."""
FACTS_FIELDS: dict[str, Callable[[Any], bool]] = {
    "scenario_file": _TEXT, "tree": _is(str, type(None)), "started": _TEXT, "wall_seconds": _NUMBER,
    "initramfs": _OBJECT,
    "kernel": lambda k: isinstance(k, dict) and isinstance(k.get("series", []), list)
    and isinstance(k.get("fragments", []), list),
}
"""facts.json's (sandbox/app/facts.py)."""
VERDICT_FIELDS: dict[str, Callable[[Any], bool]] = {
    "step": _is(int), "phase": _TEXT, "flavour": _TEXT, "call": _TEXT, "field": _TEXT, "expected": _TEXT,
    "observed": _TEXT, "passed": _is(bool)}


def _run_info(folder: Path) -> tuple[dict[str, Any], str]:
    """run.json's fields, and why it is damaged: missing, cut short, or not a
    run's (null, a list, another tool's JSON: no scenario, machine, outcome or state)."""
    data = read.read_bytes(folder, RUN_FILE)
    why = read.damage(RUN_FILE, data)
    if why:
        return {}, why
    assert data is not None
    document = read.loads(data.decode("utf-8"), str(folder / RUN_FILE))
    info, why = _shape(document, RUN_FILE, RUN_FIELDS, ("scenario", "machine"), "a run's record")
    if not why and "outcome" not in info and "state" not in info:
        why = f"{RUN_FILE} has neither outcome nor state: not a run's record"
    return info, why


def _facts(folder: Path) -> tuple[dict[str, Any], str]:
    document, why = _document(folder, FACTS_FILE)
    if document is None:
        return {}, why
    return _shape(document, FACTS_FILE, FACTS_FIELDS, (), "a run's facts")


def _observations(folder: Path) -> tuple[tuple[Observation, ...], str]:
    """The observations, and why some could not be read ("" when all could):
    a torn last line of a run that died is named, the rest still counts. A
    line past the reader's bounds (NaN, nested 200,000 deep) is an InputError."""
    text = read.read_text(folder, files.OBSERVATIONS)
    if text is None:
        return (), ""
    found, bad = [], []
    lines = text.splitlines()
    file = str(folder / files.OBSERVATIONS)
    for number, line in enumerate(lines, 1):
        try:
            record = read.loads(line, file, f"line {number}")
            found.append(Observation.from_record(record if isinstance(record, dict) else {}))
        except (read.NotJson, ValueError):
            bad.append(number)
    if not bad:
        return tuple(found), ""
    torn = " (truncated)" if bad == [len(lines)] else ""
    return tuple(found), f"{files.OBSERVATIONS}: line {', '.join(map(str, bad[:5]))} of {len(lines)} is not an observation{torn}"


def _verdicts(folder: Path) -> tuple[tuple[Verdict, ...] | None, str]:
    """The verdicts written at run time (None: the run was not judged), and why they are damaged."""
    document, why = _document(folder, files.VERDICTS)
    if document is None:
        return None, why
    if not _objects(**VERDICT_FIELDS)(document):
        return None, f"{files.VERDICTS} is not a list of verdicts"
    try:
        return tuple(Verdict(**item) for item in document), ""
    except TypeError:  # a key missing or one too many
        return None, f"{files.VERDICTS} is not a list of verdicts"


class ScenarioReader:
    """Scenarios from a run's own copy of its file (scenario.toml, written when
    the run starts), never from the repository: a folder someone sent is
    shown as it ran, and a name in it cannot pick a file to read. Each text
    parsed once."""

    def __init__(self, catalogue: Catalogue, machines: dict[str, tuple[str, ...]],
                 userlands: Userlands | None = None) -> None:
        self.catalogue = catalogue
        self.machines = machines
        self.userlands = userlands  # the userland table run steps name (sandbox/scenario/userlands.py)
        self._parsed: dict[tuple[str, str], tuple[Scenario, ...]] = {}

    def read(self, name: str, folder: Path, facts: dict[str, Any]) -> tuple[Scenario | None, str, str]:
        """(scenario, its file's text, the problem when there is no scenario)."""
        from sandbox.scenario.parser import parse_scenarios  # the parser only when a page is built
        data = read.read_bytes(folder, SCENARIO_COPY)
        if data is None:
            return None, "", f"no {SCENARIO_COPY} in {folder}: the run kept no copy of its scenario file"
        copy = str(folder / SCENARIO_COPY)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(copy, "toml", f"not UTF-8 text: {err}") from None
        bounded_numbers(text, copy)
        file = str(facts.get("scenario_file") or f"scenarios/{name.split('[', 1)[0]}.toml")
        key = (file, text)
        if key not in self._parsed:
            try:
                self._parsed[key] = (parse_scenarios(text, file, self.catalogue, self.machines, self.userlands)
                                     if self.userlands is not None else
                                     parse_scenarios(text, file, self.catalogue, self.machines))
            except SandboxError as err:
                self._parsed[key] = ()
                return None, text, f"the scenario file no longer parses: {err}"
        chosen = [s for s in self._parsed[key] if s.name == name]
        if not chosen:
            return None, text, f"no scenario named {name} in {copy}"
        return chosen[0], text, ""


def bounded_numbers(text: str, file: str) -> None:
    """A scenario copy's numbers: finite, integers within 64 bits (what the
    bounded JSON reader holds evidence to); else InputError naming the key.
    A text that is not TOML is left to the parser, which names why."""
    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return
    found = read.first(document, _bad_number)
    if found is not None:
        key, value = found
        why = (f"{value} is not a finite number" if isinstance(value, float)
               else f"an integer of {len(str(abs(value)))} digits, past 64 bits")
        raise InputError(file, key.lstrip("."), why)


def _bad_number(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool) and not -2**64 < value < 2**64


def default_reader() -> ScenarioReader:
    """Scenarios checked against the repository's catalogue and machines."""
    from sandbox.scenario import suite
    try:
        from sandbox.scenario.userlands import load_userlands
        userlands = load_userlands()
    except (ImportError, SandboxError, OSError):
        userlands = None
    return ScenarioReader(suite.catalogue(), suite.machine_flavours(), userlands=userlands)


def read_run(folder: Path, reader: ScenarioReader) -> RunEvidence:
    """One run's evidence: damaged files named in `damage`; a file the bounded
    reader refuses (a link, a FIFO, past its cap, NaN) an InputError."""
    info, damaged = _run_info(folder)
    facts, bad_facts = _facts(folder)
    name = str(info.get("scenario", folder.parent.name))
    scenario, text, problem = reader.read(name, folder, facts)
    observations, torn = _observations(folder)
    verdicts, bad_verdicts = _verdicts(folder)
    damage = tuple(reason for reason in (damaged, torn, bad_verdicts, bad_facts) if reason)
    return RunEvidence(folder, info, observations, verdicts, scenario, text, facts, problem, damage)


def run_folders(results: Path) -> list[Path]:
    """Every folder of `results` with a run.json, in a stable order (rglob
    follows no symbolic link to a folder)."""
    return sorted(p.parent for p in results.rglob(RUN_FILE))


def read_results(results: Path, reader: ScenarioReader) -> ResultsEvidence:
    if not results.is_dir():
        raise SandboxError(f"{results}: not a results folder")
    runs = tuple(read_run(folder, reader) for folder in run_folders(results))
    session, why = _document(results, SESSION_FILE)
    if session is not None and not isinstance(session, dict):
        session, why = None, f"{SESSION_FILE} is {_kind(session)}, not an object"
    return ResultsEvidence(results, runs, session or {}, (why,) if why else ())


def newest_results(root: Path) -> Path:
    """The newest results folder under `root` that holds at least one run."""
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True) \
        if root.is_dir() else []  # <stamp>-<label>: the name sorts by time
    for folder in folders:
        if any(folder.rglob(RUN_FILE)):
            return folder
    raise SandboxError(f"no results folder with a run under {root}")
