"""A results folder read back: every run's evidence, as the page needs it.

    results/<stamp>-<label>/
        session.json                       the invocation (sandbox/app/facts.py): packages, git
        junit.xml                          a pytest session's
        <scenario-slug>/<machine>/
            run.json                       outcome, release, boot time, commands (sandbox/run/record.py)
            observations.jsonl, verdicts.json, console.log, kernel.log, agent.log, ...
            facts.json                     kernel build info, initramfs, accelerator, timings
            scenario.toml                  the scenario file as it ran (its comments explain the cells)

Folders of older runs lack facts.json and scenario.toml: the scenario is
then read from the repository and the kernel facts are left out. Nothing
here boots or judges: the verdicts are the ones written at run time.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.base import evidence as files
from sandbox.base.errors import SandboxError
from sandbox.base.paths import SCENARIOS
from sandbox.judge.evaluate import Verdict
from sandbox.run.observations import Observation
from sandbox.scenario.catalogue import Catalogue
from sandbox.scenario.model import Scenario
from sandbox.scenario.userlands import Userlands

RUN_FILE = files.RUN
FACTS_FILE = files.FACTS
SCENARIO_COPY = files.SCENARIO_COPY
SESSION_FILE = files.SESSION
EVIDENCE_FILES = files.FILES
"""The files a run leaves, in the order the page links them."""


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
        """Killed, or evidence damaged: what `just report` exits non-zero for."""
        return self.outcome == files.KILLED or bool(self.damage)

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

    @property
    def junit(self) -> Path | None:
        path = self.folder / files.JUNIT
        return path if path.is_file() else None


def _json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text("utf-8", "replace"))
    except (OSError, ValueError):
        return default


def _observations(path: Path) -> tuple[tuple[Observation, ...], str]:
    """The observations, and why some could not be read ("" when all could):
    a torn last line of a run that died is named, the rest still counts."""
    found, bad = [], []
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return (), ""
    for number, line in enumerate(lines, 1):
        try:
            found.append(Observation.from_record(json.loads(line)))
        except ValueError:
            bad.append(number)
    if not bad:
        return tuple(found), ""
    torn = " (truncated)" if bad == [len(lines)] else ""
    return tuple(found), f"{path.name}: line {', '.join(map(str, bad[:5]))} of {len(lines)} is not an observation{torn}"


def _verdicts(path: Path) -> tuple[Verdict, ...] | None:
    raw = _json(path, None)
    if not isinstance(raw, list):
        return None
    try:
        return tuple(Verdict(**item) for item in raw)
    except TypeError:
        return None


class ScenarioReader:
    """Scenarios by name, from a run's copy of its file or the repository's;
    each text parsed once."""

    def __init__(self, catalogue: Catalogue, machines: dict[str, tuple[str, ...]],
                 scenarios: Path = SCENARIOS, userlands: Userlands | None = None) -> None:
        self.catalogue = catalogue
        self.machines = machines
        self.scenarios = scenarios
        self.userlands = userlands  # the userland table run steps name (sandbox/scenario/userlands.py)
        self._parsed: dict[tuple[str, str], tuple[Scenario, ...]] = {}

    def read(self, name: str, folder: Path, facts: dict[str, Any]) -> tuple[Scenario | None, str, str]:
        """(scenario, its file's text, the problem when there is no scenario)."""
        from sandbox.scenario.parser import parse_scenarios  # the parser only when a page is built
        base = name.split("[", 1)[0]
        file = str(facts.get("scenario_file") or f"scenarios/{base}.toml")
        copy = folder / SCENARIO_COPY
        source = copy if copy.is_file() else self.scenarios / f"{base}.toml"
        try:
            text = source.read_text("utf-8")
        except OSError as err:
            return None, "", f"scenario file not found ({source}: {err.strerror or err})"
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
            return None, text, f"no scenario named {name} in {source}"
        return chosen[0], text, ""


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
    info = _json(folder / RUN_FILE, {})
    if not isinstance(info, dict):
        info = {}
    facts = _json(folder / FACTS_FILE, {})
    name = str(info.get("scenario", folder.parent.name))
    scenario, text, problem = reader.read(name, folder, facts)
    observations, torn = _observations(folder / files.OBSERVATIONS)
    damage = tuple(reason for reason in (files.damage(folder / RUN_FILE), torn) if reason)
    return RunEvidence(folder, info, observations, _verdicts(folder / files.VERDICTS), scenario, text, facts,
                       problem, damage)


def run_folders(results: Path) -> list[Path]:
    """Every folder of `results` with a run.json, in a stable order."""
    return sorted(p.parent for p in results.rglob(RUN_FILE))


def read_results(results: Path, reader: ScenarioReader) -> ResultsEvidence:
    if not results.is_dir():
        raise SandboxError(f"{results}: not a results folder")
    runs = tuple(read_run(folder, reader) for folder in run_folders(results))
    return ResultsEvidence(results, runs, _json(results / SESSION_FILE, {}))


def newest_results(root: Path) -> Path:
    """The newest results folder under `root` that holds at least one run."""
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True) \
        if root.is_dir() else []  # <stamp>-<label>: the name sorts by time
    for folder in folders:
        if any(folder.rglob(RUN_FILE)):
            return folder
    raise SandboxError(f"no results folder with a run under {root}")
