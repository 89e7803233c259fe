"""What a fleet's CI reads of a rehearsal (sandbox/audit/findings.py,
sarif.py, junit.py, baseline.py): SARIF and JUnit read back by parsers,
--fail-on's exit codes, every record keyed by its ELF build-id, and a
baseline's new breaks, fixed and unchanged. Static runs of small armhf
programs built here, packed as a firmware image; nothing boots.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.audit.baseline import compare
from sandbox.audit.junit import junit_xml
from sandbox.audit.runtime.verdict import RUNTIME_VERDICTS
from sandbox.audit.sarif import RULES
from sandbox.audit.verdict import VERDICTS

CLOCK = "#include <stdio.h>\n#include <time.h>\nint main(void) { printf(\"%ld\\n\", (long)time(0)); return 0; }\n"
NOTHING = "int main(void) { return 0; }\n"


def build(out: Path, source: str, *flags: str) -> Path:
    if not shutil.which("arm-linux-gnueabihf-gcc"):
        pytest.skip("no arm-linux-gnueabihf-gcc here")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["arm-linux-gnueabihf-gcc", "-o", str(out), str(src), *flags], check=True)
    src.unlink()
    return out


def build_id(path: Path) -> str:
    notes = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"Build ID: ([0-9a-f]+)", notes)
    assert found, notes
    return found.group(1)


def product(folder: Path, clock_flags: tuple[str, ...]) -> Path:
    """A firmware image: usr/bin/clock (32-bit time_t unless clock_flags
    say otherwise) and usr/bin/nothing, as a tar.xz."""
    tree = folder / "tree"
    build(tree / "usr/bin/clock", CLOCK, *clock_flags)
    build(tree / "usr/bin/nothing", NOTHING)
    image = folder / "product.img"
    subprocess.run(["tar", "cJf", str(image), "-C", str(tree), "."], check=True)
    return image


TIME64 = ("-D_TIME_BITS=64", "-D_FILE_OFFSET_BITS=64")


@pytest.fixture(scope="module")
def products(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("products")
    return {"time32": product(base / "v1", ()), "time64": product(base / "v2", TIME64)}


def rehearse(*args: str) -> int:
    return main(["rehearse", "--static", *args])


def test_sarif_and_junit_of_one_run_read_back(products: dict[str, Path], tmp_path: Path) -> None:
    sarif, junit, record = tmp_path / "out.sarif", tmp_path / "out.xml", tmp_path / "out.json"
    image = str(products["time32"])
    code = rehearse("--fail-on", "time32", "--sarif", str(sarif), "--junit", str(junit), "--json", str(record),
                    image)
    assert code == 1
    audits = {a["origin"]["path"]: a for a in json.loads(record.read_text())["audits"]}
    clock_id = build_id(products["time32"].parent / "tree/usr/bin/clock")
    assert audits["usr/bin/clock"]["build_id"] == clock_id
    assert audits["usr/bin/nothing"]["build_id"] == build_id(products["time32"].parent / "tree/usr/bin/nothing")

    log = json.loads(sarif.read_text())
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    assert all(r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] for r in rules)
    (result,) = run["results"]  # usr/bin/nothing binds no time: not a finding
    assert result["ruleId"] == "time32" and rules[result["ruleIndex"]]["id"] == "time32"
    assert result["level"] == "warning" and result["message"]["text"].startswith("usr/bin/clock: time32: ")
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "usr/bin/clock"
    assert result["partialFingerprints"]["elfBuildId/v1"] == clock_id
    assert result["properties"]["input"] == image and result["properties"]["machine"] == "armhf"

    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {str(c.get("name")): c for c in suite.iter("testcase")}
    assert sorted(cases) == ["usr/bin/clock", "usr/bin/nothing"]
    failure = cases["usr/bin/clock"].find("failure")
    assert failure is not None and failure.get("type") == "time32"
    assert cases["usr/bin/nothing"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in cases["usr/bin/clock"].iter("property")}
    assert props["build-id"] == clock_id and props["verdict"] == "time32"
    assert all(c.get("classname") == image for c in cases.values())


def test_fail_on_sets_the_exit_code(products: dict[str, Path]) -> None:
    image = str(products["time32"])
    assert rehearse(image) == 0  # the static audit cannot tell who breaks: nothing fails unless asked
    assert rehearse("--fail-on", "time32", image) == 1
    assert rehearse("--fail-on", "broke", image) == 0
    assert rehearse("--fail-on", "time32", str(products["time64"])) == 0


def test_the_exit_code_follows_the_new_breaks_only(products: dict[str, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    old32, old64 = tmp_path / "v32.json", tmp_path / "v64.json"
    assert rehearse("--json", str(old32), str(products["time32"])) == 0
    assert rehearse("--json", str(old64), str(products["time64"])) == 0
    capsys.readouterr()
    # time64 -> time32: usr/bin/clock newly binds 32-bit time
    out = tmp_path / "new.json"
    assert rehearse("--fail-on", "time32", "--baseline", str(old64), "--json", str(out),
                    str(products["time32"])) == 1
    text = capsys.readouterr().out
    assert "against the baseline (fail on time32): 1 new break(s), 0 fixed, 1 unchanged" in text
    assert "new break  usr/bin/clock: time64 → time32 (rebuilt)" in text
    compared = json.loads(out.read_text())["baseline"]
    assert [p["path"] for p in compared["new_breaks"]] == ["usr/bin/clock"]
    assert compared["new_breaks"][0]["new_build_id"] == build_id(products["time32"].parent / "tree/usr/bin/clock")
    # the same product again: it still fails, but nothing is new
    assert rehearse("--fail-on", "time32", "--baseline", str(old32), str(products["time32"])) == 0
    assert "0 new break(s), 0 fixed, 2 unchanged (1 still failing)" in capsys.readouterr().out
    # time32 -> time64: fixed
    assert rehearse("--fail-on", "time32", "--baseline", str(old32), str(products["time64"])) == 0
    assert "fixed      usr/bin/clock: time32 → time64 (rebuilt)" in capsys.readouterr().out


def test_a_bad_baseline_is_one_line_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "old.json"
    for text, key in (("{", "json"), ('{"inputs": []}', "audits"),
                      ('{"audits": [{"machine": "armhf", "verdict": "time32"}]}', "audits[0].reason")):
        bad.write_text(text)
        assert main(["rehearse", "--baseline", str(bad), str(tmp_path / "never-read")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {bad}: {key}: ") and err.count("\n") == 1, err


def record(path: str, build: str, verdict: str, runtime: str | None) -> dict[str, object]:
    return {"origin": {"input": "debian12-armhf:", "path": path, "package": ""}, "build_id": build,
            "machine": "armhf", "verdict": verdict, "reason": "static reason",
            "runtime": {"verdict": runtime, "reason": f"{runtime} reason"} if runtime else None}


def test_runtime_verdicts_decide_and_a_moved_file_is_known_by_its_build_id() -> None:
    old = {"audits": [record("usr/bin/date", "aa", "time32", "broke"),
                      record("usr/bin/stat", "bb", "time32", "calls-time32"),
                      record("usr/bin/gone", "cc", "time32", "broke")]}
    new = {"audits": [record("usr/bin/date", "a2", "time64", "safe"),
                      record("usr/libexec/stat", "bb", "time32", "broke"),  # moved, same build: matched
                      record("usr/bin/touch", "dd", "time32", "broke")]}
    result = compare(old, new, "broke")
    assert [p.line() for p in result.new_breaks] == ["usr/libexec/stat: calls-time32 → broke (same build)",
                                                     "usr/bin/touch: absent → broke (new file)"]
    assert [p.line() for p in result.fixed] == ["usr/bin/date: broke → safe (rebuilt)",
                                                "usr/bin/gone: broke → absent (gone)"]
    suite = ET.fromstring(junit_xml(new, "broke")).find("testsuite")
    assert suite is not None and suite.get("failures") == "2"
    assert {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None} == \
        {"usr/libexec/stat", "usr/bin/touch"}


def test_every_verdict_is_a_sarif_rule() -> None:
    assert set(RULES) == set(VERDICTS) | set(RUNTIME_VERDICTS)


def test_the_command_line_offers_every_level() -> None:
    from sandbox.app.cli import parser
    from sandbox.audit.findings import FAIL_ON
    rehearse_parser = parser()._subparsers._group_actions[0].choices["rehearse"]  # type: ignore[union-attr]  # argparse internals
    (action,) = [a for a in rehearse_parser._actions if a.dest == "fail_on"]
    assert tuple(action.choices) == tuple(FAIL_ON)
