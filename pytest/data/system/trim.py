"""Trim a system rehearsal's evidence folder into pytest/data/system/<name>/:
what the facts, the verdicts and a scenario's expectations read, and no
more; then check that the trimmed copy gives the same verdicts and checks
as the whole folder (else it exits 1 and says which differ).

    PYTHONPATH=. python3 pytest/data/system/trim.py RESULTS/<run>/<system> NAME [SCENARIO.toml]

Kept: boot.json and ticks.txt whole; of `systemctl show` the properties the
facts read; of each look the unit states (without descriptions) and the
processes in a unit's cgroup; journal entries (their read fields only),
syslog lines and console lines that say something went wrong, that are a
run of a timer's unit, a truncation, the system's clock lines, or that a
pattern of the scenario's [journal] matches. expected.json: every unit's
verdict and the start of its reason, as pytest/unit/test_system_captured.py
reads it.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from sandbox.audit.runtime.facts import TRUNCATION_LINE
from sandbox.scenario import patterns
from sandbox.system.expect import PRINTK
from sandbox.system.facts import CLOCK_POLICY, CONSOLE_WHO, unit_facts
from sandbox.system.rehearse import observed_from
from sandbox.system.scenario import load_system_scenario
from sandbox.system.scenario_run import judge_evidence
from sandbox.system.verdict import error_kind, judge

DATA = Path(__file__).resolve().parent
SHOWN = ("Id", "LoadState", "ActiveState", "SubState", "Result", "NRestarts", "LastTriggerUSec")
JOURNAL_FIELDS = ("__REALTIME_TIMESTAMP", "UNIT", "USER_UNIT", "_SYSTEMD_UNIT", "SYSLOG_IDENTIFIER", "_PID",
                  "PRIORITY", "MESSAGE")
REASON_CHARS = 40


def _read(path: Path) -> str:
    return path.read_text("utf-8", "replace") if path.is_file() else ""


def _wanted(text: str, pats: list[str]) -> bool:
    return bool(error_kind(text) or TRUNCATION_LINE.search(text) or CLOCK_POLICY.search(text)
                or any(patterns.search(p, text) for p in pats))


def _a_run(raw: dict[str, object]) -> bool:
    """PID 1's "Starting <unit>" of a unit a timer triggers: one line per run."""
    unit = str(raw.get("UNIT", ""))
    return unit.endswith(".service") and str(raw.get("MESSAGE", "")).startswith("Starting ")


def _show(text: str) -> str:
    blocks = []
    for block in text.split("\n\n"):
        kept = [line for line in block.splitlines() if line.split("=", 1)[0] in SHOWN]
        blocks.append("\n".join(kept) if kept else block)
    return "\n\n".join(blocks)


def _states(text: str) -> str:
    return "\n".join(" ".join(line.replace("●", " ").split()[:4]) for line in text.splitlines())


def _processes(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if len(line.split("\t")) == 5 and line.split("\t")[2] != "/")


def trim(source: Path, target: Path, pats: list[str]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in ("boot.json", "ticks.txt"):
        (target / name).write_text(_read(source / name))
    for name in ("units-before.txt", "units-after.txt"):
        (target / name).write_text(_show(_read(source / name)))
    looks = json.loads(_read(source / "timeline.json") or "[]")
    (target / "timeline.json").write_text(json.dumps(
        [{**look, "states": _states(str(look.get("states", ""))), "processes": _processes(str(look.get("processes",
                                                                                                         "")))}
         for look in looks], indent=0) + "\n")
    entries = []
    for line in _read(source / "journal.json").splitlines():
        raw = json.loads(line)
        message = raw.get("MESSAGE", "")
        text = f"{raw.get('SYSLOG_IDENTIFIER', '?')}[{raw.get('_PID', 0)}]: {message}"
        if isinstance(message, str) and (_wanted(text, pats) or _a_run(raw)):
            entries.append(json.dumps({k: raw[k] for k in JOURNAL_FIELDS if k in raw}))
    (target / "journal.json").write_text("\n".join(entries) + "\n")
    syslog = [line for line in _read(source / "syslog.txt").splitlines()
              if _wanted(line, pats)]
    (target / "syslog.txt").write_text("\n".join(syslog) + "\n")
    console = _read(source / "console.log") + "\n" + _read(source / "kernel.log")
    kept = [line.strip() for line in console.splitlines()
            if ((CONSOLE_WHO.match(line.strip()) or not PRINTK.match(line.strip())) and _wanted(line, pats))
            or TRUNCATION_LINE.search(line) or CLOCK_POLICY.search(line) or "Kernel panic" in line]
    (target / "console.log").write_text("")
    (target / "kernel.log").write_text("\n".join(dict.fromkeys(kept)) + "\n")


def verdicts(folder: Path) -> dict[str, tuple[str, str]]:
    if not _read(folder / "units-before.txt"):  # no baseline: the boot died before it
        return {}
    return {v.unit: (v.verdict, v.reason) for v in (judge(f) for f in unit_facts(observed_from(folder)))}


def main(source: Path, name: str, scenario_file: Path | None) -> int:
    scenario = load_system_scenario(scenario_file) if scenario_file else None
    pats = [j.pattern for j in scenario.journal] if scenario else []
    target = DATA / name
    trim(source, target, pats)
    whole, trimmed = verdicts(source), verdicts(target)
    differ = [f"{u}: {whole.get(u)} -> {trimmed.get(u)}" for u in sorted(set(whole) | set(trimmed))
              if whole.get(u) != trimmed.get(u)]
    if scenario:
        checks = [(c.what, c.passed) for c in judge_evidence(scenario, source)]
        again = [(c.what, c.passed) for c in judge_evidence(scenario, target)]
        differ += [f"{a} -> {b}" for a, b in zip(checks, again) if a != b]
        print("\n".join(f"{what}: {'held' if ok else 'FAILED'} on the whole folder" for what, ok in checks))
    if whole:  # a boot that died before its baseline has no unit table
        (target / "expected.json").write_text(json.dumps(
            {u: [v, r[:REASON_CHARS]] for u, (v, r) in sorted(whole.items())}, indent=1) + "\n")
    print("\n".join(differ) or f"{target}: the same verdicts as {source}"
          + (" and the same checks" if scenario else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]) if len(sys.argv) > 3 else None))
