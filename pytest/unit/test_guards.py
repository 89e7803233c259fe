"""Hostile or careless scenario files: each refused before
boot with one line naming the file and the key (sandbox/scenario/guards.py),
never a traceback, a hang or a value the guest cannot run."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from sandbox.base.errors import InputError
from sandbox.scenario import guards, suite
from sandbox.scenario.model import Scenario
from sandbox.scenario.parser import load_scenarios, parse_scenarios

FILE = "scenarios/hostile/case.toml"
HEAD = 'title = "hostile"\nrtc = "2038-01-19T03:13:50Z"\n'
PROBE = '[[step]]\nphase = "p"\nprobe = "clock"\n'


def parse(text: str) -> tuple[Scenario, ...]:
    return parse_scenarios(text, FILE, suite.catalogue(), suite.machine_flavours())


def refused(text: str) -> str:
    with pytest.raises(InputError) as caught:
        parse(text)
    message = str(caught.value)
    assert "\n" not in message and "\x1b" not in message
    assert message.startswith(FILE + ": ")
    return message[len(FILE) + 2:]


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e30", "7201", "0", "-1", '"60"', "[60]"])
def test_a_timeout_must_be_finite_positive_and_bounded(value: str) -> None:
    assert refused(HEAD + f"timeout = {value}\n" + PROBE).startswith("timeout: ")


def test_the_largest_timeout_is_accepted() -> None:
    (scenario,) = parse(HEAD + f"timeout = {guards.TIMEOUT_MAX}\n" + PROBE)
    assert scenario.timeout == guards.TIMEOUT_MAX


@pytest.mark.parametrize("when", ["0000-01-01T00:00:00Z", "99999-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
                                  "2232-04-18T23:47:16Z", "2262-04-12T00:00:00Z"])
@pytest.mark.parametrize("step", ['[[step]]\nset-clock = "{}"\n',
                                  '[[step]]\nphase = "p"\nprobe = "clock"\nreset-clock = "{}"\n'])
def test_clock_moves_stay_where_settimeofday_accepts(when: str, step: str) -> None:
    message = refused(HEAD + step.format(when))
    assert message.startswith(("step[0].set-clock: ", "step[0].reset-clock: ")), message
    assert "TIME_SETTOD_SEC_MAX" in message


def test_the_last_second_settimeofday_accepts_is_accepted() -> None:
    assert guards.CLOCK_MAX == 8277292035  # include/linux/time64.h: KTIME_SEC_MAX - 30 years, minus one
    (scenario,) = parse(HEAD + '[[step]]\nset-clock = "2232-04-18T23:47:15Z"\n')
    assert scenario.steps[0].time == guards.CLOCK_MAX


@pytest.mark.parametrize("matcher", ['{ between = ["0000-01-01T00:00:00Z", "2040-01-01T00:00:00Z"] }',
                                     '"99999-01-01T00:00:00Z"',
                                     "{ between = [nan, 1] }", "{ between = [0, inf] }", "nan",
                                     "{ clamped = -inf }", "{ elapsed = [0, nan] }"])
def test_expectations_name_sane_times_and_finite_numbers(matcher: str) -> None:
    text = HEAD + PROBE + f"[step.expect.time64.clock_gettime]\nseconds = {matcher}\n"
    assert refused(text).startswith("step[0].expect.time64.clock_gettime.seconds")


def test_waits_must_fit_in_the_timeout() -> None:
    text = HEAD + "timeout = 60\nwarp = false\n" + PROBE + "[[step]]\nwait = 30\n[[step]]\nwait = 30\n"
    assert refused(text) == ("step[2].wait: the waits add up to 60 s here, not less than the timeout "
                             "(60 s), and without time warp a wait takes wall time: raise `timeout` or wait less")
    parse(HEAD + "timeout = 61\nwarp = false\n" + PROBE + "[[step]]\nwait = 30\n[[step]]\nwait = 30\n")


def test_under_time_warp_a_day_of_waiting_fits_in_a_minute() -> None:
    """A wait is guest time; with warp the guest's idle day passes in well under a second of wall time."""
    (scenario,) = parse(HEAD + "timeout = 60\nwarp = true\n" + PROBE + "[[step]]\nwait = 86400\n")
    assert scenario.warp and scenario.steps[-1].seconds == 86400


