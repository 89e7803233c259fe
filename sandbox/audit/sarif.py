"""A rehearsal as SARIF 2.1.0 (OASIS), the format code-scanning services
read: the verdict table's rows are the rules, each finding one result
located at the file's path in the image (pure).

    sarif_log(report) -> dict, for json.dumps
"""
from __future__ import annotations

from urllib.parse import quote

from sandbox.audit.findings import Finding, findings
from sandbox.audit.runtime.verdict import BROKE, CALLS_TIME32, NOT_EXERCISED, SAFE
from sandbox.audit.verdict import MIXED, NEEDS_RUNTIME, NO_TIME_USE, TIME32, TIME64

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "y2038-sandbox rehearse"
# verdict -> (SARIF level, what it means): the rows of docs/rehearse.md's two verdict tables
RULES: dict[str, tuple[str, str]] = {
    BROKE: ("error", "Broke across the rollover: glibc refused a time with EOVERFLOW, or the exit status "
                     "or output changed, or it printed a time before its clock"),
    CALLS_TIME32: ("warning", "Makes 32-bit time system calls; its output and status held"),
    NOT_EXERCISED: ("note", "The static audit found 32-bit time use that the runs never reached"),
    SAFE: ("none", "No 32-bit time call, nothing refused, nothing changed"),
    TIME32: ("warning", "Binds the 32-bit time_t interfaces"),
    MIXED: ("warning", "Binds both the 32-bit and the 64-bit time_t interfaces"),
    NEEDS_RUNTIME: ("note", "Makes its own system calls and no symbol decides: only the runtime audit can tell"),
    TIME64: ("none", "64-bit time_t"),
    NO_TIME_USE: ("none", "Binds no time interface"),
}


def _result(finding: Finding, rule_index: dict[str, int]) -> dict[str, object]:
    level = RULES[finding.verdict][0]
    return {
        "ruleId": finding.verdict, "ruleIndex": rule_index[finding.verdict], "level": level,
        "message": {"text": f"{finding.name}: {finding.verdict}: {finding.reason}"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(finding.name)}}}],
        "partialFingerprints": {"elfBuildId/v1": finding.build_id or "none", "path/v1": finding.name},
        "properties": {"buildId": finding.build_id, "input": finding.input, "machine": finding.machine,
                       "staticVerdict": finding.static},
    }


def sarif_log(report: dict[str, object]) -> dict[str, object]:
    rules = [{"id": verdict, "name": verdict, "shortDescription": {"text": text},
              "defaultConfiguration": {"level": level}} for verdict, (level, text) in RULES.items()]
    index = {verdict: n for n, verdict in enumerate(RULES)}
    results = [_result(f, index) for f in findings(report) if RULES[f.verdict][0] != "none"]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION,
            "runs": [{"tool": {"driver": {"name": TOOL, "rules": rules}}, "results": results}]}
