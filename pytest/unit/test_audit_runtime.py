"""The runtime audit's pure parts (sandbox/audit/runtime_*.py, commands.py):
the plan of guest commands, what a run's kernel log and shim log say, the
verdict rules, the lines. A captured armhf run (sqlite3 and dash of Debian
12 across the rollover) is replayed through the plan and the verdicts.
Nothing boots; the shim is compiled with the cross compilers.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.app.verbs import parse_moments
from sandbox.audit.runtime import audit as runtime, lines as runtime_lines
from sandbox.audit.commands import Command, load_commands, parse_override
from sandbox.audit.inputs import Candidate
from sandbox.audit.record import BinaryAudit, Origin
from sandbox.audit.runtime.audit import (RuntimeAudit, item_of, refuses_time32, runnable, runtime_record, tree_name,
                                   _runs_of)
from sandbox.audit.runtime.boot import Ran, overlay_archive
from sandbox.audit.runtime.facts import (ProcessCount, Refusal, Time32Call, Time32Truncation, clock_readings,
                                         process_counts, refusals, shape, time32_calls, time32_truncations)
from sandbox.audit.runtime.plan import (CLOCK, COLLECT, DEFAULT_MOMENTS, RUN, SETUP, Moment, Subject, plan,
                                        run_shell, split_collected)
from sandbox.audit.verdict import TIME64
from sandbox.audit.runtime.verdict import (BROKE, CALLS_TIME32, NOT_EXERCISED, SAFE, Runs, RunFacts,
                                           runtime_verdict)
from sandbox.build.kconfig import options
from sandbox.build.own_kernel import check_config, own_kernel
from sandbox.audit.shim import SOURCE, shim_command
from sandbox.audit.static import StaticAudit, audit_pairs
from sandbox.audit.symbols import load_symbols
from sandbox.base.errors import SandboxError
from sandbox.base.evidence import Evidence
from sandbox.base.machines import X86_64
from sandbox.build.deps import cflags32
from sandbox.base.machines import MACHINES
from sandbox.base.paths import REPO

CAPTURED = REPO / "pytest" / "data" / "rehearse" / "armhf-sqlite3-dash.jsonl"


def record(name: str = "usr/bin/sqlite3", verdict: str = "time32", kind: str = "pie",
           linkage: str = "dynamic", machine: str = "armhf", input: str = "debian12-armhf:sqlite3") -> BinaryAudit:
    return BinaryAudit(Origin(input, name), machine, 32, kind, linkage, "/lib/ld-linux-armhf.so.3", "glibc",
                       (), ("gettimeofday",), (), (), {}, verdict, "1 time32 name(s)")


def run(label: str, exit_code: int = 0, stdout: str = "", stderr: str = "", *,
        time32: tuple[Time32Call, ...] = (), refused: tuple[Refusal, ...] = (),
        counted: tuple[ProcessCount, ...] = ()) -> RunFacts:
    return RunFacts(label, "2038-01-19T03:10:00Z", exit_code, stdout, stderr, 0.1, time32, refused, (), counted)


# -- the captured run ------------------------------------------------------------------
SUBJECTS = [
    Subject(0, "debian12-armhf", "/usr/bin/sqlite3", load_commands().for_file("sqlite3"), True),
    Subject(1, "debian12-armhf", "/bin/dash", load_commands().for_file("dash"), True),
]


def captured() -> list[Ran]:
    """The captured transcript, each line paired with the command the plan makes
    (captured before the runs were counted by /tools/time32count)."""
    lines = [json.loads(line) for line in CAPTURED.read_text().splitlines()]
    commands = plan(SUBJECTS, DEFAULT_MOMENTS, 30, count=False)
    assert [c.shell for c in commands] == [line["shell"] for line in lines]
    return [Ran(c, line["exit"], line["stdout"], line["stderr"], line["seconds"]) for c, line in zip(commands, lines)]


def test_the_plan_is_the_captured_one_and_both_programs_broke_after_the_rollover() -> None:
    ran = captured()
    sqlite = _runs_of(SUBJECTS[0], ran, DEFAULT_MOMENTS)
    assert [r.label for r in sqlite] == ["before", "after", "y2106"]
    assert sqlite[0].stdout == "2147483400|2038-01-19 03:10:00\n"
    assert [r.refusals for r in sqlite[1:]] == [(Refusal("sqlite3", 75, "gettimeofday"),),
                                                 (Refusal("sqlite3", 91, "gettimeofday"),)]
    verdict = runtime_record(record(), "sqlite3 ...", sqlite, 30)
    assert verdict["verdict"] == BROKE
    # what it printed is whatever glibc left in the struct it refused to fill
    assert str(verdict["reason"]).startswith("glibc EOVERFLOW: gettimeofday; after: printed 1980-05-15, "
                                             "the clock read 2038-01-19; y2106: printed 2027-04-06")
    dash = _runs_of(SUBJECTS[1], ran, DEFAULT_MOMENTS)
    # children included: touch's utimensat_time32 counts in dash's runs
    touch = "userlands/debian12-armhf/bin/touch"
    assert dash[0].time32 == (Time32Call("touch", 67, "utimensat_time32", touch),
                              Time32Call("touch", 68, "utimensat_time32", touch))
    verdict = runtime_record(record("bin/dash"), "dash ...", dash, 30)
    assert verdict["verdict"] == BROKE
    assert "glibc EOVERFLOW: stat64; after: exit 0→127 (/bin/dash: 1: touch: Value too large" in \
        str(verdict["reason"])


def test_the_plan_sets_log_mounts_each_userland_once_and_moves_the_clock_between_moments() -> None:
    commands = plan(SUBJECTS, DEFAULT_MOMENTS, 30)
    kinds = [c.kind for c in commands]
    assert kinds[:3] == [SETUP] * 3 and all(c.must_succeed for c in commands[:3])
    assert commands[1].shell == "/tools/sysctl kernel.time32_syscalls log"
    unlogged = plan(SUBJECTS, DEFAULT_MOMENTS, 30, log=False)
    assert "/tools/sysctl kernel.time32_syscalls log" not in [c.shell for c in unlogged]
    assert kinds.count(CLOCK) == 3 and kinds.count(RUN) == 6 and kinds.count(COLLECT) == 6
    clocks = [c.shell for c in commands if c.kind == CLOCK]
    assert clocks[0].startswith("/tools/settime 2147483400 settimeofday")
    assert clocks[1].startswith("/tools/settime 2147483670 settimeofday")
    assert clocks[2].startswith("/tools/settime 4294967300 settimeofday")
    # each run is followed by its collection, same subject and moment
    for first, second in zip(commands, commands[1:]):
        if first.kind == RUN:
            assert (second.kind, second.subject, second.moment) == (COLLECT, first.subject, first.moment)


def test_a_run_is_bounded_and_only_a_32bit_glibc_program_gets_the_shim() -> None:
    with_shim = run_shell(SUBJECTS[0], 1, 12.5)
    assert with_shim.startswith("/tools/inroot /userlands/debian12-armhf 12.5 PATH=")
    assert " LD_PRELOAD=/.y2038/time32-refusals.so Y2038_SHIM_LOG=/tmp/.y2038-refusals-0-1.log -- /usr/bin/sqlite3" \
        in with_shim
    without = run_shell(Subject(3, "debian12-amd64", "/usr/bin/date", Command(("+%s",)), False), 0, 30)
    assert "LD_PRELOAD" not in without and without.endswith("/usr/bin/date +%s </dev/null")
    shell = run_shell(Subject(4, "debian12-armhf", "/usr/bin/openssl", Command(shell='"$0" version'), True), 0, 30)
    assert shell.endswith(" -- /bin/sh -c '\"$0\" version' /usr/bin/openssl </dev/null")


# -- facts ---------------------------------------------------------------------------
def test_kernel_log_lines_become_calls_whoever_made_them() -> None:
    """Even a program named timeout: the runs' own wrapper (/tools/inroot) is
    a 64-bit time_t program, so no line is the wrapper's (busybox's timeout,
    an old binary on 32-bit machines, used to make time32 calls)."""
    log = ("[    1.19] time32: timeout[52] called clock_nanosleep_time32 (allowed)\n"
           "[    1.41] time32: my prog[59] called utimensat_time32 (allowed)\n"
           "[    1.42] time32: x[60] called futex_time32 (denied)\n"
           "[    1.43] rtc: something else\n"
           "[    1.44] time32: y[61] called time32 (trapped)\n")
    assert time32_calls(log) == (Time32Call("timeout", 52, "clock_nanosleep_time32"),
                                 Time32Call("my prog", 59, "utimensat_time32"), Time32Call("x", 60, "futex_time32"),
                                 Time32Call("y", 61, "time32"))


def test_truncation_lines_become_truncations_with_what_the_program_got() -> None:
    log = ("[    2.01] time32: time32[81] tgid 81 truncated 2147483670 to -2147483626 in put_old_timespec32 "
           "(syscall 265)\n"
           "[    2.02] time32: my prog[90] tgid 88 passed -2147483626 in get_old_timespec32 (syscall 162)\n"
           "[    2.03] time32: timeout[52] tgid 52 truncated 2147483671 to -2147483625 in time (syscall 13)\n"
           "[    2.04] time32: time32[81] called clock_gettime32 (allowed)\n"
           "[    2.05] time32: time32[81] tgid 81 exit: 27 time32 syscalls, 6 truncations\n")
    assert time32_truncations(log) == (
        Time32Truncation("time32", 81, 81, "put_old_timespec32", 2147483670, -2147483626, 265),
        Time32Truncation("my prog", 90, 88, "get_old_timespec32", -2147483626, None, 162),
        Time32Truncation("timeout", 52, 52, "time", 2147483671, -2147483625, 13))
    assert [t.describe() for t in time32_truncations(log)][:2] == [
        "time32[81] put_old_timespec32 2147483670 -> -2147483626", "my prog[90] get_old_timespec32 passed -2147483626"]
    assert time32_calls(log) == (Time32Call("time32", 81, "clock_gettime32"),)


def test_report_lines_naming_the_tgid_and_the_executable_are_read() -> None:
    """kernel-series 0021 names the tgid and the executable in every report."""
    log = ("[    3.01] time32: worker[90] tgid 88 exe /usr/lib/my prog/bin called futex_time32 (allowed)\n"
           "[    3.02] time32: date[91] tgid 91 exe /usr/bin/date truncated 2147483670 to -2147483626 in "
           "put_old_timespec32 (syscall 265)\n"
           "[    3.03] time32: timeout[52] tgid 52 exe /bin/busybox called clock_nanosleep_time32 (allowed)\n"
           "[    3.04] time32: date[91] tgid 91 exe /usr/bin/date exit: 1 time32 syscalls, 1 truncations\n")
    assert time32_calls(log) == (Time32Call("worker", 90, "futex_time32", "/usr/lib/my prog/bin"),
                                 Time32Call("timeout", 52, "clock_nanosleep_time32", "/bin/busybox"))
    assert time32_truncations(log) == (
        Time32Truncation("date", 91, 91, "put_old_timespec32", 2147483670, -2147483626, 265, "/usr/bin/date"),)


KLOG = Path(__file__).resolve().parent.parent / "data" / "klog"


@pytest.mark.parametrize("machine", ["x86_64", "i386", "armhf"])
def test_a_captured_series_v2_log_reports_truncations_only_for_the_raw_time32_program(machine: str) -> None:
    """kernel.log of scenarios/kernel/time32-truncation.toml on the series v2
    kernel: four runs of the time32 probe (comm "time32") per phase. The raw
    syscall flavour is the process whose first reported call is
    clock_gettime32; glibc's flavours (32- and 64-bit time_t) start with
    clock_nanosleep_time32. Only the raw one got 1901, after the step."""
    log = (KLOG / f"time32-truncation-{machine}.log").read_text()
    first_call: dict[int, str] = {}
    for call in time32_calls(log):
        first_call.setdefault(call.pid, call.call)
    raw = {pid for pid, call in first_call.items() if call == "clock_gettime32"}
    libc = {pid for pid, call in first_call.items() if call == "clock_nanosleep_time32"}
    assert len(raw) == 2 and len(libc) == 4  # before and after; glibc's two flavours before and after
    truncated = time32_truncations(log)
    assert truncated and {t.pid for t in truncated} < raw  # the "after" run only, never glibc's
    assert all(t.pid == t.tgid and t.comm == "time32" and t.got is not None for t in truncated)
    assert all(t.value > 2**31 - 1 and t.got == t.value - 2**32 for t in truncated)
    sites = [t.site for t in truncated]
    assert sites[0] == "put_old_timespec32" and len(sites) == len(set(sites))
    assert ("time" in sites) == (machine != "armhf") and "gettimeofday" in sites and "put_old_timex32" in sites


def test_shim_lines_become_refusals_and_anything_else_is_ignored() -> None:
    assert refusals("67 sqlite3 gettimeofday\ngarbage\n\n12 a b stat64\n") == (
        Refusal("sqlite3", 67, "gettimeofday"), Refusal("a b", 12, "stat64"))


def test_shape_ignores_the_time_printed_but_not_a_sign_or_an_error() -> None:
    assert shape("2147483402|2038-01-19 03:10:02\n") == shape("2147483670|2038-01-19 03:14:30")
    assert shape("Tue Jan 19 03:10:05 UTC 2038") == shape("Sun Feb  7 06:28:20 UTC 2106")
    # a whole second: python3's datetime leaves the fraction out (seen in a CI run)
    assert shape("2147483401\n2038-01-19 03:10:01\n") == shape("2147483670\n2038-01-19 03:14:30.470000\n")
    assert shape("2147483402|2038-01-19") != shape("-414035269|1956-11-17")
    assert shape("found") != shape("sh: 1: touch: Value too large for defined data type")


def test_the_times_a_program_prints_are_read_as_seconds() -> None:
    assert clock_readings("2147483402|2038-01-19 03:10:02") == (2147472000, 2147483402)
    assert clock_readings("Thu Jan  1 00:00:32 UTC 1970") == (0,)
    assert clock_readings("-414035269 and 3.14159265358 and 12345678901234567890") == (-414035269,)
    assert clock_readings("version 1.2.3, 2023-13-45") == ()
    assert clock_readings('{"seconds":2147483650,"nsec":315532800}') == (2147483650,)  # not 1980


def test_a_static_program_that_prints_1970_after_the_rollover_broke() -> None:
    """busybox's date (static: no shim reaches it) prints the same shape."""
    runs = (RunFacts("before", "2038-01-19T03:10:00Z", 0, "2147483402 2038-01-19\n", "", 0.1),
            RunFacts("after", "2038-01-19T03:14:30Z", 0, "32 1970-01-01\n", "", 0.1),
            RunFacts("y2106", "2106-02-07T06:28:20Z", 0, "2147483402 2038-01-19\n", "", 0.1))
    assert runtime_verdict(Runs("unknown-needs-runtime", runs, 30)) == (
        BROKE, "after: printed 1970-01-01, the clock read 2038-01-19")


