"""Run a scenario and judge it: the one path the CLI and pytest share.

    run_and_judge(target, scenario, evidence) -> JudgedRun

Runs it (sandbox/run), judges a completed run (sandbox/judge), and writes
verdicts.json, report.txt, facts.json and the charts beside the run's
evidence, and the session's session.json once: a caller adds nothing.

A signal while judging (KeyboardInterrupt, sandbox.base.errors.Interrupted:
raised here in the main thread, or by `stop` in a worker thread once the
main one was interrupted) makes the run `interrupted` in its run.json, with
its report.txt, and goes on: a run never reads as completed without its
verdicts.
"""
from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import asdict, replace
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
from sandbox.run.record import INTERRUPTED, RunRecord, write_run
from sandbox.run.runner import StartGuest, run_scenario
from sandbox.scenario.model import Scenario


def _no_stop() -> None:
    pass


def run_and_judge(target: Target, scenario: Scenario, evidence: Path, start: StartGuest = Guest,
                  stop: Callable[[], None] = _no_stop) -> JudgedRun:
    """Run, judge and leave the whole evidence: the session's session.json
    (once), the run's files, its verdicts and report, its facts and its
    charts (drawn now, while other guests may still run). stop: raises
    Interrupted once the session was told to stop (sandbox/app/parallel.py
    StopScope.check), looked at between the judge's checks."""
    started, clock = time.time(), time.monotonic()
    write_session(Evidence(evidence).session)
    keep_scenario(scenario, evidence)  # before the boot: a run killed outright keeps it too
    record = run_scenario(scenario, boot_of(target, scenario, evidence), start,
                          on_abort=lambda aborted: write_judgement(JudgedRun(aborted, None)),
                          server_boot=server_boot_of(scenario, evidence), judged_next=True)
    try:
        result = (evaluate(scenario, target.machine.name, record.observations, record.findings, stop=stop)
                  if record.completed else None)
        judged = JudgedRun(record, result)
        write_judgement(judged)
        if record.completed:
            write_run(record)  # judged: `judging` and its process leave run.json
    except KeyboardInterrupt as err:
        interrupted = interrupted_while_judging(record, err)
        Evidence(evidence).remove(files.VERDICTS)  # if written: the run still reads as not judged
        write_run(interrupted)
        write_judgement(JudgedRun(interrupted, None))
        raise
    write_run_facts(target, scenario, evidence, started, time.monotonic() - clock)  # for the page
    keep_charts(evidence)
    return judged


def interrupted_while_judging(record: RunRecord, err: KeyboardInterrupt) -> RunRecord:
    """The completed run a signal stopped before its verdicts were written."""
    name = signal.Signals(getattr(err, "signum", signal.SIGINT)).name
    return replace(record, outcome=INTERRUPTED,
                   detail=f"interrupted by {name} while judging: the guest completed, its observations are "
                          "kept, no verdict was written")


def write_judgement(judged: JudgedRun) -> None:
    evidence = Evidence(judged.record.evidence)
    if judged.result is not None:
        evidence.write_json(files.VERDICTS, [asdict(v) for v in judged.result.verdicts])
    text = "passed" if judged.passed else shown(failure_report(judged.record, judged.result))
    evidence.write(files.REPORT, text + "\n")
