"""Horizons (sandbox/audit/horizons.py): the ladder of times, the first at
which each program broke, the text table and the page's chart. Runs are
made here as the guest would report them; nothing boots.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from sandbox.app.cli import main
from sandbox.audit.runtime import audit as runtime
from sandbox.audit.horizons import LABELS, REFERENCE, first_broken, horizon_moments
from sandbox.audit.page import horizon_chart, page_html
from sandbox.audit.record import BinaryAudit, Origin
from sandbox.audit.runtime.audit import RuntimeAudit, runtime_record
from sandbox.audit.runtime.facts import Refusal, Time32Truncation
from sandbox.audit.runtime.lines import horizon_table, report
from sandbox.audit.runtime.plan import CLOCK, RUN, Moment
from sandbox.audit.runtime.verdict import RunFacts
from sandbox.audit.static import StaticAudit
from sandbox.base.errors import SandboxError
from sandbox.base.timefmt import parse_time

MOMENTS = horizon_moments()


def run(label: str, stdout: str = "ok\n", exit_code: int = 0, **facts: object) -> RunFacts:
    at = next(m.at for m in MOMENTS if m.label == label)
    return RunFacts(label, at, exit_code, stdout, "", 0.1, **facts)  # type: ignore[arg-type]  # test data


def fates(**broken_from: str) -> dict[str, tuple[RunFacts, ...]]:
    """Programs whose runs go wrong from the named horizon on, each its own way."""
    made = {}
    ways = {
        "date": lambda label: run(label, "1901-12-13\n"),  # printed a wrapped date
        "sqlite3": lambda label: run(label, refusals=(Refusal("sqlite3", 9, "gettimeofday"),)),
        "daemon": lambda label: run(label, truncations=(
            Time32Truncation("daemon", 7, 7, "put_old_timespec32", 2147483656, -2147483640, 265),)),
        "openssl": lambda label: run(label, "", 1),  # exit status changed
    }
    for name, start in broken_from.items():
        cut = LABELS.index(start) if start else len(LABELS)
        made[name] = (run(REFERENCE.label), *(ways.get(name, ways["openssl"])(label) if n >= cut else run(label)
                                              for n, label in enumerate(LABELS)))
    return made


def test_the_ladder_is_the_issue_s_and_the_user_s_times_come_after_it() -> None:
    assert [(m.label, m.at) for m in MOMENTS] == [
        ("reference", "2036-01-01T00:00:00Z"), ("ntp2036", "2036-02-07T06:28:16Z"),
        ("y2038", "2038-01-19T03:14:08Z"), ("y2038_day", "2038-01-20T03:14:08Z"),
        ("x509_2050", "2050-01-01T00:00:00Z"), ("leap2100", "2100-03-01T00:00:00Z"),
        ("u32_2106", "2106-02-07T06:28:16Z")]
    assert parse_time("2038-01-19T03:14:08Z") == 2**31 and parse_time("2106-02-07T06:28:16Z") == 2**32
    assert parse_time("2036-02-07T06:28:16Z") == 2**32 - 2208988800  # NTP's era 0 ends (seconds since 1900)
    mine = Moment("y2040", "2040-01-01T00:00:00Z")
    assert horizon_moments((mine,))[-1] == mine
    with pytest.raises(SandboxError, match="--at y2038: a horizon's own label"):
        horizon_moments((Moment("y2038", "2040-01-01T00:00:00Z"),))


def test_the_first_horizon_a_program_broke_at_is_named() -> None:
    for name, runs in fates(date="y2038", sqlite3="y2038", daemon="y2038_day", openssl="x509_2050",
                            tar="u32_2106").items():
        first, at_each = first_broken("time32", runs, 30)
        expected = {"date": "y2038", "sqlite3": "y2038", "daemon": "y2038_day", "openssl": "x509_2050",
                    "tar": "u32_2106"}[name]
        assert first == expected, name
        assert list(at_each) == list(LABELS)
        assert [label for label, v in at_each.items() if v == "broke"] == list(LABELS[LABELS.index(expected):])
    assert first_broken("time32", fates(touch="")["touch"], 30)[0] == ""
    assert first_broken("time32", (), 30) == ("", {})


def test_a_program_that_breaks_only_on_the_leap_day_is_found_there() -> None:
    runs = fates(cal="")["cal"]
    leap = LABELS.index("leap2100") + 1
    runs = runs[:leap] + (run("leap2100", "Feb 29\n" * 2, 3),) + runs[leap + 1:]
    first, at_each = first_broken("time64", runs, 30)
    assert first == "leap2100" and at_each["u32_2106"] != "broke"


def audit(name: str, runs: tuple[RunFacts, ...]) -> BinaryAudit:
    record = BinaryAudit(Origin("debian12-armhf:", f"usr/bin/{name}"), "armhf", 32, "pie", "dynamic",
                         "/lib/ld-linux-armhf.so.3", "glibc", ("libc.so.6",), ("time",), (), (), {}, "time32", "r",
                         build_id="ab" * 20)
    record.runtime = runtime_record(record, f"/usr/bin/{name}", runs, 30)
    return record


def test_the_table_the_json_and_the_chart_show_the_first_broken_horizon() -> None:
    audits = [audit(name, runs) for name, runs in fates(date="y2038", daemon="y2038_day", tar="").items()]
    result = RuntimeAudit(StaticAudit(audits))
    table = horizon_table(result)
    assert table[0].split() == ["program", *LABELS, "first", "broke"]
    assert table[1].split() == ["usr/bin/date", "held", "BROKE", "BROKE", "BROKE", "BROKE", "BROKE", "y2038"]
    assert table[2].split()[-1] == "y2038_day" and table[3].split()[-1] == "never"
    assert all(len(ln) <= 100 for ln in table)
    assert "\n".join(table) in report(result, horizons=True) and "first broke" not in report(result)
    record = result.to_json()["audits"][1]["runtime"]
    assert record["first_broken"] == "y2038_day" and record["at_each"]["y2038"] == "not-exercised"  # held
    assert record["reason"].startswith("kernel truncated: put_old_timespec32 (2147483656→-2147483640)")

    document = json.loads(json.dumps({"inputs": ["debian12-armhf:"], **result.to_json()}))
    svg = ET.fromstring(horizon_chart(document))
    rects = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.find("{http://www.w3.org/2000/svg}title")
             is not None]
    assert len(rects) == 3 * len(LABELS)
    outlined = [r.find("{http://www.w3.org/2000/svg}title").text for r in rects if r.get("stroke") == "#000"]
    assert outlined == ["usr/bin/date at y2038: broke", "usr/bin/daemon at y2038_day: broke"]
    page = page_html(document)
    assert "<h2>Programs against horizons</h2>" in page and page.count("<tr>") == 4
    assert "<svg" not in page_html({"inputs": [], "audits": [a.to_json() for a in audits[:0]]})


def test_horizons_need_the_runtime_audit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rehearse", "--static", "--horizons", "/bin/true"]) == 2
    assert "--horizons runs programs: it cannot go with --static" in capsys.readouterr().err


def test_a_firmware_image_runs_as_its_own_root_at_every_horizon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """`rehearse --horizons fw.tar.gz`: the image is unpacked, goes whole
    into the boot as a root filesystem, and its program runs in it at the
    reference and each horizon (the boot itself faked: what it is handed
    is checked)."""
    if not shutil.which("arm-linux-gnueabihf-gcc"):
        pytest.skip("no arm-linux-gnueabihf-gcc here")
    tree = tmp_path / "tree"
    (tree / "bin").mkdir(parents=True)
    (tree / "usr/bin").mkdir(parents=True)
    source = tmp_path / "clock.c"
    source.write_text("#include <stdio.h>\n#include <time.h>\nint main(void) { printf(\"%ld\\n\", (long)time(0)); }\n")
    subprocess.run(["arm-linux-gnueabihf-gcc", "-static", "-o", str(tree / "usr/bin/clock"), str(source)], check=True)
    (tree / "bin/sh").symlink_to("/usr/bin/clock")  # absolute, as images have them
    image = tmp_path / "fw.img"
    subprocess.run(["tar", "czf", str(image), "-C", str(tree), "."], check=True)
    handed = []

    def boot(plan: runtime.BootPlan, evidence: Path) -> list[object]:
        handed.append((plan, [(prefix, sorted(p.relative_to(root).as_posix() for p in root.rglob("*")))
                              for prefix, root in plan.trees]))
        return []
    monkeypatch.setattr(runtime, "prepare_target", lambda machine: SimpleNamespace(kernel=SimpleNamespace(key="k")))
    monkeypatch.setattr(runtime, "boot_and_run", boot)
    monkeypatch.setattr(runtime, "build_shim", lambda machine: None)
    monkeypatch.setenv("Y2038_RESULTS", str(tmp_path / "results"))
    code = main(["rehearse", "--horizons", "--at", "mine=2040-01-01T00:00:00Z", str(image)])
    out = capsys.readouterr().out
    assert code == 0  # no run came back: not-exercised, nothing broke
    ((plan, trees),) = handed
    ((prefix, files),) = trees
    assert prefix.startswith("userlands/rootfs-") and files == ["bin", "bin/sh", "usr", "usr/bin", "usr/bin/clock"]
    assert [c.shell.split()[1] for c in plan.commands if c.kind == CLOCK] == [
        str(parse_time(m.at)) for m in horizon_moments((Moment("mine", "2040-01-01T00:00:00Z"),))]
    runs = [c.shell for c in plan.commands if c.kind == RUN]
    assert len(runs) == 8 and all(f"/{prefix} " in r and " -- /usr/bin/clock" in r for r in runs)
    assert plan.rtc == REFERENCE.at
    assert "usr/bin/clock" in out
