"""One system scenario run, end to end: its system rehearsed through
sandbox/system/rehearse.py (the one boot path), then its expectations judged
from the evidence folder the rehearsal wrote, read back as the unit tests
read captured runs (judge_evidence), and the checks written beside it
(`checks.txt`, `checks.json`)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.build.own_kernel import OwnKernel
from sandbox.system.expect import Check, evaluate, outcome_check
from sandbox.system.facts import unit_facts
from sandbox.system.rehearse import SystemRequest, SystemResult, observed_from, rehearse_system
from sandbox.system.scenario import SystemScenario
from sandbox.system.verdict import judge

@dataclass(frozen=True)
class ScenarioRun:
    scenario: SystemScenario
    result: SystemResult
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def unexpected_outcome(self) -> bool:
        """The boot ended otherwise than the scenario says (a guest that died, hung...)."""
        return self.result.outcome != self.scenario.outcome

    def summary(self) -> str:
        failed = sum(not c.passed for c in self.checks)
        if self.unexpected_outcome:
            return (f"{self.scenario.name}: {self.result.outcome} (expected {self.scenario.outcome}): "
                    f"{self.result.failure}")
        return (f"{self.scenario.name} ({self.scenario.system}, {self.scenario.start} to {self.scenario.end}): "
                f"{len(self.checks) - failed} of {len(self.checks)} expectation(s) held")

    def lines(self) -> list[str]:
        return [self.summary(), *(c.line() for c in self.checks if not c.passed)]


def judge_evidence(scenario: SystemScenario, evidence: Path) -> tuple[Check, ...]:
    """The scenario's expectations against an evidence folder (a run's, or a
    captured one under pytest/data/system/): how the boot ended first, then
    units, journal lines and timers."""
    boot = json.loads(Evidence(evidence).path(files.SYSTEM_BOOT).read_text())
    observed = observed_from(evidence)
    verdicts = [judge(f) for f in unit_facts(observed)] if observed.units_before else []
    return (outcome_check(scenario, boot["outcome"], boot.get("failure", "")),
            *evaluate(scenario, verdicts, observed))


def run_system_scenario(scenario: SystemScenario, evidence: Path, own: OwnKernel | None = None) -> ScenarioRun:
    result = rehearse_system(SystemRequest(scenario.system, evidence, scenario.start, scenario.end, own))
    folder = Evidence(evidence)
    checks = judge_evidence(scenario, evidence) if folder.path(files.SYSTEM_BOOT).is_file() else ()
    run = ScenarioRun(scenario, result, checks)
    folder.write(files.CHECKS_TEXT, "\n".join([run.summary(), *(c.line() for c in checks)]) + "\n")
    folder.write(files.CHECKS_JSON, json.dumps({
        "scenario": scenario.file, "system": scenario.system, "start": scenario.start, "end": scenario.end,
        "outcome": result.outcome, "passed": run.passed,
        "checks": [{"what": c.what, "expected": c.expected, "observed": c.observed, "passed": c.passed}
                   for c in checks]}, indent=1) + "\n")
    return run
