"""A time server nobody can reach: the ntp-sync step fails at its timeout
with chronyd's own log in the evidence, and neither QEMU is left behind.

The client asks 10.38.0.9, an address on the link where no guest answers,
while the real time server (10.38.0.1) serves; chronyd keeps trying and
never steps."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Callable

from sandbox.app.jobs import run_and_judge
from sandbox.base.paths import REPO
from sandbox.guest.target import Target
from sandbox.run.record import STEP_FAILED
from sandbox.run.runner import SERVER_FOLDER
from sandbox.scenario.parser import parse_scenario
from sandbox.scenario import suite
from sandbox.scenario.userlands import load_userlands

SCENARIO = """
title = "an unreachable time server"
rtc = "2026-06-01T00:00:00Z"
machines = ["x86_64"]
timeout = 120

[time-server]
time = "2038-01-19T03:14:00Z"

[[step]]
phase = "synced"
ntp-sync = "debian12-amd64"
server = "10.38.0.9"
timeout = 8
"""


def test_an_unreachable_server_is_a_failed_step_with_chronyds_log(
        y2038_target: Callable[..., Target], y2038_evidence: Path) -> None:
    scenario = parse_scenario(SCENARIO, str(REPO / "scenarios/ntp/unreachable.toml"), suite.load_catalogue(),
                              suite.machine_flavours(), load_userlands())
    started = time.monotonic()
    judged = run_and_judge(y2038_target("x86_64"), scenario, y2038_evidence)
    record = judged.record
    assert record.outcome == STEP_FAILED, record.detail
    assert record.detail.startswith("synced (") and "exited 1" in record.detail
    assert "exited 1: chronyd did not step the clock within 8 s (or refused to); its log:" in record.detail
    assert "chronyd version 4.3 starting" in record.detail  # its log, on stderr
    assert "System clock was stepped" not in record.detail
    assert time.monotonic() - started < scenario.timeout
    run = json.loads((record.evidence / "run.json").read_text())
    assert "10.38.0.9" in run["commands"][-1]["shell"]
    assert (record.evidence / SERVER_FOLDER / "chronyd.log").read_text().count("chronyd version") == 1
    left = subprocess.run(["pgrep", "-f", str(record.evidence)], capture_output=True, text=True).stdout
    assert left == "", f"QEMU left behind: {left}"
