"""The kernel log decides too, without booting:

- a completed run whose console holds a WARNING fails, judged, unless the
  scenario's expect-kernel names it; a kind it names must be found;
- only kernel output counts: the kernel echoing its command line (with
  "Kernel panic - not syncing" in it) is no panic;
- the console is watched while the guest runs: an oops ends the wait at
  once (a fake QEMU, a shell script, stands in for the real one);
- a run that a signal or a bug of ours ends still leaves run.json and
  report.txt, and QEMU failing to start is an infrastructure outcome.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import threading
import time
from pathlib import Path

import pytest
from replay_guest import BASE, DATA, ReplayGuest, captured, prepared

from sandbox.app import cli, signals, verbs
from sandbox.app.exit_codes import EXIT_FAILED, EXIT_INFRA, exit_code
from sandbox.app.jobs import write_judgement
from sandbox.base.errors import Interrupted
from sandbox.base.machines import MACHINES
from sandbox.base.paths import REPO
from sandbox.guest import klog, protocol
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BootRequest, ConsoleWatcher, Guest, GuestDied, GuestHung
from sandbox.judge.evaluate import evaluate
from sandbox.judge.judged import JudgedRun
from sandbox.report.text import failure_report
from sandbox.run.record import INFRASTRUCTURE
from sandbox.run.runner import classify, run_scenario
from sandbox.scenario import suite
from sandbox.scenario.model import KERNEL_FINDINGS, Scenario

ROLLOVER = REPO / "scenarios" / "clock" / "rollover.toml"
BOOT = BASE
WARNING_LINE = 87  # pytest/data/console/warning.log: normal.log's 85 lines, "cut here", then WARNING


def rollover(tmp_path: Path, extra: str = "") -> Scenario:
    """scenarios/clock/rollover.toml, with top-level keys added."""
    folder = tmp_path / "scenarios" / "clock"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rollover.toml").write_text(extra + ROLLOVER.read_text())
    return suite.load(folder / "rollover.toml")


def judge(tmp_path: Path, scenario: Scenario, console: str) -> JudgedRun:
    """The run loop and the judge, as sandbox.app.jobs.run_and_judge runs them."""
    transcript, _ = captured("normal")
    record = run_scenario(scenario, prepared(scenario, tmp_path / "evidence", BOOT),
                          lambda request: ReplayGuest(request, transcript, console))
    result = evaluate(scenario, BOOT.machine.name, record.observations, record.findings)
    judged = JudgedRun(record, result)
    write_judgement(judged)
    return judged


def console(name: str) -> str:
    return (DATA / "console" / name).read_bytes().decode()

# --- item 3: a WARNING fails a completed run ---------------------------------


def test_a_warning_fails_a_completed_run_as_a_judged_failure(tmp_path: Path) -> None:
    judged = judge(tmp_path, rollover(tmp_path), console("warning.log"))
    record = judged.record
    assert record.outcome == "completed" and not judged.passed
    assert all(v.passed for v in judged.result.verdicts)  # every expectation held
    (kernel,) = judged.result.kernel_failures
    assert kernel.kind == "warning" and not kernel.expected
    assert str(kernel) == (f"warning at console.log line {WARNING_LINE}: [    3.481466] WARNING: CPU: 0 PID: 93 at "
                           "kernel/time/timekeeping.c:1331 do_settimeofday64+0x1c3/0x1e0 (not in expect-kernel)")
    assert exit_code([judged]) == EXIT_FAILED  # judged: 1, not infrastructure
    report = (record.evidence / "report.txt").read_text()
    assert report.startswith("clock/rollover on x86_64 (tcg, time warp): 0 expectation(s) failed, 1 kernel log finding(s)")
    assert f"  kernel log: warning at console.log line {WARNING_LINE}: " in report
    assert json.loads((record.evidence / "run.json").read_text())["findings"] == [str(kernel.findings[0])]


def test_an_expected_warning_passes_and_a_missing_one_fails(tmp_path: Path) -> None:
    expecting = rollover(tmp_path, 'expect-kernel = ["warning"]\n')
    assert expecting.expect_kernel == ("warning",)
    assert judge(tmp_path / "seen", expecting, console("warning.log")).passed
    missing = judge(tmp_path / "none", expecting, console("normal.log"))
    assert not missing.passed
    assert [str(k) for k in missing.result.kernel_failures] == ["warning: expected by expect-kernel, none found"]
    assert "  kernel log: warning: expected by expect-kernel, none found" in failure_report(
        missing.record, missing.result)


def test_a_normal_run_has_no_kernel_verdicts(tmp_path: Path) -> None:
    judged = judge(tmp_path, rollover(tmp_path), console("normal.log"))
    assert judged.passed and judged.result.kernel == ()


@pytest.mark.parametrize("value, message", [
    ('["panic"]', "unknown kernel finding 'panic'"),
    ('["oops"]', "unknown kernel finding 'oops'"),
    ('"warning"', "expected a non-empty list of kernel findings"),
    ('["warning", "warning"]', "kernel finding 'warning' listed twice"),
])
def test_expect_kernel_is_validated(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(Exception) as caught:
        rollover(tmp_path, f"expect-kernel = {value}\n")
    assert "clock/rollover.toml: expect-kernel" in str(caught.value) and message in str(caught.value)


def test_every_kind_of_the_table_is_fatal_or_expectable() -> None:
    assert set(klog.KINDS) == klog.FATAL | set(KERNEL_FINDINGS)
    assert not klog.FATAL & set(KERNEL_FINDINGS)


@pytest.mark.parametrize("line, kind", [
    ("[   12.3] BUG: KASAN: slab-out-of-bounds in ktime_get_real_ts64+0x2c/0x90", "kasan"),
    ("[   12.3] UBSAN: shift-out-of-bounds in kernel/time/time.c:802:14", "ubsan"),
    ("[   12.3] Oops: 0002 [#1] PREEMPT SMP NOPTI", "oops"),
    ("[   12.3] Internal error: Oops: 805 [#1] ARM", "oops"),
    ("Y2038-INIT: up[    1.2] WARNING: CPU: 0 PID: 1 at kernel/x.c:1 f+0x1/0x2", "warning"),
])
def test_more_kinds(line: str, kind: str) -> None:
    assert [f.kind for f in klog.scan([line])] == [kind]


ECHOES = [
    "[    0.000000] Command line: console=ttyS0 panic=-1 y2038.agent=ttyS1 Kernel panic - not syncing",
    "[    0.056900] Kernel command line: console=ttyS0 panic=-1 y2038.agent=ttyS1 Kernel panic - not syncing",
    '[    0.061000] Unknown kernel command line parameters "Kernel panic - not syncing", will be passed to user space.',
    "Kernel panic - not syncing: printed by init, not the kernel",
    "  Oops and BUG: in a line without a printk timestamp",
]


def test_the_command_line_echo_and_init_lines_are_not_kernel_findings() -> None:
    assert klog.scan(ECHOES) == []
    assert classify(GuestHung("no answer within 2s"), tuple(klog.scan(ECHOES)))[0] == "hang"


def test_dmesg_adds_what_the_console_did_not_show() -> None:
    warning = "[    3.481466] WARNING: CPU: 0 PID: 93 at kernel/time/timekeeping.c:1331 f+0x1/0x2"
    stall = "[    9.000000] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:"
    found = klog.scan_logs([warning + "\r"], [warning, stall])
    assert [(f.kind, f.log, f.line_number) for f in found] == [("warning", "console.log", 1),
                                                                ("rcu-stall", "kernel.log", 2)]

# --- item 4: the console is watched -------------------------------------------


def test_the_watcher_reports_an_oops_at_once_and_ignores_the_echo(tmp_path: Path) -> None:
    path = tmp_path / "console.log"
    seen: list[klog.Finding] = []
    watcher = ConsoleWatcher(path, seen.append, poll=0.01).start()
    try:
        with path.open("w") as out:
            out.write("\n".join(ECHOES) + "\n")
            out.flush()
            time.sleep(0.2)
            assert seen == []
            out.write("[    5.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"
                      "[    5.000100] Oops: 0002 [#1] PREEMPT SMP NOPTI\n")
            out.flush()
            for _ in range(100):
                if seen:
                    break
                time.sleep(0.01)
    finally:
        watcher.stop()
    assert [(f.kind, f.line_number) for f in seen] == [("oops", len(ECHOES) + 2)]


FAKE_QEMU = """\
#!/bin/sh
# Stands in for qemu-system-*: writes the console named by -serial file:<path>,
# says READY on the agent channel (stdout), then {after}, and never answers.
for arg; do case $arg in file:*) console=${{arg#file:}};; esac; done
printf '[    0.000000] Kernel command line: console=ttyS0 panic=-1 Kernel panic - not syncing\\r\\n' > "$console"
echo '@@Y2038 READY 6.1.192+'
sleep 0.3
{action}
exec sleep 600
"""


def fake_guest(tmp_path: Path, action: str) -> Guest:
    qemu = tmp_path / "qemu-fake"
    qemu.write_text(FAKE_QEMU.format(after=action or "nothing", action=action))
    qemu.chmod(0o755)
    x86_64 = MACHINES["x86_64"]
    machine = dataclasses.replace(x86_64, qemu=dataclasses.replace(x86_64.qemu, binary=str(qemu)))
    return Guest(BootRequest(machine, Path("/k"), Path("/i"), "2038-01-19T03:13:50", "tcg", tmp_path / "ev"))


def test_an_oops_on_the_console_ends_the_wait_at_once(tmp_path: Path) -> None:
    oops = "printf '[    4.000000] Oops: 0002 [#1] PREEMPT SMP NOPTI\\r\\n' >> \"$console\""
    with fake_guest(tmp_path, oops) as guest:
        guest.wait_ready(Deadline(10))
        started = time.monotonic()
        with pytest.raises(GuestDied, match="the kernel console shows: oops at console.log line 2"):
            guest.run("sleep 600", Deadline(60))
        assert time.monotonic() - started < 2  # not the 60 s deadline
    outcome, detail = classify(GuestDied("x"), tuple(klog.scan((tmp_path / "ev" / "console.log").read_text()
                                                              .splitlines())))
    assert outcome == "oops" and "Oops: 0002" in detail
    assert "oops" in INFRASTRUCTURE


def test_kernel_args_with_kernel_panic_in_them_leave_a_hang_a_hang(tmp_path: Path) -> None:
    with fake_guest(tmp_path, "") as guest:
        guest.wait_ready(Deadline(10))
        with pytest.raises(GuestHung):
            guest.run("sleep 600", Deadline(1))
    findings = tuple(klog.scan((tmp_path / "ev" / "console.log").read_text().splitlines()))
    assert findings == () and classify(GuestHung("no answer"), findings)[0] == "hang"


def test_the_qemu_command_is_kept_as_a_list_and_as_shell_words(tmp_path: Path) -> None:
    with fake_guest(tmp_path, "") as guest:
        guest.wait_ready(Deadline(10))
    evidence = tmp_path / "ev"
    argv = json.loads((evidence / "qemu-command.json").read_text())
    assert argv[1:3] == ["-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"]
    assert shlex.split((evidence / "qemu-command.txt").read_text()) == argv

# --- item 8: whatever ends a run, it leaves its evidence ---------------------------


class AbortingGuest(ReplayGuest):
    """Replays the normal run, then raises `error` at the third command."""

    error: BaseException = RuntimeError("a bug of ours")

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        if len(self.commands) == 2:
            self.commands.append(command)
            raise self.error
        return super().run(command, deadline)


@pytest.mark.parametrize("error, outcome, detail", [
    (Interrupted(signal.SIGTERM), "interrupted", "interrupted by SIGTERM"),
    (Interrupted(signal.SIGHUP), "interrupted", "interrupted by SIGHUP"),
    (KeyboardInterrupt(), "interrupted", "interrupted by SIGINT"),
    (RuntimeError("a bug of ours"), "error", "RuntimeError: a bug of ours"),
])
def test_a_run_ended_by_a_signal_or_a_bug_keeps_its_evidence(tmp_path: Path, error: BaseException,
                                                             outcome: str, detail: str) -> None:
    transcript, normal = captured("normal")
    guests: list[AbortingGuest] = []

    def start(request: BootRequest) -> AbortingGuest:
        guests.append(AbortingGuest(request, transcript, normal))
        guests[-1].error = error
        return guests[-1]
    reports: list[str] = []

    def on_abort(record: object) -> None:
        write_judgement(JudgedRun(record, None))  # as sandbox.app.jobs does
        reports.append((tmp_path / "ev" / "report.txt").read_text())
    with pytest.raises(type(error)):
        run_scenario(suite.load(ROLLOVER), prepared(suite.load(ROLLOVER), tmp_path / "ev", BOOT), start, on_abort)
    assert guests[0].stopped
    run = json.loads((tmp_path / "ev" / "run.json").read_text())
    assert (run["outcome"], run["detail"]) == (outcome, detail)
    assert len(run["commands"]) == 2  # what ran before is kept
    assert reports and reports[0].startswith(f"clock/rollover on x86_64 (tcg, time warp): {outcome}: {detail}")
    assert (tmp_path / "ev" / "traceback.txt").read_text().startswith("Traceback")
    assert (tmp_path / "ev" / "kernel.log").exists()


@pytest.mark.parametrize("qemu, detail", [
    ("/nonexistent/qemu-system-x86_64", "QEMU did not start: [Errno 2] No such file or directory"),
    ("/bin/false", "QEMU exited (code 1)"),
])
def test_qemu_that_stops_before_the_console_exists_is_infrastructure(tmp_path: Path, qemu: str,
                                                                     detail: str) -> None:
    machine = dataclasses.replace(BOOT.machine, qemu=dataclasses.replace(BOOT.machine.qemu, binary=qemu))
    boot = dataclasses.replace(BOOT, machine=machine)
    record = run_scenario(suite.load(ROLLOVER), prepared(suite.load(ROLLOVER), tmp_path / "ev", boot))
    assert record.outcome == "guest-exited" and record.detail.startswith(detail)
    assert record.infrastructure_failed and not (tmp_path / "ev" / "console.log").exists()
    assert json.loads((tmp_path / "ev" / "run.json").read_text())["outcome"] == "guest-exited"


def test_a_failed_step_shows_the_helpers_stdout_and_stderr(tmp_path: Path) -> None:
    from test_run_loop import replies
    from replay_guest import frame
    chunks = replies("normal")
    chunks[5] = frame(5, "settime: tried 2147483670\n", "settime: settimeofday: EPERM\n", 1)
    transcript = [line for chunk in chunks[:6] + [chunks[-1]] for line in chunk]
    record = run_scenario(suite.load(ROLLOVER), prepared(suite.load(ROLLOVER), tmp_path / "ev", BOOT),
                          lambda request: ReplayGuest(request, transcript, captured("normal")[1]))
    report = failure_report(record, None)
    assert "settime: settimeofday: EPERM" in report and "settime: tried 2147483670" in report

# --- exit codes and signal handlers of the command line ------------------------------


@pytest.mark.parametrize("error, code", [
    (Interrupted(signal.SIGTERM), 143), (Interrupted(signal.SIGHUP), 129), (KeyboardInterrupt(), 130),
    (RuntimeError("a bug"), EXIT_INFRA), (ZeroDivisionError(), EXIT_INFRA),
])
def test_exit_codes_of_interruptions_and_bugs(monkeypatch: pytest.MonkeyPatch, error: BaseException,
                                             code: int) -> None:
    def validate(args: object) -> int:
        raise error
    monkeypatch.setattr(verbs, "cmd_validate", validate)
    saved = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    try:
        assert cli.main(["validate"]) == code
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


@pytest.mark.parametrize("signum", signals.STOP_SIGNALS)
def test_a_signal_becomes_an_interruption_in_the_main_thread(signum: int) -> None:
    saved = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    try:
        for s in signals.STOP_SIGNALS:  # as a shell leaves them; nohup and `cmd &` ignore some
            signal.signal(s, signal.SIG_DFL)
        signals.install_signal_handlers()
        with pytest.raises(Interrupted) as caught:
            os.kill(os.getpid(), signum)
            threading.Event().wait(5)
        assert caught.value.signum == signum
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal, during the clean-up: ignored
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


@pytest.mark.parametrize("signum", signals.STOP_SIGNALS)
def test_a_signal_ignored_by_the_caller_stays_ignored(signum: int) -> None:
    """`nohup just test` (SIGHUP) and a job started with `&` (SIGINT) keep running."""
    saved = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    try:
        for s in signals.STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN if s == signum else signal.SIG_DFL)
        signals.install_signal_handlers()
        assert signal.getsignal(signum) is signal.SIG_IGN
        assert all(signal.getsignal(s) is not signal.SIG_IGN for s in signals.STOP_SIGNALS if s != signum)
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
