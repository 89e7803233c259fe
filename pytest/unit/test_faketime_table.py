"""The faketime-versus-real-clock table (sandbox/report/faketime.py,
sandbox/app/evidence_docs.py) from observations, without booting."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sandbox.app.evidence_docs import faketime_doc
from sandbox.base.machines import FLAVOURS
from sandbox.base.timefmt import parse_time
from sandbox.report.faketime import (BEGIN, END, HANGS, NOT_FAKED, SAME, WRONG, Pair, Run, compare, markdown,
                                     pairs, replace_table)
from sandbox.run.observations import Observation
from sandbox.scenario.catalogue import parse_catalogue
from sandbox.scenario.parser import parse_scenario
from sandbox.scenario.userlands import parse_userlands

CATALOGUE = parse_catalogue(textwrap.dedent("""\
    [probe.clock]
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
    calls.time = { seconds = "time" }
    [probe.mqueue]
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
    calls.mq_timedsend = { elapsed = "number", woke = "time", tv_sec = "time", outcome = "text" }
    [probe.ipc]
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
    calls.shmget = { entry = "text" }
    """), "manifest.toml")
USERLANDS = parse_userlands(textwrap.dedent("""\
    mirror = "m"
    keyring = "k"
    packages = ["libfaketime"]
    [userland.pc32]
    suite = "bookworm"
    arch = "i386"
    """), "userlands.toml")
SCENARIO = parse_scenario(textwrap.dedent("""\
    title = "t"
    rtc = "2026-12-01T00:00:00Z"
    machines = ["x86_64"]
    [[step]]
    phase = "faked-clock"
    probe = "clock"
    userland = "pc32"
    faketime = "2038-01-19T03:14:30Z"
    [[step]]
    phase = "faked-mq"
    probe = "mqueue"
    userland = "pc32"
    faketime = "2038-01-19T03:14:30Z"
    args = ["libc+3"]
    [[step]]
    phase = "faked-ipc"
    probe = "ipc"
    userland = "pc32"
    faketime = "2038-01-19T03:14:30Z"
    [[step]]
    set-clock = "2038-01-19T03:14:30Z"
    [[step]]
    phase = "real-clock"
    probe = "clock"
    userland = "pc32"
    [[step]]
    phase = "real-mq"
    probe = "mqueue"
    userland = "pc32"
    args = ["+3"]
    [[step]]
    phase = "real-ipc"
    probe = "ipc"
    userland = "pc32"
    """), "scenarios/faketime/t.toml", CATALOGUE, {"x86_64": FLAVOURS}, USERLANDS)
PRESENT = parse_time("2026-12-01T00:00:10Z")
FAKED = parse_time("2038-01-19T03:14:31Z")


def obs(phase: str, probe: str, flavour: str, call: str, errno: str | None = None, **values: object) -> Observation:
    return Observation("faketime/t", "x86_64", phase, probe, flavour, call, values, errno)  # type: ignore[arg-type]  # test data, any mapping


OBSERVATIONS = (
    obs("faked-clock", "clock", "time32-syscall", "time", seconds=PRESENT),  # a raw syscall: not faked
    obs("faked-clock", "clock", "time32-libc", "time", seconds=FAKED - 2**32),  # wrapped: wrong
    obs("faked-clock", "clock", "time64", "time", seconds=FAKED),
    obs("faked-ipc", "ipc", "time64", "shmget", entry="libc"),
    obs("real-clock", "clock", "time32-syscall", "time", seconds=FAKED - 2**32 + 60),
    obs("real-clock", "clock", "time32-libc", "time", "EOVERFLOW"),
    obs("real-clock", "clock", "time64", "time", seconds=FAKED + 60),
    obs("real-ipc", "ipc", "time64", "shmget", entry="libc"),
    obs("real-mq", "mqueue", "time64", "mq_timedsend", "ETIMEDOUT", elapsed=3.0),
)


def test_each_faked_step_is_paired_with_its_later_twin_with_the_same_arguments() -> None:
    found = [(p.faked.phase, p.real.phase, p.present) for p in pairs(SCENARIO)]
    # faked-mq's twin has other arguments ("+3"): no pair
    assert found == [("faked-clock", "real-clock", parse_time("2026-12-01T00:00:00Z")),
                     ("faked-ipc", "real-ipc", parse_time("2026-12-01T00:00:00Z"))]


def test_a_call_is_same_not_faked_or_wrong_against_the_real_clock() -> None:
    clock = pairs(SCENARIO)[0]
    cells = {c.flavour: c for c in compare(clock, OBSERVATIONS)}
    assert cells["time64"].verdict == SAME
    assert (cells["time32-syscall"].verdict, cells["time32-syscall"].faked) == (NOT_FAKED, "2026-12-01 00:00")
    assert (cells["time32-libc"].verdict, cells["time32-libc"].real) == (WRONG, "EOVERFLOW")
    assert compare(pairs(SCENARIO)[1], OBSERVATIONS) == []  # shmget reads no time: no row


def test_the_kernels_present_wrapped_to_32_bits_is_not_faked_either() -> None:
    """Faked 2106 while the kernel is in 2038: a raw 32-bit read shows the
    kernel's 2038 wrapped to 1901, which is the kernel's clock, not a fake."""
    clock = pairs(SCENARIO)[0]
    kernel_2038 = parse_time("2038-01-19T03:15:00Z")
    wrapped = (obs("faked-clock", "clock", "time32-syscall", "time", seconds=kernel_2038 - 2**32),
               obs("real-clock", "clock", "time32-syscall", "time", seconds=4))
    (cell,) = compare(Pair(clock.faked, clock.real, kernel_2038), wrapped)
    assert (cell.verdict, cell.faked) == (NOT_FAKED, "1901-12-13 20:46")
    far = (obs("faked-clock", "clock", "time32-syscall", "time", seconds=kernel_2038 - 2**32 + 86_400), wrapped[1])
    assert compare(Pair(clock.faked, clock.real, kernel_2038), far)[0].verdict == WRONG


def test_a_wait_that_never_woke_hangs_and_one_of_another_length_is_wrong() -> None:
    mq = next(s for s in SCENARIO.probe_steps if s.phase == "faked-mq")
    real = next(s for s in SCENARIO.probe_steps if s.phase == "real-mq")
    pair = Pair(mq, real, PRESENT)
    never = obs("faked-mq", "mqueue", "time64", "mq_timedsend", outcome="killed: no wake-up 5 s after the target")
    (cell,) = compare(pair, (never, *OBSERVATIONS))
    assert (cell.verdict, cell.faked, cell.real) == (HANGS, "never woke", "ETIMEDOUT 3 s")
    early = obs("faked-mq", "mqueue", "time64", "mq_timedsend", "ETIMEDOUT", elapsed=0.01)
    assert compare(pair, (early, *OBSERVATIONS))[0].verdict == WRONG
    on_time = obs("faked-mq", "mqueue", "time64", "mq_timedsend", "ETIMEDOUT", elapsed=2.2)
    assert compare(pair, (on_time, *OBSERVATIONS))[0].verdict == SAME


def test_the_table_has_a_column_per_userland_flavour_and_marks_what_differs() -> None:
    text = markdown([Run("x86_64", SCENARIO, OBSERVATIONS, {"pc32": "libfaketime 0.9.10-2.1"})])
    assert "#### x86_64: pc32, FAKETIME=`@2038-01-19 03:14:30`" in text
    assert "| call | `time32-syscall` | `time32-libc` | `time64` |" in text
    assert "| clock.time | **not faked**: 2026-12-01 00:00 (real: 1901-12-13 20:47) | " \
           "**wrong**: 1901-12-13 20:46 (real: EOVERFLOW) | same |" in text
    assert "\nlibfaketime 0.9.10-2.1\n" in text
    assert "Cells: same 1, not faked 1, hangs 0, wrong 1." in text


def test_a_static_build_under_faketime_is_its_own_column_against_the_dynamic_twin() -> None:
    scenario = parse_scenario(textwrap.dedent("""\
        title = "t"
        rtc = "2026-12-01T00:00:00Z"
        machines = ["x86_64"]
        [[step]]
        phase = "faked-static"
        probe = "clock"
        userland = "pc32"
        faketime = "2038-01-19T03:14:30Z"
        linkage = "static"
        [[step]]
        set-clock = "2038-01-19T03:14:30Z"
        [[step]]
        phase = "real"
        probe = "clock"
        userland = "pc32"
        """), "scenarios/faketime/s.toml", CATALOGUE, {"x86_64": FLAVOURS}, USERLANDS)
    (pair,) = pairs(scenario)
    assert (pair.faked.phase, pair.real.phase) == ("faked-static", "real")
    seen = (obs("faked-static", "clock", "time64", "time", seconds=PRESENT),
            obs("real", "clock", "time64", "time", seconds=FAKED))
    text = markdown([Run("x86_64", scenario, seen, {})])
    assert "| clock.time | **not faked**: 2026-12-01 00:00 (real: 2038-01-19 03:14) |" in text
    assert "| call | `time64 static` |" in text


def test_the_table_replaces_only_the_text_between_the_markers() -> None:
    doc = f"# head\n{BEGIN}\nold\n{END}\ntail\n"
    assert replace_table(doc, "new\n") == f"# head\n{BEGIN}\nnew\n{END}\ntail\n"
    with pytest.raises(ValueError, match="markers"):
        replace_table("# no markers\n", "new\n")


def test_the_doc_is_written_from_a_results_folder_of_the_repository_scenario(tmp_path: Path) -> None:
    """scenarios/faketime/amd64.toml's faked and real clock phases, as run.json
    and observations.jsonl keep them."""
    run = tmp_path / "results" / "faketime-amd64" / "x86_64"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"scenario": "faketime/amd64", "machine": "x86_64", "userlands": [
        {"name": "debian12-amd64", "packages": ["libfaketime:amd64=0.9.10-2.1", "libc6:amd64=2.36-9+deb12u14",
                                                 "dash:amd64=0.5.12-2"]}]}))
    records = [obs("faked-clock", "clock", "native64", "time", seconds=PRESENT).to_record(),
               obs("real-clock", "clock", "native64", "time", seconds=FAKED).to_record()]
    for record in records:
        record["scenario"] = "faketime/amd64"
    (run / "observations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    doc = tmp_path / "clock-sources.md"
    doc.write_text(f"# Moving the clock\n{BEGIN}\n{END}\nafter\n")
    faketime_doc([tmp_path / "results"], doc)
    text = doc.read_text()
    assert "| clock.time | **not faked**: 2026-12-01 00:00 (real: 2038-01-19 03:14) |" in text
    assert "#### x86_64: debian12-amd64, FAKETIME=`@2038-01-19 03:14:30`" in text
    assert "\nlibfaketime 0.9.10-2.1, libc6 2.36-9+deb12u14\n" in text
    assert text.endswith(f"{END}\nafter\n") and "dash" not in text