def test_a_program_handed_a_truncated_time_broke_at_that_site_whatever_it_printed() -> None:
    """A daemon that got 1901 from the kernel and printed nothing about it:
    the series v2 kernel's own report (the captured armhf log of
    scenarios/kernel/time32-truncation.toml) makes it broke, with the site."""
    truncated = time32_truncations((KLOG / "time32-truncation-armhf.log").read_text())
    calls = (Time32Call("daemon", 81, "clock_gettime32"),)
    quiet = (RunFacts("before", "2038-01-19T03:10:00Z", 0, "ok\n", "", 0.1, calls),
             RunFacts("after", "2038-01-19T03:14:30Z", 0, "ok\n", "", 0.1, calls, (), truncated))
    verdict, reason = runtime_verdict(Runs("time32", quiet, 30))
    assert verdict == BROKE
    first = truncated[0]
    assert reason.startswith(f"kernel truncated: put_old_timespec32 ({first.value}→{first.value - 2**32}) ")
    assert all(t.site in reason for t in truncated)
    # without the report the same runs are only calls-time32
    assert runtime_verdict(Runs("time32", quiet[:1] + (replace(quiet[1], truncations=()),), 30))[0] == CALLS_TIME32
    # a wrapped time it passed the kernel counts too (series v3.1: only a
    # wrapped one, 2**32 s from the clock, is reported)
    passed = Time32Truncation("daemon", 81, 81, "get_old_timespec32", -2147483626, None, 265)
    assert runtime_verdict(Runs("time32", quiet[:1] + (replace(quiet[1], truncations=(passed,)),), 30)) == (
        BROKE, "kernel truncated: get_old_timespec32 (passed -2147483626)")


def test_a_static_32bit_glibc_program_that_showed_nothing_is_not_exercised_not_safe(tmp_path: Path) -> None:
    """Its glibc refuses a time past 2038 with EOVERFLOW by itself: no shim
    reaches a static program and the kernel sees only 64-bit calls, so
    runs that show nothing do not make it safe. A 64-bit static program,
    or one whose runs show a break or a time32 call, keeps its verdict."""
    if shutil.which("arm-linux-gnueabihf-gcc") is None:
        pytest.skip("arm-linux-gnueabihf-gcc not installed")
    source = tmp_path / "t.c"
    source.write_text("#include <time.h>\nint main(void) { return time(0) == (time_t)-1; }\n")
    subprocess.run(["arm-linux-gnueabihf-gcc", "-static", "-o", str(tmp_path / "t"), str(source)], check=True)
    pairs, _ = audit_pairs([Candidate(Origin(str(tmp_path / "t"), ""), tmp_path / "t")], load_symbols())
    ((audit, _candidate),) = pairs
    assert (audit.bits, audit.linkage, audit.libc, audit.verdict) == (32, "static", "glibc", "unknown-needs-runtime")
    quiet = (run("before", 0, "x"), run("after", 0, "x"))
    record_ = runtime_record(audit, "t", quiet, 30)
    assert record_["verdict"] == NOT_EXERCISED
    assert str(record_["reason"]).startswith("static glibc: its own EOVERFLOW refusals cannot be seen")
    assert runtime_record(audit, "t", (run("before", 0, "x"), run("after", 1, "x")), 30)["verdict"] == BROKE
    calls = (Time32Call("t", 5, "clock_gettime32"),)
    assert runtime_record(audit, "t", (run("before", 0, "x", time32=calls), run("after", 0, "x")), 30)["verdict"] \
        == CALLS_TIME32
    wide = replace(audit, bits=64, machine="x86_64")
    assert runtime_record(wide, "t", quiet, 30)["verdict"] == SAFE
    dynamic = replace(audit, linkage="dynamic")
    assert runtime_record(dynamic, "t", quiet, 30)["verdict"] == SAFE


