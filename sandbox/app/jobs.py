"""Run a scenario and judge it: the one path the CLI and pytest share.

    run_and_judge(target, scenario, evidence) -> JudgedRun

Runs it (sandbox/run), judges a completed run (sandbox/judge), and writes
verdicts.json, report.txt, facts.json and the charts beside the run's
evidence, and the session's session.json once: a caller adds nothing.
"""
from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

from sandbox.app.facts import keep_scenario, write_run_facts, write_session
from sandbox.base import evidence as files
from sandbox.base.errors import shown
from sandbox.base.evidence import Evidence
from sandbox.guest.qemu import Guest
from sandbox.guest.target import Target
from sandbox.judge.evaluate import evaluate
from sandbox.judge.judged import JudgedRun
from sandbox.report.html import keep_charts
from sandbox.report.text import failure_report
from sandbox.run.prepare import boot_of, server_boot_of
from sandbox.run.runner import StartGuest, run_scenario
from sandbox.scenario.model import Scenario


def run_and_judge(target: Target, scenario: Scenario, evidence: Path, start: StartGuest = Guest) -> JudgedRun:
    """Run, judge and leave the whole evidence: the session's session.json
    (once), the run's files, its verdicts and report, its facts and its
    charts (drawn now, while other guests may still run)."""
    started, clock = time.time(), time.monotonic()
    write_session(Evidence(evidence).session)
    keep_scenario(scenario, evidence)  # before the boot: a run killed outright keeps it too
    record = run_scenario(scenario, boot_of(target, scenario, evidence), start,
                          on_abort=lambda aborted: write_judgement(JudgedRun(aborted, None)),
                          server_boot=server_boot_of(scenario, evidence))
    result = (evaluate(scenario, target.machine.name, record.observations, record.findings)
              if record.completed else None)
    judged = JudgedRun(record, result)
    write_judgement(judged)
    write_run_facts(target, scenario, evidence, started, time.monotonic() - clock)  # for the page
    keep_charts(evidence)
    return judged


def write_judgement(judged: JudgedRun) -> None:
    evidence = Evidence(judged.record.evidence)
    if judged.result is not None:
        evidence.write_json(files.VERDICTS, [asdict(v) for v in judged.result.verdicts])
    text = "passed" if judged.passed else shown(failure_report(judged.record, judged.result))
    evidence.write(files.REPORT, text + "\n")
