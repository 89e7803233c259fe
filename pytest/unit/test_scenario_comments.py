"""The comments of scenario files, attached to the expect tables they explain
(sandbox/scenario/comments.py): what the page shows behind each cell."""
from __future__ import annotations

from sandbox.base.paths import SCENARIOS
from sandbox.scenario.comments import CommentKey, lines_naming, parse_comments
from sandbox.scenario import suite

ROLLOVER = SCENARIOS / "clock" / "rollover.toml"
FILESYSTEMS = SCENARIOS / "filetimes" / "filesystems.toml"

SYNTHETIC = '''# header line one
# header line two

title = "t"

# not attached: a blank line follows

[[step]]
# inside the step body
phase = "a"
probe = "clock"

# flavour table comment
[step.expect.time64]
time = { seconds = 1 }
# a body comment for gettimeofday
gettimeofday = { seconds = 2 }  # and a trailing one

[step.expect."time32-libc".time]
errno = "EOVERFLOW"

[step.expect.time32-libc.gettimeofday]
errno = "EOVERFLOW"

# the machine's own reason
[step.expect-on.armhf.time32-syscall]
time = { errno = "ENOSYS" }

# second step
[[step]]
wait = 1
'''


def test_the_comment_above_each_expect_table_belongs_to_its_step_and_flavour() -> None:
    comments = parse_comments(ROLLOVER.read_text())
    scenario = suite.load(ROLLOVER)
    before, after = scenario.probe_steps
    assert comments.explain(before.index, "time32-libc", "time").startswith(
        "glibc: sysdeps/unix/sysv/linux/clock_gettime.c __clock_gettime()")
    assert comments.explain(after.index, "time32-libc", "clock_gettime").startswith(
        "glibc >= 2.34 with 32-bit time_t reads the clock")
    assert "in_time_t_range() fails" in comments.explain(after.index, "time32-libc", "time")
    # the set-clock step's comment sits inside its [[step]] table
    assert "do_sys_settimeofday64()" in comments.step(1)
    assert comments.header.startswith("scenarios/clock/rollover.toml\n\nRead CLOCK_REALTIME")


def test_a_call_table_without_a_comment_takes_the_one_above_its_flavours_first_call() -> None:
    comments = parse_comments(ROLLOVER.read_text())
    for call in ("time", "gettimeofday", "clock_gettime"):
        text = comments.explain(2, "time32-syscall", call)
        assert text.startswith("The legacy 32-bit syscalls truncate silently: tv_sec lands in 1901.")
        assert "put_old_timespec32()" in text


def test_a_machine_override_explains_only_the_calls_it_replaces() -> None:
    comments = parse_comments(ROLLOVER.read_text())
    assert comments.explain(0, "time32-syscall", "time", "armhf").startswith("armhf: ARM EABI never had time(2).")
    assert comments.explain(0, "time32-syscall", "gettimeofday", "armhf").startswith(
        "Before the rollover every time fits in 32 bits")
    assert comments.explain(0, "time32-syscall", "time", "x86_64").startswith("Before the rollover")


def test_flavour_groups_variant_rows_and_step_banners_of_a_family() -> None:
    comments = parse_comments(FILESYSTEMS.read_text())
    assert comments.groups["time64s"] == ("time64", "native64")
    assert "mnt_warn_timestamp_expiry()" in comments.explain(0, "time64", "mount_warning")
    assert comments.explain(1, "time32-libc", "utimensat") == ""  # the family's expect tables carry none
    assert comments.step(2) == "---- 2038-01-19T03:14:08Z: the first second past INT32_MAX: the rollover"
    assert "EXT4_NON_EXTRA_TIMESTAMP_MAX" in comments.variant("ext4-128")
    assert "bigtime" in comments.variant("xfs-bigtime") and "bigtime" not in comments.variant("tmpfs")
    assert "Who decides what, for every step" in comments.header


def test_body_trailing_and_quoted_key_comments_and_blank_lines() -> None:
    comments = parse_comments(SYNTHETIC)
    assert comments.header == "header line one\nheader line two"
    assert comments.step(0) == "inside the step body"
    assert comments.step(1) == "second step"
    assert comments.explain(0, "time64", "time") == "flavour table comment"
    assert comments.explain(0, "time64", "gettimeofday") == "a body comment for gettimeofday\nand a trailing one"
    assert comments.explain(0, "time32-libc", "time") == ""
    assert comments.explain(0, "time32-syscall", "time", "armhf") == "the machine's own reason"
    assert comments.explain(0, "time32-syscall", "gettimeofday", "armhf") == ""
    assert "not attached" not in "".join(comments.expect.values()) + "".join(comments.steps.values())