# -- verdicts ------------------------------------------------------------------------
@pytest.mark.parametrize("static, runs, verdict, reason", [
    ("time32", (), NOT_EXERCISED, "not run (not a program), static audit: time32"),
    ("time64", (), SAFE, "not run (not a program), static audit: time64"),
    ("time32", (run("before", 127, stderr="error while loading shared libraries: libx.so"), run("after", 127)),
     NOT_EXERCISED, "did not start: exit 127 (error while loading shared libraries: libx.so)"),
    ("time32", (run("before", 137), run("after", 137)), NOT_EXERCISED, "timed out after 30 s at every time"),
    ("time32", (run("before", 0, "1\n"), run("after", 137)), BROKE, "after: exit 0→137"),
    ("time32", (run("before", 0, "x"), run("after", 0, "x", refused=(Refusal("p", 1, "time"),))),
     BROKE, "glibc EOVERFLOW: time"),
    ("unknown-needs-runtime", (run("before", 0, "5"), run("after", 0, "-5")), BROKE, "after: output changed (-5)"),
    ("time64", (run("before", 0, "ok", time32=(Time32Call("p", 1, "clock_nanosleep_time32"),)), run("after", 0, "ok")),
     CALLS_TIME32, "time32: clock_nanosleep_time32"),
    ("time32", (run("before", 0, "v1.0"), run("after", 0, "v1.0")), NOT_EXERCISED,
     "static audit: time32; the command reached no time32 call"),
    ("time32", (run("before", 2, stderr="no such option --version"),
                run("after", 2, stderr="no such option --version")),
     NOT_EXERCISED, "failed the same way at every time: exit 2 (no such option --version)"),
    ("no-time-use", (run("before", 0, "v1.0"), run("after", 0, "v1.0")), SAFE,
     "no time32 call, nothing refused or changed"),
])
def test_runtime_rules(static: str, runs: tuple[RunFacts, ...], verdict: str, reason: str) -> None:
    assert runtime_verdict(Runs(static, runs, 30)) == (verdict, reason)


