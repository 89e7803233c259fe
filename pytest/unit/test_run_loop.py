"""The run loop without QEMU: sandbox.run.runner.run_scenario driven by a
guest that replays captured agent transcripts and console logs
(pytest/data/agent, pytest/data/console), one test per outcome, each also
checking the evidence left behind.
"""
from __future__ import annotations

import json
from pathlib import Path

from replay_guest import BASE, ReplayGuest, captured, frame, prepared

from sandbox.app.exit_codes import EXIT_FAILED, EXIT_INFRA, EXIT_PASSED, EXIT_STEP, exit_code
from sandbox.app.jobs import write_judgement
from sandbox.base.paths import REPO
from sandbox.guest.qemu import BootRequest
from sandbox.judge.evaluate import evaluate
from sandbox.judge.judged import JudgedRun
from sandbox.run.plan import plan
from sandbox.run.record import RunRecord
from sandbox.run.runner import run_scenario
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario

ROLLOVER = REPO / "scenarios" / "clock" / "rollover.toml"
BOOT = BASE
EVIDENCE = ("console.log", "kernel.log", "agent.log", "observations.jsonl", "run.json", "report.txt")


def replay(tmp_path: Path, transcript: list[str], console: str, ending: str = "died",
           scenario: Scenario | None = None) -> tuple[JudgedRun, ReplayGuest]:
    scenario = scenario or suite.load(ROLLOVER)
    guests: list[ReplayGuest] = []

    def start(request: BootRequest) -> ReplayGuest:
        guests.append(ReplayGuest(request, transcript, console, ending))
        return guests[-1]
    record = run_scenario(scenario, prepared(scenario, tmp_path / "evidence", BOOT), start)
    result = evaluate(scenario, BOOT.machine.name, record.observations) if record.completed else None
    judged = JudgedRun(record, result)
    write_judgement(judged)
    (guest,) = guests
    assert guest.stopped
    for name in EVIDENCE:
        assert (record.evidence / name).is_file(), name
    return judged, guest


def run_json(record: RunRecord) -> dict[str, object]:
    return json.loads((record.evidence / "run.json").read_text())


def replies(name: str) -> list[list[str]]:
    """A capture's agent lines cut into READY and one list of lines per reply."""
    lines, _ = captured(name)
    chunks: list[list[str]] = [[]]
    for line in lines:
        chunks[-1].append(line)
        if line.startswith("@@Y2038 END") or line.startswith("@@Y2038 READY"):
            chunks.append([])
    return [c for c in chunks if c]


def test_the_captured_demo_run_completes_and_passes(tmp_path: Path) -> None:
    transcript, console = captured("normal")
    judged, guest = replay(tmp_path, transcript, console)
    record = judged.record
    assert (record.outcome, record.detail, record.release) == ("completed", "", "6.1.192+")
    shells = [c.shell for c in plan(suite.load(ROLLOVER).steps, BOOT.machine.toolchain.flavours, "native64")]
    assert guest.commands == shells + ["dmesg"]
    assert judged.passed and len(judged.result.verdicts) == 24
    assert exit_code([judged]) == EXIT_PASSED
    assert (record.evidence / "kernel.log").read_text().startswith("[    0.000000] Linux version 6.1.192+")
    lines = (record.evidence / "observations.jsonl").read_text().splitlines()
    assert len(lines) == len(record.observations) == 25  # 3 calls x 4 flavours x 2, and the set-clock
    assert run_json(record)["outcome"] == "completed"
    assert (record.evidence / "report.txt").read_text() == "passed\n"


def test_a_wrong_expectation_fails_the_judgement_not_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios" / "clock"
    folder.mkdir(parents=True)
    wrong = ROLLOVER.read_text().replace(
        'time          = { errno = "EOVERFLOW" }', 'time          = { errno = "EINVAL" }', 1)
    assert wrong != ROLLOVER.read_text()
    (folder / "rollover.toml").write_text(wrong)
    transcript, console = captured("normal")
    judged, _ = replay(tmp_path, transcript, console, scenario=suite.load(folder / "rollover.toml"))
    assert judged.record.completed and not judged.passed
    (failure,) = judged.result.failures
    assert (failure.phase, failure.flavour, failure.call, failure.field) == ("after", "time32-libc", "time", "errno")
    assert (failure.expected, failure.observed) == ("errno EINVAL", "errno EOVERFLOW")
    assert exit_code([judged]) == EXIT_FAILED
    report = (judged.record.evidence / "report.txt").read_text()
    assert "expected errno EINVAL, observed errno EOVERFLOW" in report


