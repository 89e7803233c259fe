"""The system rehearsal's pure parts: observation parsing on captured text,
the verdict rules, the facts of each unit, the marks of the night."""
from __future__ import annotations

import json

import pytest

from sandbox.base.timefmt import parse_time
from sandbox.system import facts as system_facts
from sandbox.system import lines, observe, phases
from sandbox.system.verdict import UnitFacts, error_kind, judge

SHOW = """Id=cron.service
LoadState=loaded
ActiveState=active
SubState=running
Result=success
NRestarts=0
ControlGroup=/system.slice/cron.service

Id=chrony.service
LoadState=loaded
ActiveState=failed
SubState=failed
Result=core-dump
NRestarts=2
ControlGroup=/system.slice/chrony.service

Id=ghost.service
LoadState=not-found
ActiveState=inactive
SubState=dead
"""


def test_unit_blocks_read_every_unit_and_its_keys():
    units = observe.unit_blocks(SHOW)
    assert sorted(units) == ["chrony.service", "cron.service", "ghost.service"]
    assert units["chrony.service"]["Result"] == "core-dump"
    assert units["cron.service"]["ControlGroup"] == "/system.slice/cron.service"


def test_unit_states_drop_the_failed_mark():
    text = ("cron.service   loaded active   running Regular background program processing daemon\n"
            "● chrony.service loaded failed failed  chrony, an NTP client/server\n")
    assert observe.unit_states(text) == {"cron.service": "active/running", "chrony.service": "failed/failed"}


def test_processes_map_to_the_unit_of_their_cgroup():
    text = ("1\tsystemd\t/init.scope\t12\t0\n"
            "215\tcron\t/system.slice/cron.service\t3\t1\n"
            "301\tsh\t/\t0\t0\n"
            "garbage line\n")
    found = observe.processes(text)
    assert [(p.pid, p.unit) for p in found] == [(1, "init.scope"), (215, "cron.service"), (301, "")]
    assert found[1].time32_syscalls == 3 and found[1].time32_truncations == 1


def test_journal_entries_prefer_the_unit_pid_1_speaks_of():
    text = "\n".join(json.dumps(e) for e in (
        {"__REALTIME_TIMESTAMP": "2147483650000000", "UNIT": "chrony.service", "_SYSTEMD_UNIT": "init.scope",
         "SYSLOG_IDENTIFIER": "systemd", "_PID": "1", "PRIORITY": "3",
         "MESSAGE": "chrony.service: Main process exited, code=dumped, status=6/ABRT"},
        {"__REALTIME_TIMESTAMP": "2147483651000000", "_SYSTEMD_UNIT": "cron.service", "SYSLOG_IDENTIFIER": "cron",
         "_PID": "215", "MESSAGE": [86, 97, 108, 117, 101]},
    )) + "\nnot json\n"
    entries = observe.journal_entries(text)
    assert [(e.unit, e.pid) for e in entries] == [("chrony.service", 1), ("cron.service", 215)]
    assert entries[1].message == "Value"


def test_ticks_by_writer():
    text = "cron 2038-01-19T03:13:00Z\ntimer 2038-01-19T03:13:00Z\ncron 2038-01-19T03:14:00Z\nnoise\n"
    assert observe.ticks(text) == {"cron": [parse_time("2038-01-19T03:13:00Z"), parse_time("2038-01-19T03:14:00Z")],
                                   "timer": [parse_time("2038-01-19T03:13:00Z")]}


@pytest.mark.parametrize("text,code,ok", [
    ("CONNECTED(00000003)\n---\nVerify return code: 0 (ok)\n", 0, True),
    ("Verify return code: 9 (certificate is not yet valid)\n", 9, False),
    ("connect: Connection refused\nconnect:errno=111\n", None, False),
])
def test_tls_result(text, code, ok):
    result = observe.tls_result(text)
    assert (result.code, result.ok) == (code, ok)


