"""The pipeline's result: a run and, when it completed, its verdicts."""
from __future__ import annotations

from dataclasses import dataclass

from sandbox.judge.evaluate import ScenarioResult
from sandbox.run.record import RunRecord


@dataclass(frozen=True)
class JudgedRun:
    """A run and, when it completed, its verdicts."""

    record: RunRecord
    result: ScenarioResult | None  # None when the guest did not complete

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed
