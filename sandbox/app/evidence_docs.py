"""The docs generated from runs' evidence: docs/real-programs.md
(scenarios/programs/) and the faketime table of docs/clock-sources.md
(scenarios/faketime/), each from results folders, without booting.

    runs_in(folders) -> [SavedRun]        every run.json under the folders,
                                          with its scenario and observations
    programs_doc(folders) -> Path         docs/real-programs.md, whole
    faketime_doc(folders) -> Path         docs/clock-sources.md, its table
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base import paths
from sandbox.base.errors import SandboxError
from sandbox.report import faketime, programs
from sandbox.run.observations import Observation
from sandbox.scenario import suite
from sandbox.scenario.model import RunStep, Scenario

FAKETIME_DOC = paths.REPO / "docs" / "clock-sources.md"
SHOWN_PACKAGES = ("libfaketime", "libc6")  # the versions the faketime table names


@dataclass(frozen=True)
class SavedRun:
    run: dict[str, object]  # run.json
    scenario: Scenario
    observations: tuple[Observation, ...]


def runs_in(folders: Sequence[Path]) -> Iterator[SavedRun]:
    """The runs kept in results folders (<folder>/<scenario>/<machine>/run.json)
    of the repository's scenarios, with the scenario as it is parsed today."""
    scenarios = {s.name: s for s in suite.load_all(suite.scenario_files())}
    for folder in folders:
        for run_json in sorted(folder.glob(f"*/*/{files.RUN}")):
            run = json.loads(run_json.read_text())
            scenario = scenarios.get(str(run.get("scenario")))
            if scenario is None:
                continue
            lines = (run_json.parent / files.OBSERVATIONS).read_text().splitlines()
            yield SavedRun(run, scenario, tuple(Observation.from_record(json.loads(line)) for line in lines))


def programs_doc(folders: Sequence[Path]) -> Path:
    sections = [programs.markdown(r.scenario, r.observations, str(r.run["machine"]), r.run["userlands"])  # type: ignore[arg-type]  # run.json: dicts
                for r in runs_in(folders)
                if r.run.get("userlands") and any(isinstance(s, RunStep) for s in r.scenario.steps)]
    if not sections:
        raise SandboxError(f"no run of a scenario with run steps in {', '.join(map(str, folders))}")
    target = paths.REPO / "docs" / "real-programs.md"
    target.write_text(programs.DOC_HEAD + "\n".join(sections))
    return target


def _packages(run: dict[str, object]) -> dict[str, str]:
    """userland -> "libfaketime 0.9.10-2.1, libc6 2.36-9+deb12u14", from run.json."""
    found = {}
    userlands = run.get("userlands")
    for userland in userlands if isinstance(userlands, list) else []:
        versions = [str(p) for p in userland.get("packages", [])]
        shown = [p.split(":")[0] + " " + p.split("=", 1)[1] for p in versions if p.split(":")[0] in SHOWN_PACKAGES]
        found[str(userland.get("name"))] = ", ".join(shown)
    return found


def faketime_doc(folders: Sequence[Path], target: Path = FAKETIME_DOC) -> Path:
    """The faketime table of docs/clock-sources.md, between its markers."""
    runs = [faketime.Run(str(r.run["machine"]), r.scenario, r.observations, _packages(r.run))
            for r in runs_in(folders) if faketime.pairs(r.scenario)]
    if not runs:
        raise SandboxError(f"no run of a scenario with faketime steps in {', '.join(map(str, folders))}")
    try:
        target.write_text(faketime.replace_table(target.read_text(), faketime.markdown(runs)))
    except ValueError as err:
        raise SandboxError(f"{target}: {err}") from None
    return target