@pytest.mark.parametrize("line,kind", [
    ("clock_gettime: Value too large for defined data type", "EOVERFLOW"),
    ("Assertion 'clock_gettime(map_clock_id(clock_id), &ts) == 0' failed at src/basic/time-util.c:54", "assertion"),
    ("Caught <ABRT>, dumped core as pid 412.", "crash"),
    ("cron.service: Failed with result 'core-dump'.", "failed"),
    ("Jan  1 00:00:05 1970 something", "year 1970"),
    ("Started cron.service - Regular background program processing daemon.", ""),
])
def test_error_kinds(line, kind):
    assert error_kind(line) == kind


@pytest.mark.parametrize("facts,verdict,reason", [
    (UnitFacts("a.service", "active/running", "failed/failed", "core-dump", errors=("crash: x",)),
     "broke", "failed, result core-dump (crash: x)"),
    (UnitFacts("a.service", "active/running", "active/running", restarts=3), "broke", "restarted 3 time(s)"),
    (UnitFacts("cron.service", "active/running", "active/running", missed="missed 100 of 400 minutes"),
     "broke", "missed 100 of 400 minutes"),
    (UnitFacts("a.service", "active/running", "active/running", truncations=("a[3] time 2147483650 -> -2",)),
     "broke", "the kernel truncated a time: a[3] time 2147483650 -> -2"),
    (UnitFacts("a.service", "inactive/dead", "inactive/dead", active_in_span=False),
     "not-exercised", "never active in the span"),
    (UnitFacts("a.service", "active/running", "active/running", time32_calls=5),
     "calls-time32", "5 time32 call(s), nothing broke"),
    (UnitFacts("a.service", "active/running", "active/running"), "ok", "active/running -> active/running"),
])
def test_rules_first_match_decides(facts, verdict, reason):
    decided = judge(facts)
    assert (decided.verdict, decided.reason) == (verdict, reason)


def test_missed_runs_counts_the_minutes_without_a_tick():
    start, end = parse_time("2038-01-19T03:00:00Z"), parse_time("2038-01-19T04:00:00Z")
    every = [start + 60 * m for m in range(60)]
    assert system_facts.missed_runs(every, [(start, end)]) == ""
    until_rollover = [t for t in every if t < phases.ROLLOVER]
    missed = system_facts.missed_runs(until_rollover, [(start, end)])
    assert missed.startswith("missed 44 of 59 minutes, first 2038-01-19T03:15:00Z")
    assert system_facts.missed_runs([], [(start, end)]).startswith("no run between")


def test_after_a_step_only_the_spans_the_clock_ran_through_count():
    start, night_end = parse_time("2038-01-19T03:00:00Z"), parse_time("2038-01-19T03:30:00Z")
    at = parse_time("2106-02-07T06:20:00Z")
    night = [start + 60 * m for m in range(30)]
    step = [at + 60 * m for m in range(1, 5)]
    observed = system_facts.Observed(start, at + 300, "", "", night_end=night_end, step_at=at)
    assert observed.spans() == ((start, night_end), (at, at + 300))
    assert system_facts.missed_runs(night + step, observed.spans()) == ""  # not the 36 million minutes between
    assert system_facts.missed_runs(night, observed.spans()) == (
        "after the step to 2106-02-07T06:20:00Z: no run between 2106-02-07T06:20:00Z and 2106-02-07T06:25:00Z")