@pytest.mark.parametrize("arg", ["panic=0", "console=ttyS1", "init=/bin/sh", "rdinit=/bin/sh",
                                 "y2038.agent=ttyS0", "y2038.warp=1", "y2038.seed=00", "--", "panic"])
def test_kernel_args_cannot_override_the_harness(arg: str) -> None:
    assert refused(HEAD + f'kernel-args = ["quiet", "{arg}"]\n' + PROBE).startswith("kernel-args[1]: ")


def test_kernel_args_of_our_own_are_fine() -> None:
    (scenario,) = parse(HEAD + 'kernel-args = ["rtc_core.hctosys_beyond_2038=1", "panic_on_warn=1"]\n' + PROBE)
    assert scenario.kernel_args == ("rtc_core.hctosys_beyond_2038=1", "panic_on_warn=1")


@pytest.mark.parametrize("text, key", [
    ('title = "red \\u001b[31m"\nrtc = "2038-01-19T03:13:50Z"\n' + PROBE, "title"),
    ('title = "two\\nlines"\nrtc = "2038-01-19T03:13:50Z"\n' + PROBE, "title"),
    ('title = "bidi \\u202e"\nrtc = "2038-01-19T03:13:50Z"\n' + PROBE, "title"),
    (HEAD + 'description = "bell \\u0007"\n' + PROBE, "description"),
    (HEAD + '"key\\u001b[2J" = 1\n' + PROBE, "(file)"),
    (HEAD + PROBE + '[step.expect.time64.clock_gettime]\n"a\\u009bb" = 1\n', "step[0].expect.time64.clock_gettime"),
])
def test_control_characters_are_refused_and_never_printed(text: str, key: str) -> None:
    message = refused(text)
    assert message.startswith(f"{key}: ") and "control character U+" in message
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in message)


def test_a_description_may_have_lines_and_tabs() -> None:
    (scenario,) = parse(HEAD + 'description = """one\n\ttwo"""\n' + PROBE)
    assert scenario.description == "one\n\ttwo"


@pytest.mark.parametrize("text", [
    "a = " + "[" * 5000 + "]" * 5000 + "\n",
    "a = " + "{ b = " * 2000 + "1" + " }" * 2000 + "\n",
    "a." + ".".join(["b"] * 100) + " = 1\n",
    "a = " + "[" * 40 + "]" * 40 + "\n",
])
def test_deep_nesting_is_one_line(text: str) -> None:
    assert "deep" in refused(text)


def load(path: Path) -> str:
    result: list[BaseException] = []

    def target() -> None:
        try:
            load_scenarios(path, suite.catalogue(), suite.machine_flavours())
        except BaseException as err:  # noqa: BLE001 - handed to the test thread
            result.append(err)
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(5)
    assert not thread.is_alive(), f"loading {path} hangs"
    (err,) = result
    assert isinstance(err, InputError), repr(err)
    return str(err)


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.toml")
    assert load(tmp_path / "fifo.toml").endswith("file: a FIFO, not a regular file")


def test_a_device_is_refused() -> None:
    assert load(Path("/dev/zero")) == "/dev/zero: file: a character device, not a regular file"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    assert load(tmp_path).endswith("file: a directory, not a regular file")


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toml").symlink_to(tmp_path / "b.toml")
    (tmp_path / "b.toml").symlink_to(tmp_path / "a.toml")
    assert "file: cannot read: Too many levels of symbolic links" in load(tmp_path / "a.toml")


def test_a_huge_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.toml").write_text("# " + "x" * guards.MAX_FILE_BYTES + "\n")
    assert "larger than" in load(tmp_path / "big.toml")


def test_a_file_name_with_escape_codes_is_printed_escaped(tmp_path: Path) -> None:
    message = load(tmp_path / "x\x1b[2Jy.toml")
    assert "\x1b" not in message and "\\x1b[2Jy.toml" in message


def test_every_scenario_of_the_repository_keeps_within_the_bounds() -> None:
    assert suite.load_all(suite.scenario_files())