def test_a_failing_clock_step_stops_the_run_as_a_failed_step(tmp_path: Path) -> None:
    chunks = replies("normal")
    set_clock = 5  # READY, four "before" replies, then the set-clock
    chunks[set_clock] = frame(5, "", "settime: settimeofday: EPERM\n", 1)
    dmesg = chunks[-1]
    transcript = [line for chunk in chunks[:set_clock + 1] + [dmesg] for line in chunk]
    judged, guest = replay(tmp_path, transcript, captured("normal")[1])
    record = judged.record
    assert record.outcome == "step-failed" and judged.result is None
    assert record.detail == ("step1-set-clock (/tools/settime 2147483670 settimeofday) exited 1: "
                             "settime: settimeofday: EPERM")
    assert guest.commands[-2:] == ["/tools/settime 2147483670 settimeofday", "dmesg"]
    assert exit_code([judged]) == EXIT_STEP
    assert run_json(record)["outcome"] == "step-failed"
    assert run_json(record)["commands"][-1]["stderr"] == "settime: settimeofday: EPERM\n"
    assert "step-failed: step1-set-clock" in (record.evidence / "report.txt").read_text()


def test_probe_output_that_is_not_json_is_an_agent_error(tmp_path: Path) -> None:
    chunks = replies("normal")
    chunks[1] = frame(1, "clock: time: 2147483630\n")
    transcript = [line for chunk in chunks for line in chunk]
    judged, _ = replay(tmp_path, transcript, captured("normal")[1])
    assert judged.record.outcome == "agent-error"
    assert judged.record.detail.startswith("probe output line 1: not JSON")
    assert exit_code([judged]) == EXIT_INFRA


def test_a_guest_that_panics_half_way_keeps_what_it_saw(tmp_path: Path) -> None:
    chunks = replies("normal")[:4]  # READY and three replies, then the kernel panics
    _, console = captured("panic")
    judged, guest = replay(tmp_path, [line for chunk in chunks for line in chunk], console)
    record = judged.record
    assert record.outcome == "panic" and "Kernel panic - not syncing" in record.detail
    assert len(guest.commands) == 4  # the fourth never got an answer; no dmesg
    assert len(record.observations) == 9
    # no dmesg from the agent: the kernel log is the console's kernel lines
    kernel_log = (record.evidence / "kernel.log").read_text()
    assert "Kernel panic - not syncing" in kernel_log
    assert all(line.startswith("[") for line in kernel_log.splitlines())
    assert len((record.evidence / "observations.jsonl").read_text().splitlines()) == 9
    assert run_json(record)["outcome"] == "panic"
    assert exit_code([judged]) == EXIT_INFRA


def test_a_guest_that_falls_silent_is_a_hang(tmp_path: Path) -> None:
    transcript, console = captured("hang")
    judged, guest = replay(tmp_path, transcript, console, ending="hung")
    assert judged.record.outcome == "hang"
    assert guest.commands == [plan(suite.load(ROLLOVER).steps, BOOT.machine.toolchain.flavours)[0].shell]
    assert "hang:" in (judged.record.evidence / "report.txt").read_text()
    assert exit_code([judged]) == EXIT_INFRA


def test_a_guest_that_exits_without_a_panic(tmp_path: Path) -> None:
    transcript, _ = captured("hang")
    judged, _ = replay(tmp_path, transcript, "no kernel output at all\n", ending="died")
    assert (judged.record.outcome, judged.record.detail) == ("guest-exited", "QEMU exited (replayed)")


def test_line_noise_between_frames_changes_nothing(tmp_path: Path) -> None:
    clean, _ = replay(tmp_path / "clean", *captured("normal"))
    noisy, _ = replay(tmp_path / "noisy", captured("garbage")[0], captured("normal")[1])
    assert noisy.record.outcome == "completed" and noisy.passed
    assert noisy.record.observations == clean.record.observations
