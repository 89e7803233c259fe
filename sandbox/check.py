"""Run a scenario and judge it: the one path the CLI and pytest share."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import report
from .evaluate import ScenarioResult, evaluate
from .runner import RunRecord, run_scenario
from .scenario import Scenario
from .session import Prepared


@dataclass(frozen=True)
class Checked:
    record: RunRecord
    result: ScenarioResult | None  # None when the guest did not complete

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed

    @property
    def infrastructure_failed(self) -> bool:
        return not self.record.completed


def check(prepared: Prepared, scenario: Scenario, evidence: Path) -> Checked:
    record = run_scenario(scenario, prepared.machine, prepared.kernel.boot_image,
                          prepared.initramfs.path, prepared.accel.name, evidence)
    result = evaluate(scenario, prepared.machine.name, record.observations) if record.completed else None
    checked = Checked(record, result)
    _write(checked)
    return checked


def _write(checked: Checked) -> None:
    evidence = checked.record.evidence
    if checked.result is not None:
        verdicts = [asdict(v) for v in checked.result.verdicts]
        (evidence / "verdicts.json").write_text(json.dumps(verdicts, indent=2) + "\n")
    text = "passed" if checked.passed else report.failure_report(checked.record, checked.result)
    (evidence / "report.txt").write_text(text + "\n")
