"""A rehearsal's records as CI sees them: one Finding per audited file,
keyed by its ELF build-id and its path, and the gate (--fail-on) that
says which fail (pure: the report's JSON in, findings out).

    findings(report)           the report's audits, runtime verdict first
    failing(findings, level)   those at or past the level
"""
from __future__ import annotations

from dataclasses import dataclass

from sandbox.audit.runtime.verdict import BROKE, CALLS_TIME32
from sandbox.audit.verdict import MIXED, TIME32

FAIL_ON: dict[str, frozenset[str]] = {
    BROKE: frozenset({BROKE}),
    CALLS_TIME32: frozenset({BROKE, CALLS_TIME32}),
    TIME32: frozenset({BROKE, CALLS_TIME32, TIME32, MIXED}),
}
"""--fail-on LEVEL: the verdicts, runtime or static, that fail at that level."""
DEFAULT_FAIL_ON = BROKE  # the runtime audit's; --static fails nothing unless asked


@dataclass(frozen=True)
class Finding:
    input: str  # as the user typed it
    path: str  # the file's path in the image, tree or package ("" when the input is the file)
    build_id: str  # .note.gnu.build-id, "" when none
    machine: str
    static: str  # the static verdict
    verdict: str  # the runtime verdict, or the static one after --static
    reason: str

    @property
    def name(self) -> str:
        return self.path or self.input

    @property
    def key(self) -> tuple[str, str]:
        return self.build_id, self.name


def findings(report: dict[str, object]) -> list[Finding]:
    found = []
    audits = report.get("audits")
    for record in audits if isinstance(audits, list) else []:
        runtime = record.get("runtime") or {}
        origin = record["origin"]
        found.append(Finding(origin["input"], origin["path"], record.get("build_id", ""), record["machine"],
                             record["verdict"], runtime.get("verdict", record["verdict"]),
                             runtime.get("reason", record["reason"])))
    return found


def fails(finding: Finding, level: str) -> bool:
    return bool({finding.verdict, finding.static} & FAIL_ON[level])


def failing(found: list[Finding], level: str) -> list[Finding]:
    return [f for f in found if fails(f, level)]