# -- commands, items, options ------------------------------------------------------------
def test_known_programs_get_their_line_others_their_version_and_the_user_wins() -> None:
    commands = load_commands()
    assert commands.for_file("usr/bin/sqlite3").args[0] == ":memory:"
    assert commands.for_file("usr/bin/mytool") == Command(("--version",))
    mine = commands.with_overrides(["sqlite3=:memory: 'select 1'", "bin/tool=-n 3"])
    assert mine.for_file("usr/bin/sqlite3") == Command((":memory:", "select 1"), source="user")
    assert mine.for_file("bin/tool").args == ("-n", "3")
    assert parse_override("x=") == ("x", ())
    for bad in ("noequals", "=args", "x='unclosed"):
        with pytest.raises(SandboxError, match="--command"):
            parse_override(bad)


def test_a_package_runs_in_its_userland_and_a_file_in_the_machine_s_debian12() -> None:
    item = item_of(record(), Candidate(Origin("debian12-armhf:sqlite3", "usr/bin/sqlite3"), Path("/x")), 0)
    assert (item.userland, item.guest_path, item.package, item.host_file) == (
        "debian12-armhf", "/usr/bin/sqlite3", "sqlite3", None)
    mine = record("", machine="i386", input="./build/tool")
    item = item_of(mine, Candidate(Origin("./build/tool", ""), Path("build/tool")), 7)
    assert (item.userland, item.guest_path, item.host_file) == ("debian12-i386", "/.y2038/files/7/tool",
                                                                Path("build/tool"))
    assert runnable(record(kind="exec")) and not runnable(record(kind="shared"))
    assert runnable(record(kind="shared", linkage="static"))  # a static PIE


def test_a_root_filesystem_runs_its_programs_in_itself_with_its_own_libc(tmp_path: Path) -> None:
    """A directory with bin/sh is a root: its programs run where they are,
    started by path (no /usr/bin/env assumed), the shim only
    when its glibc can refuse (2.34 and later)."""
    tree = tmp_path / "fw"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "sh").symlink_to("busybox")
    (tree / "lib").mkdir()
    (tree / "lib" / "libc-2.31.so").write_bytes(b"\x7fELF GLIBC_2.30")
    (tree / "lib" / "libc.so.6").symlink_to("libc-2.31.so")
    item = item_of(record("usr/bin/tool", input=str(tree)), Candidate(Origin(str(tree), "usr/bin/tool"), tree, tree), 0)
    assert (item.userland, item.guest_path, item.tree, item.host_file) == (tree_name(tree), "/usr/bin/tool", tree, None)
    assert not refuses_time32(tree)
    (tree / "lib" / "libc.so.6").unlink()
    (tree / "lib" / "libc.so.6").write_bytes(b"\x7fELF GLIBC_2.34 GLIBC_2.35")
    assert refuses_time32(tree)
    shell = run_shell(Subject(0, item.userland, item.guest_path, Command(("-v",)), True), 0, 30)
    assert shell.startswith(f"/tools/inroot /userlands/{item.userland} 30 ")
    assert shell.endswith(" -- /usr/bin/tool -v </dev/null")
    # a plain folder of binaries is no root: its files go to the machine's Debian 12
    plain = tmp_path / "bins"
    plain.mkdir()
    item = item_of(record("tool", input=str(plain)), Candidate(Origin(str(plain), "tool"), plain / "tool", plain), 3)
    assert (item.userland, item.guest_path, item.tree) == ("debian12-armhf", "/.y2038/files/3/tool", None)


