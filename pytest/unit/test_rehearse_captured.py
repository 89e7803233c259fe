"""Two runtime rehearsals captured on the armhf series kernel
(pytest/data/rehearse-armhf/, docs/rehearse.md "Horizons"): the packages of
the real-programs set from Debian 12 armhf with --horizons --sarif --junit,
and the same from Debian 13 armhf with --horizons --baseline. Their runs are
judged again with today's rules, their SARIF and JUnit files read back with
json and xml.etree against the records, written again from the records, and
the baseline compared again. Nothing boots.
"""
from __future__ import annotations

import json
import lzma
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from sandbox.audit.baseline import compare
from sandbox.audit.horizons import first_broken
from sandbox.audit.junit import junit_xml
from sandbox.audit.runtime.facts import ProcessCount, Refusal, Time32Call
from sandbox.audit.runtime.verdict import BROKE, Runs, RunFacts, refusals_unseen, runtime_verdict
from sandbox.audit.sarif import RULES, sarif_log

DATA = Path(__file__).resolve().parent.parent / "data" / "rehearse-armhf"
SET = ("date", "sqlite3", "python3", "perl", "gawk", "touch", "stat", "ls", "find", "tar", "cpio", "openssl", "dash")
FILES = {"python3": ("python3.11", "python3.13")}
# the first horizon each program of the set broke at (docs/rehearse.md's table); "" never
FIRST_BROKEN: dict[str, dict[str, str]] = {
    "d12": {"sqlite3": "y2038", "python3": "y2038", "perl": "y2038", "gawk": "y2038", "cpio": "y2038",
            "openssl": "y2038", "dash": "y2038"},
    "d13": {},
}
Json = dict[str, Any]
NAMED = re.compile(r"(?P<comm>.*)\[(?P<pid>\d+)\] (?P<what>\S+)")
COUNTED = re.compile(r"(?P<comm>.*)\[(?P<pid>\d+)\] (?P<calls>-?\d+) call\(s\) (?P<truncations>-?\d+) truncation\(s\)")


def captured(name: str) -> str:
    return lzma.decompress((DATA / f"{name}.xz").read_bytes()).decode()


@pytest.fixture(scope="module")
def reports() -> dict[str, Json]:
    return {run: json.loads(captured(f"{run}.json")) for run in ("d12", "d13")}


def _named(text: str) -> tuple[str, int, str]:
    match = NAMED.fullmatch(text)
    assert match, text
    return match["comm"], int(match["pid"]), match["what"]


def _counted(text: str) -> ProcessCount:
    match = COUNTED.fullmatch(text)
    assert match, text
    return ProcessCount(match["comm"], int(match["pid"]), int(match["calls"]), int(match["truncations"]))


def run_facts(run: Json) -> RunFacts:
    assert not run["truncations"]  # none in these runs: their text is not read back here
    return RunFacts(run["label"], run["at"], run["exit"], run["stdout"], run["stderr"], run["seconds"],
                    tuple(Time32Call(*_named(c)) for c in run["time32"]),
                    tuple(Refusal(*_named(r)) for r in run["refusals"]), (),
                    tuple(_counted(c) for c in run["counted"]))


@pytest.mark.parametrize("run", ["d12", "d13"])
def test_the_captured_runs_are_judged_again_the_same(reports: dict[str, Json], run: str) -> None:
    judged = 0
    for audit in reports[run]["audits"]:
        runtime = audit["runtime"]
        if not runtime["runs"]:
            continue
        runs = tuple(run_facts(r) for r in runtime["runs"])
        assert all(r.counted and all(c.calls >= 0 for c in r.counted) for r in runs)  # every run counted
        unseen = refusals_unseen(audit["bits"], audit["linkage"], audit["libc"])
        verdict, reason = runtime_verdict(Runs(audit["verdict"], runs, 30.0, refusals_seen=not unseen))
        assert (verdict, reason) == (runtime["verdict"], runtime["reason"]), audit["origin"]["path"]
        assert first_broken(audit["verdict"], runs, 30.0) == (runtime["first_broken"], runtime["at_each"])
        judged += 1
    assert judged == reports[run]["programs_run"] == 119


@pytest.mark.parametrize("run", ["d12", "d13"])
def test_the_first_broken_horizon_of_each_real_program(reports: dict[str, Json], run: str) -> None:
    by_name = {Path(a["origin"]["path"]).name: a for a in reports[run]["audits"]}
    for program in SET:
        audit = next(by_name[f] for f in FILES.get(program, (program,)) if f in by_name)
        assert audit["runtime"]["first_broken"] == FIRST_BROKEN[run].get(program, ""), program
        assert (audit["runtime"]["verdict"] == BROKE) == (program in FIRST_BROKEN[run]), program


def test_the_real_runs_sarif_reads_back_as_its_records(reports: dict[str, Json]) -> None:
    records = reports["d12"]["audits"]
    verdict = {a["origin"]["path"]: a["runtime"]["verdict"] for a in records}
    build = {a["origin"]["path"]: a["build_id"] for a in records}
    log = json.loads(captured("d12.sarif"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    located = {}
    for result in run["results"]:
        uri = unquote(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == verdict[uri], uri
        assert result["level"] == RULES[result["ruleId"]][0] != "none"
        assert result["partialFingerprints"]["elfBuildId/v1"] == build[uri]
        located[uri] = result["ruleId"]
    assert located == {p: v for p, v in verdict.items() if RULES[v][0] != "none"}
    assert sorted(located.values()).count(BROKE) == 7 and len(located) == 21
    assert json.loads(json.dumps(sarif_log(reports["d12"]))) == log  # today's writer, the same file


def test_the_real_runs_junit_reads_back_as_its_records(reports: dict[str, Json]) -> None:
    records = reports["d12"]["audits"]
    text = captured("d12.xml")
    suite = ET.fromstring(text).find("testsuite")
    assert suite is not None
    cases = {str(c.get("name")): c for c in suite.iter("testcase")}
    assert len(cases) == int(str(suite.get("tests"))) == len(records) == 142
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failed == {a["origin"]["path"] for a in records if a["runtime"]["verdict"] == BROKE}
    assert int(str(suite.get("failures"))) == len(failed) == 7
    skipped = {name for name, case in cases.items() if case.find("skipped") is not None}
    assert skipped == {a["origin"]["path"] for a in records if a["runtime"]["verdict"] == "not-exercised"}
    for a in records:
        props = {p.get("name"): p.get("value") for p in cases[a["origin"]["path"]].iter("property")}
        assert props["build-id"] == a["build_id"]
    assert junit_xml(reports["d12"], BROKE) == text  # today's writer, the same file


def test_debian13_against_debian12_as_the_run_compared_it(reports: dict[str, Json]) -> None:
    old = reports["d12"]
    new = {k: v for k, v in reports["d13"].items() if k != "baseline"}
    comparison = compare(old, new, BROKE)
    assert comparison.to_json() == reports["d13"]["baseline"]
    assert not comparison.new_breaks and len(comparison.fixed) == 7 and not comparison.still_failing
    gone = sorted(p.name for p in comparison.fixed if p.new is None)
    assert gone == ["bin/cpio", "bin/dash", "usr/bin/python3.11"]  # moved to usr/bin and rebuilt; python3.13