def test_unit_facts_join_states_errors_and_time32_by_cgroup():
    start = parse_time("2038-01-18T22:00:00Z")
    after = SHOW.replace("Id=cron.service\nLoadState=loaded\nActiveState=active\nSubState=running\nResult=success\n"
                         "NRestarts=0", "Id=cron.service\nLoadState=loaded\nActiveState=active\nSubState=running\n"
                         "Result=success\nNRestarts=1")
    before = SHOW.replace("ActiveState=failed\nSubState=failed\nResult=core-dump\nNRestarts=2",
                          "ActiveState=active\nSubState=running\nResult=success\nNRestarts=0")
    timeline = [{"at": start, "states": "", "processes": "215\tcron\t/system.slice/cron.service\t7\t0\n"}]
    journal = [observe.JournalEntry(2147483650 * 10**6, "", "cron", 215, 3, "time: Value too large"),
               observe.JournalEntry((start - 60) * 10**6, "", "cron", 215, 3, "old: Value too large")]
    ticks = "".join(f"cron {phases.format_time(start + 60 * m)}\n" for m in range(2))
    observed = system_facts.Observed(start, start + 3600, before, after, timeline, journal, ticks=ticks)
    by_unit = {f.unit: f for f in system_facts.unit_facts(observed)}
    assert sorted(by_unit) == ["chrony.service", "cron.service"]  # not-found units are left out
    cron = by_unit["cron.service"]
    assert cron.restarts == 1 and cron.time32_calls == 7
    assert cron.errors == ("EOVERFLOW: cron[215]: time: Value too large",)  # the baseline's line is not the rollover's
    assert cron.missed.startswith("missed 57 of 59 minutes, first 2038-01-18T22:02:00Z")
    assert by_unit["chrony.service"].after == "failed/failed"
    assert judge(by_unit["chrony.service"]).verdict == "broke"


def test_pid_1s_line_naming_a_unit_is_that_units_not_init_scope():
    """Debian 13 armhf: PID 1's boot-time "systemd-modules-load.service: Failed ..."
    on the console once made init.scope broke."""
    pids = {1: "init.scope", 112: "chrony.service"}
    line = "systemd-modules-load.service: Failed with result 'exit-code'."
    assert system_facts.line_unit(1, line, pids) == "systemd-modules-load.service"
    assert system_facts.line_unit(1, "Caught <SEGV>, dumped core as pid 9.", pids) == "init.scope"
    assert system_facts.line_unit(112, "chrony.service: Fatal error", pids) == "chrony.service"
    observed = system_facts.Observed(0, 1, "", "", [{"processes": "1\tsystemd\t/init.scope\t3\t0\n"}],
                                     kernel_log=f"[   10.397884] systemd[1]: {line}")
    errors = system_facts.errors_by_unit(observed, system_facts.pid_units(observed.timeline))
    assert list(errors) == ["systemd-modules-load.service"]


def test_marks_every_hour_the_rollover_and_the_end():
    start, end = parse_time(phases.DEFAULT_START) + 30, parse_time(phases.DEFAULT_END)
    found = [phases.format_time(t) for t in phases.marks(start, end)]
    assert found[0] == "2038-01-18T23:00:00Z" and found[-1] == "2038-01-19T06:00:00Z"
    assert "2038-01-19T03:15:08Z" in found and len(found) == 9


def test_table_fits_100_columns():
    facts = [UnitFacts("a-very-long-unit-name-that-goes-on-and-on.service", "active/running", "failed/failed",
                       "core-dump", errors=("crash: " + "x" * 200,))]
    table = lines.table(facts, [judge(f) for f in facts])
    assert all(len(line) <= lines.WIDTH for line in table)
    assert "broke" in table[2]


def test_a_clock_moved_away_from_the_rtc_has_no_night():
    """Debian 12 armhf with the RTC at 04:00 past the rollover and a kernel that
    refused it: systemd advanced the clock to its build time, 2026-04-27T19:49:09Z;
    a night from there to 2038 would never end."""
    start, end = parse_time("2038-01-19T04:00:00Z"), parse_time("2038-01-19T06:00:00Z")
    assert phases.clock_moved(start + 30, start, end) == ""
    moved = phases.clock_moved(parse_time("2026-04-27T19:49:09Z"), start, end)
    assert moved.startswith("the system's clock reads 2026-04-27T19:49:09Z once settled, not the RTC's 2038-01-19T04")
    assert phases.clock_moved(start + 3600 * 5, start, end)  # past the end
