"""Run a scenario and judge it: the one path the CLI and pytest share.

    run_and_judge(target, scenario, evidence) -> JudgedRun

Runs it (sandbox/run), judges a completed run (sandbox/judge), and writes
verdicts.json and report.txt (sandbox/report) beside the run's evidence.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from sandbox.guest.target import Target
from sandbox.judge.evaluate import evaluate
from sandbox.report.text import JudgedRun, failure_report
from sandbox.run.runner import Boot, run_scenario, StartGuest
from sandbox.guest.qemu import Guest
from sandbox.scenario.model import Scenario


def boot_of(target: Target) -> Boot:
    return Boot(target.machine, target.kernel.boot_image, target.initramfs.path, target.accel.name)


def run_and_judge(target: Target, scenario: Scenario, evidence: Path, start: StartGuest = Guest) -> JudgedRun:
    record = run_scenario(scenario, boot_of(target), evidence, start)
    result = evaluate(scenario, target.machine.name, record.observations) if record.completed else None
    judged = JudgedRun(record, result)
    write_judgement(judged)
    return judged


def write_judgement(judged: JudgedRun) -> None:
    evidence = judged.record.evidence
    if judged.result is not None:
        verdicts = [asdict(v) for v in judged.result.verdicts]
        (evidence / "verdicts.json").write_text(json.dumps(verdicts, indent=2) + "\n")
    text = "passed" if judged.passed else failure_report(judged.record, judged.result)
    (evidence / "report.txt").write_text(text + "\n")
