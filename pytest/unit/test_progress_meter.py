"""Progress of long work: kbuild's steps read from its output, the expected
count from the previous build, the ETA and the line within 100 columns."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.base.errors import SandboxError
from sandbox.base.meter import COUNT_EVERY, WIDTH, Meter, clock, line, seconds_left
from sandbox.base.progress import metered
from sandbox.base.runcmd import run
from sandbox.build.kbuild import STEPS_KEY, count_steps, previous_steps, step_counter, step_of, steps_in_log

DATA = Path(__file__).parent.parent / "data" / "kbuild"


def test_kbuild_steps_are_its_quiet_command_lines_only() -> None:
    log = (DATA / "armhf-strict-excerpt.log").read_text().splitlines()
    assert count_steps(log) == 38
    assert steps_in_log(DATA / "armhf-strict-excerpt.log") == 38
    assert steps_in_log(DATA / "no-such-build.log") is None
    words = [step_of(text) for text in log if step_of(text)]
    assert words[:3] == ["GEN", "HOSTCC", "GEN"]
    assert {"LEX", "YACC", "HOSTLD", "NM", "SORTTAB", "OBJCOPY", "GZIP", "LD", "CC", "AS"} <= set(words)
    # make's own lines, the merge's chatter, kconfig warnings and "Kernel: ... is ready" are not steps
    assert step_of("make[1]: Entering directory '/root/.cache/y2038-sandbox/build/armhf-strict'") is None
    assert step_of(".config:1149:warning: override: NO_HZ_IDLE changes choice state") is None
    assert step_of("  Kernel: arch/arm/boot/zImage is ready") is None
    assert step_of("   12 |   CC = 1;") is None
    assert step_of("  CC [M]  drivers/rtc/rtc-pl031.o") == "CC"
    assert step_of("  HOSTCC  scripts/basic/fixdep\n") == "HOSTCC"


def test_a_step_counter_ticks_once_per_kbuild_step_line() -> None:
    ticks: list[int] = []
    on_line = step_counter(ticks.append)
    for text in (DATA / "armhf-strict-excerpt.log").read_text().splitlines():
        on_line(text)
    assert ticks == [1] * 38


def write_info(kernels: Path, folder: str, **info: object) -> None:
    (kernels / folder).mkdir(parents=True)
    (kernels / folder / "build-info.json").write_text(json.dumps(info))


def test_expected_count_is_the_newest_build_of_that_machine_and_variant(tmp_path: Path) -> None:
    write_info(tmp_path, "armhf-strict-old", machine="armhf", variant="strict",
               built_at="2026-12-01T10:00:00Z", **{STEPS_KEY: 1100})
    write_info(tmp_path, "armhf-strict-new", machine="armhf", variant="strict",
               built_at="2026-12-03T15:48:28Z", **{STEPS_KEY: 1215})
    write_info(tmp_path, "armhf-series-x", machine="armhf", variant="series",
               built_at="2026-12-04T00:00:00Z", **{STEPS_KEY: 1400})
    write_info(tmp_path, "armhf-mutant-rtc-x", machine="armhf", variant="series", mutant="rtc.patch",
               built_at="2026-12-05T00:00:00Z", **{STEPS_KEY: 40})
    write_info(tmp_path, "armhf-pristine-x", machine="armhf", variant="pristine",
               built_at="2026-12-05T00:00:00Z")  # built before counts were kept
    assert previous_steps(tmp_path, "armhf", "strict") == 1215
    assert previous_steps(tmp_path, "armhf", "series") == 1400  # not the mutant built in its folder
    assert previous_steps(tmp_path, "armhf", "mutant") == 40
    assert previous_steps(tmp_path, "armhf", "pristine") is None
    assert previous_steps(tmp_path, "i386", "strict") is None


def test_eta_is_the_pace_so_far_applied_to_what_is_left() -> None:
    assert seconds_left(300, 1200, 60.0) == 180.0
    assert seconds_left(0, 1200, 5.0) is None  # no pace yet
    assert seconds_left(1200, 1200, 60.0) is None
    assert seconds_left(1300, 1200, 60.0) is None  # past the last build's count
    assert seconds_left(10, None, 5.0) is None
    assert [clock(s) for s in (0.4, 42, 185, 3725)] == ["0s", "42s", "3m05s", "1h02m"]


def test_the_line_says_done_of_expected_and_time_left() -> None:
    assert line("kernel x86_64/series", 812, 1170, 130.0) == \
        "kernel x86_64/series: 812/1170 steps (69%), 2m10s, about 57s left"
    assert line("kernel x86_64/series", 1300, 1170, 130.0) == \
        "kernel x86_64/series: 1300 steps (the last run had 1170), 2m10s"
    assert line("kernel x86_64/series", 50, None, 9.0) == \
        "kernel x86_64/series: 50 steps, 9s (no earlier count to compare)"
    assert line("scenarios", 12, 57, 30.0, unit="scenarios") == \
        "scenarios: 12/57 scenarios (21%), 30s, about 1m52s left"  # 30 s / 12 × 45


def test_a_long_label_gives_way_within_100_columns() -> None:
    label = "kernel x86_64/mutant " + "settod-no-upper-bound-" * 6 + "96f030bf23fc32ea"
    shown = line(label, 1169, 1170, 3599.0)
    assert len(shown) == WIDTH
    assert shown.endswith(": 1169/1170 steps (99%), 59m59s, about 3s left")
    assert shown.startswith("kernel x86_64/mutant settod") and "…" in shown
    assert len(line(label, 5, 1170, 1.0, width=96)) <= 96


def test_in_a_log_a_line_every_ten_percent() -> None:
    meter = Meter("kernel armhf/series", 1000, start=0.0, tty=False, every=10)
    shown = [text for n in range(1, 1001) if (text := meter.tick(n * 0.1))]
    assert len(shown) == 10
    assert shown[0].startswith("kernel armhf/series: 100/1000 steps (10%), 10s, about 1m30s left")
    assert shown[-1].startswith("kernel armhf/series: 1000/1000 steps (100%), 1m40s")
    assert meter.final(101.0) is None  # the 100% line was the last: not twice
    meter.tick(102.0)  # one step more than the last build had
    assert meter.final(103.0) == "kernel armhf/series: 1001 steps (the last run had 1000), 1m43s"


def test_in_a_log_without_a_count_a_line_every_few_hundred_steps() -> None:
    meter = Meter("kernel i386/strict", None, start=0.0, tty=False)
    shown = [text for n in range(1, 2 * COUNT_EVERY + 1) if (text := meter.tick(float(n)))]
    assert len(shown) == 2 and shown[0].startswith(f"kernel i386/strict: {COUNT_EVERY} steps")
    assert meter.final(500.0) == f"kernel i386/strict: {2 * COUNT_EVERY}/{2 * COUNT_EVERY} steps (100%), 8m20s"


def test_on_a_terminal_redrawn_at_most_four_times_a_second() -> None:
    meter = Meter("k", 100, start=0.0, tty=True)
    shown = [meter.tick(t / 100) for t in range(1, 101)]  # 100 steps in one second
    assert sum(1 for text in shown if text) == 4
    assert shown[0] == "k: 1/100 steps (1%), 0s, about 1s left"


def test_make_output_goes_to_the_log_and_line_by_line_to_the_meter(tmp_path: Path) -> None:
    log, seen = tmp_path / "build.log", list[str]()
    script = "printf 'make[1]: Entering\\n  CC      a.o\\n  LD      vmlinux\\n'; echo oops >&2"
    run(["sh", "-c", script], log=log, on_line=seen.append)
    assert seen == ["make[1]: Entering\n", "  CC      a.o\n", "  LD      vmlinux\n", "oops\n"]
    assert log.read_text() == "".join(seen) and steps_in_log(log) == 2
    with pytest.raises(SandboxError, match=f"exit code 3: see {log}"):
        run(["sh", "-c", "echo '  CC      b.o'; exit 3"], log=log, on_line=seen.append)
    assert log.read_text().endswith("oops\n  CC      b.o\n")  # appended, as without on_line


def test_metered_in_a_log_prints_each_mark_once(capsys: pytest.CaptureFixture[str]) -> None:
    with metered("kernel x86_64/series", 4, every=50) as tick:
        for _ in range(4):
            tick(1)
    lines = capsys.readouterr().err.splitlines()  # stderr is not a terminal here
    assert [text.split(",")[0] for text in lines] == ["==> kernel x86_64/series: 2/4 steps (50%)",
                                                      "==> kernel x86_64/series: 4/4 steps (100%)"]
