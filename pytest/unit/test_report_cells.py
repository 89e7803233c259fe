"""What happened in each cell of the matrix (sandbox/report/cells.py), and the
terminal tables of `just demo` (sandbox/report/text.py) within 100 columns,
from the observations of a captured `just demo` on x86_64."""
from __future__ import annotations

from pathlib import Path

from captured_results import MACHINE, build_results, captured_observations, demo_scenarios, rollover

from sandbox.judge.evaluate import evaluate
from sandbox.report.cells import CLAMPED, EARLY, ERROR, RIGHT, WRAPPED, WRONG, classify, headline, matrix
from sandbox.judge.judged import JudgedRun
from sandbox.report.text import WIDTH, phase_tables
from sandbox.run.observations import Observation
from sandbox.run.record import COMPLETED, RunRecord
from sandbox.scenario.model import Scenario


def demo(name: str) -> Scenario:
    return next(s for s in demo_scenarios() if s.name == name)


def kinds(scenario: Scenario, phase: str) -> dict[tuple[str, str], str]:
    observations = captured_observations(scenario)
    (found,) = [p for p in matrix(scenario, MACHINE, observations) if p.phase == phase]
    return {key: cell.kind for key, cell in found.cells.items()}


def test_the_clock_after_the_rollover_wraps_fails_or_reads_right(tmp_path: Path) -> None:
    _, runs = build_results(tmp_path, failing=False)
    record = next(r.record for r in runs if r.record.scenario == "clock/rollover")
    (after,) = [p for p in matrix(rollover(tmp_path, False), MACHINE, record.observations) if p.phase == "after"]
    for call in ("time", "gettimeofday", "clock_gettime"):
        assert after.cell(call, "time32-syscall").kind == WRAPPED
        assert after.cell(call, "time32-libc").kind == ERROR
        assert after.cell(call, "time64").kind == after.cell(call, "native64").kind == RIGHT


def test_a_wait_that_ends_at_once_is_early_and_a_refused_one_an_error() -> None:
    cells = kinds(demo("futex/wait-across-rollover"), "across")
    assert cells["sem_timedwait", "time32-syscall"] == cells["sem_timedwait", "time32-libc"] == EARLY
    assert cells["sem_timedwait", "time64"] == RIGHT  # ETIMEDOUT after the ~3 s asked for
    assert cells["futex_wait_bitset", "time32-libc"] == ERROR  # EINVAL
    assert cells["futex_wait", "time32-syscall"] == RIGHT


def test_file_times_wrap_when_sent_and_clamp_when_stored() -> None:
    cells = kinds(demo("filetimes/filesystems[ext4-128]"), "2040")
    assert cells["utimensat", "time32-libc"] == WRAPPED  # sent 1903
    assert cells["utimensat", "time64"] == CLAMPED  # sent 2040, kept 2038-01-19T03:14:07
    assert cells["statx", "time32-syscall"] == CLAMPED
    assert kinds(demo("filetimes/filesystems[ext4-128]"), "2106")["utimes", "time32-syscall"] == WRAPPED  # 1970
    assert set(kinds(demo("filetimes/filesystems[ext4-128]"), "2038max").values()) == {RIGHT}


def test_ipc_raw_fields_wrap_and_the_64_bit_ones_do_not() -> None:
    cells = kinds(demo("ipc/after-rollover"), "after")
    assert cells["shm_stat_raw", "time32-syscall"] == WRAPPED
    assert cells["shm_stat_libc", "time32-libc"] == WRAPPED
    assert cells["shm_stat_libc", "time64"] == cells["shm_stat_raw", "native64"] == RIGHT
    assert cells["shmget", "time32-syscall"] == RIGHT


