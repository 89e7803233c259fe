"""A results folder built from captured runs, without booting, for the report tests.

- clock/rollover on x86_64 goes through the real path (sandbox.app.jobs.run_and_judge)
  with the replay guest and the captured `just demo` transcript, so it leaves
  every evidence file and its facts; with `failing`, the scenario file is a
  copy whose time32-libc `time` expects EINVAL, so one expectation fails;
- the other demo scenarios are the observations of a captured `just demo`
  (pytest/data/demo, pytest/data/filetimes), judged and written as a run
  without console logs, as an older results folder has them;
- with `panic`, guide/clock-2040 replays a guest that panics half way.
"""
from __future__ import annotations

import json
from pathlib import Path

from replay_guest import DATA, ReplayGuest, captured

from sandbox.app.verbs import DEMO_SCENARIOS
from sandbox.app.facts import keep_scenario, write_session
from sandbox.app.jobs import run_and_judge, write_judgement
from sandbox.base.machines import MACHINES
from sandbox.base.paths import SCENARIOS
from sandbox.build.initramfs import InitramfsArtifact
from sandbox.build.kernel import KernelArtifact
from sandbox.guest.accel import AccelChoice
from sandbox.guest.qemu import BootRequest
from sandbox.guest.target import Target
from sandbox.judge.evaluate import evaluate
from sandbox.judge.judged import JudgedRun
from sandbox.run.observations import Observation
from sandbox.run.record import COMPLETED, RunRecord, write_evidence
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario

MACHINE = "x86_64"
WRONG = ('time          = { errno = "EOVERFLOW" }', 'time          = { errno = "EINVAL" }')
KERNEL_INFO = {"key": "ff10261ea1dc9517", "machine": MACHINE, "variant": "series", "debian_version": "6.1.192-3",
               "branch": "series-da23c9d7d5f0", "series": ["0001-rtc.patch", "0002-time.patch"],
               "fragments": ["common.config", "x86_64.config", "series.config"],
               "built_at": "2026-12-03T15:02:42Z", "build_seconds": 500.2}


def fake_target() -> Target:
    kernel = KernelArtifact(KERNEL_INFO["key"], Path("/k"), Path("/k/vmlinux"), Path("/k/config"),
                            dict(KERNEL_INFO))
    return Target(MACHINES[MACHINE], kernel, InitramfsArtifact(Path("/i/initramfs.cpio"), "e32d59cd226c11d6"),
                  AccelChoice("tcg", "replayed"))


def _replay(transcript: list[str], console: str, ending: str = "died"):
    def start(request: BootRequest) -> ReplayGuest:
        return ReplayGuest(request, transcript, console, ending)
    return start


def rollover(tmp: Path, failing: bool) -> Scenario:
    """clock/rollover, or a copy with one wrong expectation."""
    original = SCENARIOS / "clock" / "rollover.toml"
    if not failing:
        return suite.load(original)
    folder = tmp / "scenarios" / "clock"
    folder.mkdir(parents=True, exist_ok=True)
    text = original.read_text().replace(*WRONG, 1)
    assert text != original.read_text()
    (folder / "rollover.toml").write_text(text)
    return suite.load(folder / "rollover.toml")


def observations_of(path: Path, scenario: Scenario) -> tuple[Observation, ...]:
    found = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        record.update(scenario=scenario.name, machine=MACHINE)
        found.append(Observation.from_record(record))
    return tuple(found)


def captured_observations(scenario: Scenario) -> tuple[Observation, ...]:
    if scenario.variant:
        return observations_of(DATA / "filetimes" / f"{scenario.variant}.jsonl", scenario)
    return observations_of(DATA / "demo" / f"{scenario.slug}.jsonl", scenario)


def write_observed(results: Path, scenario: Scenario) -> JudgedRun:
    """A completed run of `scenario` from its captured observations."""
    evidence = results / scenario.slug / MACHINE
    evidence.mkdir(parents=True)
    keep_scenario(scenario, evidence)  # what a run keeps from its start
    observations = captured_observations(scenario)
    record = RunRecord(scenario.name, MACHINE, "tcg", COMPLETED, "", "6.1.192+", 1.5, observations, (), (),
                       evidence)
    write_evidence(record)
    judged = JudgedRun(record, evaluate(scenario, MACHINE, observations))
    write_judgement(judged)
    return judged


def demo_scenarios() -> list[Scenario]:
    return suite.load_all([SCENARIOS / name for name in DEMO_SCENARIOS])


def build_results(tmp: Path, failing: bool = True, panic: bool = False) -> tuple[Path, list[JudgedRun]]:
    """results/<stamp>-demo in `tmp`: the captured demo, clock/rollover replayed."""
    results = tmp / "results" / "20261203-152824-demo"
    results.mkdir(parents=True)
    write_session(results, ["sandbox", "demo", "--machine", MACHINE])
    runs = []
    transcript, console = captured("normal")
    for scenario in demo_scenarios():
        if scenario.name == "clock/rollover":
            scenario = rollover(tmp, failing)
            runs.append(run_and_judge(fake_target(), scenario, results / scenario.slug / MACHINE,
                                      _replay(transcript, console)))
        else:
            runs.append(write_observed(results, scenario))
    if panic:
        guide = suite.load(SCENARIOS / "guide" / "clock-2040.toml")
        lines = transcript[:transcript.index(next(line for line in transcript if line.startswith("@@Y2038 END 3")))
                           + 1]
        runs.append(run_and_judge(fake_target(), guide, results / guide.slug / MACHINE,
                                  _replay(lines, captured("panic")[1])))
    return results, runs