def test_the_overlay_holds_a_root_whole_with_its_mount_points(tmp_path: Path) -> None:
    tree = tmp_path / "fw"
    (tree / "bin").mkdir(parents=True)
    (tree / "bin" / "busybox").write_bytes(b"bb")
    (tree / "bin" / "sh").symlink_to("busybox")
    (tree / "tmp").mkdir()
    shim = tmp_path / "shim.so"
    shim.write_bytes(b"so")
    out = overlay_archive((("userlands/rootfs-x/.y2038/time32-refusals.so", shim),), Evidence(tmp_path),
                          (("userlands/rootfs-x", tree),))
    listing = subprocess.run(["cpio", "-it"], stdin=out.open("rb"), capture_output=True, text=True).stdout.split()
    for name in ("userlands/rootfs-x/bin/busybox", "userlands/rootfs-x/bin/sh", "userlands/rootfs-x/proc",
                 "userlands/rootfs-x/dev", "userlands/rootfs-x/tmp", "userlands/rootfs-x/.y2038/time32-refusals.so"):
        assert name in listing
    assert listing.count("userlands/rootfs-x/tmp") == 1


def test_two_roots_share_the_overlays_folders(tmp_path: Path) -> None:
    """Two firmware images in one run: each tree brings its parent folders
    (userlands), written once."""
    trees = []
    for name in ("a", "b"):
        tree = tmp_path / name
        (tree / "bin").mkdir(parents=True)
        (tree / "bin" / "sh").write_bytes(name.encode())
        trees.append((f"userlands/rootfs-{name}", tree))
    out = overlay_archive((), Evidence(tmp_path), tuple(trees))
    listing = subprocess.run(["cpio", "-it"], stdin=out.open("rb"), capture_output=True, text=True).stdout.split()
    assert listing.count("userlands") == 1
    assert "userlands/rootfs-a/bin/sh" in listing and "userlands/rootfs-b/bin/sh" in listing


def test_moments_from_the_command_line() -> None:
    assert parse_moments([]) == DEFAULT_MOMENTS
    assert parse_moments(["a=2038-01-19T03:00:00Z", "b=2040-01-01T00:00:00Z"]) == (
        Moment("a", "2038-01-19T03:00:00Z"), Moment("b", "2040-01-01T00:00:00Z"))
    for bad in ("2040-01-01T00:00:00Z", "a=tomorrow", "two words=2040-01-01T00:00:00Z"):
        with pytest.raises(SandboxError, match="--at"):
            parse_moments([bad])


def test_every_runtime_line_fits_100_columns_and_leads_with_the_verdict() -> None:
    ran = captured()
    audits = [record(), record("bin/dash"), record("usr/lib/" + "x" * 150 + "/libverylong.so.1", kind="shared")]
    for audit, subject in zip(audits, SUBJECTS):
        audit.runtime = runtime_record(audit, "", _runs_of(subject, ran, DEFAULT_MOMENTS), 30)
    audits[2].runtime = runtime_record(audits[2], "", (), 30)
    result = RuntimeAudit(StaticAudit(audits), seconds=20.0, programs=2,
                          kernels=["armhf: own kernel (no series: time32 calls not logged)\n  /"
                                   + "k/" * 60 + "zImage"])
    text = runtime_lines.report(result)
    assert all(len(line) <= 100 for line in text.splitlines())
    assert [line.split()[0] for line in text.splitlines()[1:4]] == [BROKE, BROKE, NOT_EXERCISED]
    assert "libverylong.so.1" in text
    assert "3 ELF files, 2 run: broke 2, not-exercised 1" in text
    assert "10.0 s per program run" in text
    assert "\nkernel, armhf: own kernel (no series: time32 calls not logged)\n…/k/k/" in text
    assert text.splitlines()[-2].endswith("k/zImage")