def test_every_repository_scenario_file_has_a_header_and_the_rollover_explains_every_group() -> None:
    for path in suite.scenario_files():
        assert parse_comments(path.read_text()).header, path
    comments = parse_comments(ROLLOVER.read_text())
    for machine in ("x86_64", "armhf"):
        for step in suite.load(ROLLOVER).probe_steps:
            for e in step.expectations_on(machine):
                assert comments.explain(step.index, e.flavour, e.call, machine), (machine, step.index, e)


def test_lines_naming_a_call_pick_its_line_of_a_list() -> None:
    text = ("time32-syscall: the legacy syscall numbers, each served by:\n"
            "  clock_gettime   posix-timers.c sys_clock_gettime32()\n"
            "  clock_getres    posix-timers.c sys_clock_getres_time32()\n"
            "  time            time.c sys_time32()")
    assert lines_naming(text, "time") == ["  time            time.c sys_time32()"]
    assert lines_naming(text, "clock_getres") == ["  clock_getres    posix-timers.c sys_clock_getres_time32()"]


# The file's structure, not its lines: each of these the line scanner this
# module replaced got wrong.

STRUCTURE = '''title = "t"
description = """
# a line of the description, not the file's header
"""

[[step]]
phase = "p"
run = ["cat"]
userlands = ["u"]
stdin = """
# a line of the program's input
[section]
"""
# why the timeout
timeout = 5

[step.expect.u]
stdout = { matches = "say \\"#1\\"" }  # the program's first line
status = "ok"

[step.expect.time64]  # 64-bit time_t
time = { seconds = 1 }

[[step]]
phase = "q"
probe = "clock"
expect.time64.time = { seconds = 1 }  # the dotted key's call
'''


def test_a_multi_line_string_holds_neither_comments_nor_tables() -> None:
    comments = parse_comments(STRUCTURE)
    assert comments.header == ""
    assert comments.step(0) == "why the timeout"  # after "[section]", still the step's body
    assert "input" not in "".join(comments.expect.values()) + "".join(comments.steps.values())


def test_a_comment_after_a_string_with_an_escaped_quote_is_the_comment() -> None:
    assert parse_comments(STRUCTURE).explain(0, "u", "stdout") == "the program's first line"


def test_the_comment_on_a_header_line_belongs_to_its_table() -> None:
    assert parse_comments(STRUCTURE).explain(0, "time64", "time") == "64-bit time_t"


def test_a_dotted_expect_key_in_a_step_body_explains_its_call_not_the_step() -> None:
    comments = parse_comments(STRUCTURE)
    assert comments.explain(1, "time64", "time") == "the dotted key's call"
    assert comments.step(1) == ""
    assert CommentKey(1, "time64", "time") in comments.expect


FAMILY = '''# header

title = "t"

[[variant]]
name = "a"
new = "time32-libc"

[[variant]]
name = "b"
new = "time64"

[[step]]
phase = "p"
probe = "clock"

# every row's
[step.expect.time64]
time = { seconds = 1 }
clock_gettime = { seconds = 1 }  # every row's clock_gettime

# row a's own
[step.expect-variant.a.time64]
clock_gettime = { seconds = 2 }

[[step]]
phase = "q"
probe = "clock"
# only in row b
variants = ["b"]

[[step]]
phase = "r"
probe = "clock"

# the new flavour of the row
[step.expect."${new}"]
time = { seconds = 1 }
'''


def test_a_rows_own_table_explains_what_it_replaces_and_no_more() -> None:
    comments = parse_comments(FAMILY)
    assert comments.explain(0, "time64", "clock_gettime", variant="b") == "every row's clock_gettime"
    assert comments.explain(0, "time64", "clock_gettime", variant="a") == "row a's own"
    assert comments.explain(0, "time64", "time", variant="a") == "row a's own"  # its flavour's comment first
    assert comments.explain(0, "time64", "time", variant="b") == "every row's"


def test_a_rows_steps_are_the_files_steps_it_keeps_and_keys_are_read_with_its_values() -> None:
    comments = parse_comments(FAMILY)
    assert comments.step(1, "b") == "only in row b" and comments.step(1, "a") == ""
    assert comments.explain(1, "time32-libc", "time", variant="a") == "the new flavour of the row"  # file step 2
    assert comments.explain(2, "time64", "time", variant="b") == "the new flavour of the row"
    assert comments.explain(2, "time32-libc", "time", variant="b") == ""
