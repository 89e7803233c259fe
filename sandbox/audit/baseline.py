"""A rehearsal against an earlier one of the same product (--baseline
OLD.json): which files newly fail, which were fixed, which are unchanged
(pure: two reports' JSON in, a Comparison out).

    load_baseline(path)       -> the old report (InputError for a bad file)
    compare(old, new, level) -> Comparison

A file of the new run is matched with the old run's file at the same path
(the image's, tree's or package's path), else with the one of the same
ELF build-id (a file that moved). "Fails" is the gate's (--fail-on LEVEL,
sandbox/audit/findings.py). A file of the old run that is gone is fixed
only if it failed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.audit.findings import Finding, fails, findings
from sandbox.base.errors import InputError

RECORD_KEYS = ("machine", "verdict", "reason")  # and origin: what findings() reads of each record


@dataclass(frozen=True)
class Pair:
    old: Finding | None
    new: Finding | None

    @property
    def name(self) -> str:
        return (self.new or self.old).name  # type: ignore[union-attr]  # one of the two is set

    def to_json(self) -> dict[str, str]:
        return {"path": self.name,
                "old_build_id": self.old.build_id if self.old else "", "old": self.old.verdict if self.old else "",
                "new_build_id": self.new.build_id if self.new else "", "new": self.new.verdict if self.new else ""}

    def line(self) -> str:
        old = self.old.verdict if self.old else "absent"
        new = self.new.verdict if self.new else "absent"
        if self.old is None or self.new is None:
            how = "new file" if self.old is None else "gone"
        else:
            how = "same build" if self.old.build_id == self.new.build_id else "rebuilt"
        return f"{self.name}: {old} → {new} ({how})"


@dataclass
class Comparison:
    level: str
    new_breaks: list[Pair] = field(default_factory=list)  # fail now, did not (or were not there) before
    fixed: list[Pair] = field(default_factory=list)  # failed before, do not now (or are gone)
    still_failing: list[Pair] = field(default_factory=list)
    still_passing: list[Pair] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"level": self.level, "new_breaks": [p.to_json() for p in self.new_breaks],
                "fixed": [p.to_json() for p in self.fixed],
                "unchanged": {"failing": [p.to_json() for p in self.still_failing],
                              "passing": len(self.still_passing)}}

    def lines(self) -> list[str]:
        out = [f"against the baseline (fail on {self.level}): {len(self.new_breaks)} new break(s), "
               f"{len(self.fixed)} fixed, {len(self.still_failing) + len(self.still_passing)} unchanged "
               f"({len(self.still_failing)} still failing)"]
        out += [f"  new break  {p.line()}" for p in self.new_breaks]
        out += [f"  fixed      {p.line()}" for p in self.fixed]
        return out


def _pairs(old: list[Finding], new: list[Finding]) -> list[Pair]:
    by_name = {f.name: f for f in old}
    by_build = {f.build_id: f for f in old if f.build_id}
    used: set[tuple[str, str]] = set()
    pairs = []
    for finding in new:
        match = by_name.get(finding.name)
        if match is None or match.key in used:
            match = by_build.get(finding.build_id) if finding.build_id else None
        if match is not None and match.key in used:
            match = None
        if match is not None:
            used.add(match.key)
        pairs.append(Pair(match, finding))
    return pairs + [Pair(f, None) for f in old if f.key not in used]


def compare(old_report: dict[str, object], new_report: dict[str, object], level: str) -> Comparison:
    result = Comparison(level)
    for pair in _pairs(findings(old_report), findings(new_report)):
        was = pair.old is not None and fails(pair.old, level)
        now = pair.new is not None and fails(pair.new, level)
        bucket = {(False, True): result.new_breaks, (True, False): result.fixed,
                  (True, True): result.still_failing, (False, False): result.still_passing}[(was, now)]
        bucket.append(pair)
    return result


def load_baseline(path: Path) -> dict[str, object]:
    """An earlier `rehearse --json` file, checked before anything runs:
    InputError naming the file and the key otherwise."""
    try:
        report = json.loads(path.read_text())
    except OSError as err:
        raise InputError(str(path), "file", err.strerror or str(err)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(str(path), "json", str(err)) from None
    if not isinstance(report, dict) or not isinstance(report.get("audits"), list):
        raise InputError(str(path), "audits", "missing: not the --json file of a rehearse run")
    for n, record in enumerate(report["audits"]):
        missing = [k for k in RECORD_KEYS if not isinstance(record, dict) or not isinstance(record.get(k), str)]
        origin = record.get("origin") if isinstance(record, dict) else None
        if not missing and not (isinstance(origin, dict) and all(isinstance(origin.get(k), str)
                                                                  for k in ("input", "path"))):
            missing = ["origin"]
        if missing:
            raise InputError(str(path), f"audits[{n}].{missing[0]}", "missing or not text")
    return report