def test_bad_input_to_the_runtime_audit_is_one_line_each_before_anything_boots(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every input bad: nothing to run, so nothing boots; each gets its line."""
    monkeypatch.setenv("Y2038_RESULTS", str(tmp_path / "results"))
    (tmp_path / "notes.txt").write_text("hello\n")
    code = main(["rehearse", str(tmp_path / "notes.txt"), str(tmp_path / "missing"), "nosuch-userland:x"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: {tmp_path / 'notes.txt'}: not an ELF file" in err
    assert f"error: {tmp_path / 'missing'}: no such file or directory" in err
    assert "error: nosuch-userland:x: no userland 'nosuch-userland'" in err


@pytest.mark.parametrize("broke", [True, False])
def test_the_runtime_audit_exits_1_when_a_program_broke(
        broke: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet's CI can gate on it: 1 when any program broke, 0 when none did
    (the audit itself faked here: its verdicts come from the captured run)."""
    ran = captured()
    audits = [record(), record("bin/dash")]
    for audit, subject in zip(audits, SUBJECTS):
        audit.runtime = runtime_record(audit, "", _runs_of(subject, ran, DEFAULT_MOMENTS), 30)
        if not broke:
            audit.runtime = {**audit.runtime, "verdict": CALLS_TIME32}
    monkeypatch.setattr(runtime, "audit_runtime", lambda inputs, options: RuntimeAudit(StaticAudit(audits)))
    code = main(["rehearse", "debian12-armhf:sqlite3", "debian12-armhf:dash"])
    out = capsys.readouterr().out
    assert code == (1 if broke else 0)
    assert out.count("\nbroke ") == (2 if broke else 0)


# -- the shim ------------------------------------------------------------------------
@pytest.mark.parametrize("machine", ["i386", "armhf"])
def test_the_shim_builds_and_wraps_only_32bit_time_names(machine: str, tmp_path: Path) -> None:
    """Each name it exports is one a 32-bit time_t program binds (the static
    audit's own list), so a time64 program never reaches it."""
    target = MACHINES[machine]
    if shutil.which(target.toolchain.cc) is None:
        pytest.skip(f"{target.toolchain.cc} not installed")
    out = tmp_path / "shim.so"
    subprocess.run(shim_command(target, out), check=True)
    objdump = shutil.which("arm-linux-gnueabihf-objdump") if machine == "armhf" else "objdump"
    table = subprocess.run([objdump or "objdump", "-T", str(out)], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in table.splitlines() if " .text" in line}
    assert exported == {"time", "gettimeofday", "clock_gettime", "timespec_get", "mktime", "timegm", "stat",
                        "lstat", "fstat", "fstatat", "stat64", "lstat64", "fstat64", "fstatat64"}
    assert exported <= load_symbols().time32
    assert "EOVERFLOW" in SOURCE.read_text()


# -- the user's own kernel -------------------------------------------------------------
FRAGMENTS = REPO / "kernel-series" / "config"
ARCH_OPTION = {"x86_64": "CONFIG_X86_64=y", "i386": "CONFIG_X86_32=y", "armhf": "CONFIG_ARM=y"}


def fragments_config(machine: str, *names: str) -> str:
    """What the project's own fragments ask for, as a .config would hold it."""
    parts = [(FRAGMENTS / name).read_text() for name in ("common.config", f"{machine}.config", *names)]
    return "\n".join([ARCH_OPTION[machine], *parts])


@pytest.mark.parametrize("machine", ["x86_64", "i386", "armhf"])
def test_a_config_with_our_fragments_boots_and_says_whether_it_has_the_series(machine: str) -> None:
    assert check_config(fragments_config(machine), "c") == (machine, False, True)
    assert check_config(fragments_config(machine, "series.config"), "c") == (machine, True, True)
    assert check_config(fragments_config(machine, "strict.config"), "c") == (machine, False, False)


def test_a_config_lacking_what_a_boot_needs_is_named_before_boot(tmp_path: Path) -> None:
    text = fragments_config("armhf").replace("CONFIG_VIRTIO_CONSOLE=y", "").replace("CONFIG_TMPFS=y", "")
    with pytest.raises(SandboxError, match="a armhf kernel without CONFIG_TMPFS, CONFIG_VIRTIO_CONSOLE: "):
        check_config(text, "my.config")
    with pytest.raises(SandboxError, match="not a kernel config for a machine here"):
        check_config("CONFIG_ARM64=y\n", "arm64.config")
    (tmp_path / "config").write_text(fragments_config("i386", "series.config"))
    with pytest.raises(SandboxError, match="no such kernel image"):
        own_kernel(tmp_path / "bzImage", tmp_path / "config")
    (tmp_path / "bzImage").write_bytes(b"image")
    own = own_kernel(tmp_path / "bzImage", tmp_path / "config")
    assert (own.machine, own.series) == ("i386", True)
    assert own.artifact().boot_image == tmp_path / "bzImage"


def test_a_machine_that_cannot_run_is_one_line_and_the_others_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """armhf's userland cannot be made (a package apt cannot install with
    it): one line naming the machine, its files not-exercised with the
    reason; the i386 file still gets its runtime verdict."""
    source = tmp_path / "t.c"
    source.write_text("#include <time.h>\nint main(void) { return (int)time(0) & 1; }\n")
    built = {}
    for machine, cc in (("i386", ["gcc", *shlex.split(cflags32(X86_64))]), ("armhf", ["arm-linux-gnueabihf-gcc"])):
        if shutil.which(cc[0]) is None:
            pytest.skip(f"{cc[0]} not installed")
        built[machine] = tmp_path / machine
        subprocess.run([*cc, "-O2", "-o", str(built[machine]), str(source)], check=True)
    monkeypatch.setenv("Y2038_RESULTS", str(tmp_path / "results"))

    def fake_run(machine_name: str, items: list, options: object, evidence: Path, commands: object = None):
        if machine_name == "armhf":
            raise SandboxError("userland debian12-armhf: apt-get install -s: E: Unable to correct problems")
        for item in items:
            item.audit.runtime = runtime_record(item.audit, "tool --version",
                                                (run("before", 0, "1"), run("after", 0, "1")), 30)
        return runtime.MachineRun(12.0, "series kernel k")
    monkeypatch.setattr(runtime, "run_items", fake_run)
    result = runtime.audit_runtime([str(built["armhf"]), str(built["i386"])], runtime.RuntimeOptions())
    by_machine = {a.machine: a.runtime for a in result.audits}
    assert by_machine["i386"]["verdict"] == NOT_EXERCISED  # time32 name, no time32 call reached
    assert by_machine["armhf"]["verdict"] == NOT_EXERCISED
    assert str(by_machine["armhf"]["reason"]).startswith("not run: userland debian12-armhf: apt-get")
    assert [r.line() for r in result.rejected] == [
        "armhf: userland debian12-armhf: apt-get install -s: E: Unable to correct problems"]
    assert result.programs == 1 and result.kernels == ["i386: series kernel k"]


def test_scenarios_a_kernel_cannot_serve_are_named_with_their_reason() -> None:
    """The suite's own files against configs made of our fragments: without
    the series, without disks, and the strict and pristine variants' files."""
    from sandbox.scenario import suite
    from sandbox.scenario.needs import skip_reason
    by_name = {s.name: s for s in suite.load_all(suite.scenario_files())}
    plain = options(fragments_config("armhf"))
    series = options(fragments_config("armhf", "series.config", "disks.config"))
    assert skip_reason(by_name["kernel/time32-log"], plain, False).startswith(
        "needs the series (kernel-series/): sysctl kernel.time32_syscalls")
    assert skip_reason(by_name["kernel/time32-log"], series, True) is None
    assert skip_reason(by_name["kernel/rtc-past-2038-pristine"], plain, False) == \
        "written for the pristine kernel variant"
    ext4 = next(s for name, s in by_name.items() if name.startswith("filetimes/filesystems[ext4"))
    assert skip_reason(ext4, plain, False) == \
        "the kernel's config lacks CONFIG_BLOCK, CONFIG_VIRTIO_BLK, CONFIG_EXT4_FS"
    assert skip_reason(ext4, series, True) is None
    assert skip_reason(by_name["ipc/after-rollover"], plain, False) is None
    assert skip_reason(by_name["ipc/after-rollover"], {**plain, "CONFIG_SYSVIPC": "n"}, False) == \
        "the kernel's config lacks CONFIG_SYSVIPC"


# -- the lossless channel: /tools/time32count ------------------------------------------
def test_each_run_is_counted_on_the_series_kernel_and_its_counts_collected() -> None:
    counted = plan(SUBJECTS, DEFAULT_MOMENTS, 30)
    runs = [c for c in counted if c.kind == RUN]
    assert all(c.shell.startswith(f"/tools/time32count /tmp/.y2038-counts-{c.subject}-{c.moment} /tools/inroot ")
               for c in runs)
    assert all("==y2038-counts==" in c.shell for c in counted if c.kind == COLLECT)
    uncounted = plan(SUBJECTS, DEFAULT_MOMENTS, 30, log=False)  # no series: no counts to read
    assert not any("time32count" in c.shell or "==y2038-counts==" in c.shell for c in uncounted)
    collected = ("[ 1.0] time32: forks[70] called clock_gettime32 (allowed)\n==y2038-refusals==\n"
                 "70 forks time\n==y2038-counts==\ntime32count 70 1 0 forks\ntime32count 71 2 3 a b\n"
                 "not a count line\n")
    kernel, shim, counts = split_collected(collected)
    assert kernel.startswith("[ 1.0] time32: forks[70]") and shim == "70 forks time\n"
    assert process_counts(counts) == (ProcessCount("forks", 70, 1, 0), ProcessCount("a b", 71, 2, 3))
    assert split_collected("dmesg\n==y2038-refusals==\nshim\n") == ("dmesg\n", "shim\n", "")


def test_counted_calls_and_truncations_judge_when_the_kernel_log_lost_them() -> None:
    quiet = run("before", counted=(ProcessCount("d", 5, 0, 0),))
    calls = run("after", counted=(ProcessCount("d", 6, 3, 0), ProcessCount("d", 7, 1, 0)))
    assert runtime_verdict(Runs(TIME64, (quiet, calls), 30)) == (CALLS_TIME32, "time32: 4 counted in 2 process(es)")
    named = run("after", time32=(Time32Call("d", 6, "futex_time32"),), counted=(ProcessCount("d", 6, 3, 0),))
    assert runtime_verdict(Runs(TIME64, (quiet, named), 30)) == (
        CALLS_TIME32, "time32: futex_time32; 3 counted in 1 process(es)")
    truncated = run("after", counted=(ProcessCount("d", 8, 2, 1),))
    assert runtime_verdict(Runs(TIME64, (quiet, truncated), 30)) == (
        BROKE, "kernel counted truncations (no site: its report was not logged): after: d[8] x1")
    unknown = run("after", counted=(ProcessCount("d", 9, -1, -1),))  # a kernel without the counts
    assert runtime_verdict(Runs(TIME64, (quiet, unknown), 30))[0] == SAFE