def test_a_headline_shows_every_checked_field_and_how_long_a_wait_took() -> None:
    scenario = demo("futex/wait-across-rollover")
    (phase,) = matrix(scenario, MACHINE, captured_observations(scenario))
    assert headline(phase.cell("sem_timedwait", "time32-libc")) == "ETIMEDOUT 0s"
    assert headline(phase.cell("sem_timedwait", "time64")).startswith("ETIMEDOUT 2.9")
    assert headline(phase.cell("futex_wait_bitset", "time32-syscall")) == "EINVAL"
    ipc = demo("ipc/after-rollover")
    after = next(p for p in matrix(ipc, MACHINE, captured_observations(ipc)) if p.phase == "after")
    text = headline(after.cell("shm_stat_raw", "time32-syscall"), compact=True)
    assert "+" not in text and "shm_ctime_high=0" in text and "1901-12-13 20:46:14" in text


def test_every_line_of_the_demo_tables_fits_100_columns_and_what_broke_shows(tmp_path: Path) -> None:
    _, runs = build_results(tmp_path, failing=True)
    text = "\n\n".join(phase_tables(r.record, _scenario_of(r), r.result) for r in runs)
    too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not too_wide, too_wide
    assert "+1" not in text and " +2" not in text  # nothing hidden behind "+N"
    assert "1901-12-13 20:46:14" in text and "EOVERFLOW" in text
    assert "! EOVERFLOW" in text  # the failed expectation (the test's EINVAL) is marked
    assert "ETIMEDOUT 0s" in text  # sem_timedwait's early timeout
    assert "clamped" in text and "wrapped" in text  # the long tables name what happened


def test_a_narrow_table_stays_wide_and_a_wide_one_turns_long() -> None:
    scenario = demo("filetimes/filesystems[ext4-128]")
    observations = captured_observations(scenario)
    record = RunRecord(scenario.name, MACHINE, "tcg", COMPLETED, "", "", 0.0, observations, (), (), Path("/e"))
    run = JudgedRun(record, evaluate(scenario, MACHINE, observations))
    text = phase_tables(run.record, scenario, run.result)
    assert "[warning] filetimes\ncall           time64" in text  # one column: the matrix
    assert "[2040] filetimes\ncall       flavour         what     value" in text
    assert "utimensat  time32-syscall  wrapped  sent=1903-11-25 17:31:44" in text
    assert "           time64          clamped  sent=2040-01-01 00:00:00 seconds=2038-01-19 03:14:07" in text
    assert "stat       all             clamped  seconds=2038-01-19 03:14:07 nsec=0" in text
    narrow = phase_tables(run.record, scenario, run.result, width=60)
    assert max(len(line) for line in narrow.splitlines()) <= 60


def _scenario_of(run: JudgedRun) -> Scenario:
    from sandbox.report.evidence import default_reader
    scenario, _, problem = default_reader().read(run.record.scenario, run.record.evidence, {})
    assert scenario is not None, problem
    return scenario


def _seen(flavour: str, **values: object) -> Observation:
    return Observation("programs/x", MACHINE, "after", "run", flavour, "perl", values)  # type: ignore[arg-type]  # test data, any mapping


def test_a_time_far_from_the_clock_and_the_others_is_wrong_and_a_failed_program_an_error() -> None:
    clock = 2147483670  # 2038-01-19T03:14:30Z, set by the scenario
    right = _seen("debian12-amd64", status="ok", time=clock + 3)
    perl = _seen("debian12-i386", status="ok", time=2**64 - 1)  # what Debian 12 i386 perl printed
    gawk = _seen("debian12-i386", status="ok", time=25)
    times = frozenset({"time"})
    assert classify(perl, [right], times, clock=clock) == WRONG
    assert classify(gawk, [right], times, clock=clock) == WRONG
    assert classify(right, [gawk], times, clock=clock) == RIGHT  # the one near the clock is not
    assert classify(gawk, [right], times) == RIGHT  # one peer and no clock: nothing to tell them apart
    assert classify(_seen("debian12-i386", status="exit 1", stderr="OSError"), [right], times) == ERROR
    # three 32-bit readings of 1901 against the clock: the 64-bit one is right, they wrapped
    wrapped = [_seen(f, status="ok", time=clock - 2**32) for f in ("a", "b", "c")]
    assert classify(right, wrapped, times, clock=clock) == RIGHT
    assert classify(wrapped[0], [right, *wrapped[1:]], times, clock=clock) == WRAPPED
