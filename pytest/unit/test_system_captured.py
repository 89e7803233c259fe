"""The facts and verdicts of captured system rehearsals (pytest/data/system/<run>/:
what the guest printed and the journal export, as the evidence folder keeps
them), against the verdicts that run gave and that were checked by hand
against its journal (docs/system-rehearsal.md)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.system import facts as system_facts
from sandbox.system.rehearse import observed_from
from sandbox.system.verdict import judge

DATA = Path(__file__).resolve().parent.parent / "data" / "system"
RUNS = sorted(p.name for p in DATA.iterdir() if (p / "expected.json").is_file()) if DATA.is_dir() else []


@pytest.mark.parametrize("run", RUNS)
def test_captured_run_gives_its_checked_verdicts(run: str) -> None:
    folder = DATA / run
    expected = json.loads((folder / "expected.json").read_text())
    got = {f.unit: judge(f) for f in system_facts.unit_facts(observed_from(folder))}
    for unit, (verdict, reason_part) in expected.items():
        assert unit in got, f"{run}: no row for {unit}"
        assert got[unit].verdict == verdict, f"{run}: {unit}: {got[unit]}"
        assert reason_part in got[unit].reason, f"{run}: {unit}: {got[unit].reason}"


def test_there_is_a_captured_run() -> None:
    assert RUNS, f"no captured system rehearsal under {DATA}"
