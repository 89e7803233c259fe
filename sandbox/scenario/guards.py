"""What a hostile or careless scenario file cannot get past, before anything boots.

The bounds a value must keep to be runnable, and a loader that refuses what
is not a small regular text file. Every check fails with one InputError
naming the file and the key (sandbox/base/fields.py `Where`):

- the file: a regular file (not a FIFO, a device or a directory) of at most
  MAX_FILE_BYTES; no symbolic-link loop; TOML nested at most MAX_DEPTH deep;
  no control character in any key;
- `timeout`: a finite number of seconds in (0, TIMEOUT_MAX]; the `wait`
  steps together shorter than it (with time warp: than WARP_SPEEDUP_MAX
  times it), checked again when `--warp` overrides the file; at most
  MAX_STEPS steps;
- clock moves (`set-clock`, a probe's `reset-clock`): what settimeofday()
  accepts, 1970-01-01T00:00:00Z up to TIME_SETTOD_SEC_MAX (2232-04-18);
- times in expectations: EXPECT_TIME_MIN..EXPECT_TIME_MAX (1900..9999), and
  numbers finite;
- `kernel-args`: none of the words the harness sets (HARNESS_KERNEL_ARGS);
- `title` one line, `description` text: no control characters (escape
  codes would reach the terminal).

Pure except read_text (one open, one bounded read).
"""
from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TypeGuard

from sandbox.base.errors import InputError
from sandbox.base.fields import Where, is_number, type_name
from sandbox.base.timefmt import format_time, parse_time

MAX_FILE_BYTES = 1 << 20
"""A scenario file is text a person writes: 1 MiB is far past any of ours."""
MAX_DEPTH = 32
"""Tables and lists nested deeper than this are refused (ours reach 7)."""
TIMEOUT_MAX = 7200
"""Seconds: two hours of TCG guest, more than any scenario needs."""
WARP_SPEEDUP_MAX = 3600
"""Guest seconds of waiting per second of timeout under time warp: a bound
no guest reaches (an idle hour took about 8 s, 450 times; our longest wait,
a day, has a timeout of 120 s, 720 times), so only absurd waits are refused."""
MAX_STEPS = 1000
"""Steps of one scenario: each is a command sent to the guest and answered
(ours reach 30); 20,000 one-second waits would run past any timeout."""

KTIME_SEC_MAX = (2**63 - 1) // 10**9
"""include/linux/time64.h: the last second ktime_t (signed 64-bit ns) holds, 2262-04-11."""
TIME_UPTIME_SEC_MAX = 30 * 365 * 24 * 3600
TIME_SETTOD_SEC_MAX = KTIME_SEC_MAX - TIME_UPTIME_SEC_MAX
"""timespec64_valid_settod() refuses a clock at or past this (2232-04-18T23:47:16Z),
so that 30 years of uptime still fit in ktime_t; and any negative time."""
CLOCK_MIN, CLOCK_MAX = 0, TIME_SETTOD_SEC_MAX - 1

EXPECT_TIME_MIN = parse_time("1900-01-01T00:00:00Z")
EXPECT_TIME_MAX = parse_time("9999-12-31T23:59:59Z")
"""Times an expectation may name: the 32-bit wrap to 1901 and every
filesystem's limit (ext4 2446, XFS bigtime 2486) lie well inside."""

HARNESS_KERNEL_ARGS = ("console", "panic", "init", "rdinit", "y2038.agent", "y2038.seed", "y2038.warp")
"""Kernel parameters the harness sets (sandbox/guest/qemu.py): a scenario
that overrode them would lose its console, its agent, its fast panic, its
random seed or its time warp (the top-level `warp` key says that)."""

_OTHER_CONTROL = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"  # DEL, C1, bidi overrides
_LINE_BAD = re.compile(f"[\x00-\x1f{_OTHER_CONTROL}]")
_TEXT_BAD = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_OTHER_CONTROL}]")  # tab, LF, CR are text


def _bad_char(match: re.Match[str]) -> str:
    return f"U+{ord(match.group()):04X}"


def line(raw: str, where: Where) -> str:
    """One line of text without control characters."""
    bad = _LINE_BAD.search(raw)
    if bad:
        where.fail(f"contains the control character {_bad_char(bad)}; write plain text on one line")
    return raw


def text(raw: str, where: Where) -> str:
    """Text of lines: newlines and tabs, but no other control character."""
    bad = _TEXT_BAD.search(raw)
    if bad:
        where.fail(f"contains the control character {_bad_char(bad)}; only newlines and tabs are text")
    return raw


def timeout(raw: object, where: Where) -> float | int:
    if not is_number(raw) or not raw > 0:  # NaN is not > 0 either
        where.fail(f"expected a positive number of seconds, got {_shown(raw)}")
    if not math.isfinite(raw) or raw > TIMEOUT_MAX:
        where.fail(f"{raw!r} seconds is past the limit of {TIMEOUT_MAX} s")
    return raw


def waits(steps: Iterable[tuple[int, float]], limit: float, where: Where, warp: bool = False) -> None:
    """The waits (step index, seconds) must fit in the timeout: without time
    warp they add up to less than it (the guest also boots and runs the
    other steps within it); with warp to less than WARP_SPEEDUP_MAX times it
    (an idle guest's clock jumps ahead, but not without end)."""
    total, speedup = 0.0, WARP_SPEEDUP_MAX if warp else 1
    for index, seconds in steps:
        total += seconds
        if total >= limit * speedup:
            how = (f"{speedup} times the timeout ({limit * speedup:g} s), what time warp can pass"
                   if warp else f"the timeout ({limit:g} s), and without time warp a wait takes wall time")
            where.item(index).at("wait").fail(
                f"the waits add up to {total:g} s here, not less than {how}: raise `timeout` or wait less")


def clock_time(seconds: int, where: Where) -> int:
    """A time the kernel's clock can be set to (settimeofday, clock_settime)."""
    if not CLOCK_MIN <= seconds <= CLOCK_MAX:
        where.fail(f"{format_time(seconds)} is outside {format_time(CLOCK_MIN)}..{format_time(CLOCK_MAX)}: "
                   "settimeofday() refuses a negative time and one at or past TIME_SETTOD_SEC_MAX")
    return seconds


def expected_time(seconds: int) -> str | None:
    """Why a time in an expectation is refused, or None."""
    if EXPECT_TIME_MIN <= seconds <= EXPECT_TIME_MAX:
        return None
    return (f"{format_time(seconds)} is outside {format_time(EXPECT_TIME_MIN)}.."
            f"{format_time(EXPECT_TIME_MAX)}, the times an expectation may name")


def finite(raw: object) -> TypeGuard[int | float]:
    return is_number(raw) and math.isfinite(raw)


def kernel_args(args: tuple[str, ...], where: Where) -> tuple[str, ...]:
    for index, arg in enumerate(args):
        name = arg.partition("=")[0].replace("-", "_")  # the kernel reads '-' as '_' in names
        if arg == "--":
            where.item(index).fail("'--' ends the kernel's parameters: what follows would go to "
                                   "the harness's init")
        if name in HARNESS_KERNEL_ARGS:
            where.item(index).fail(f"{arg!r}: the harness sets {name}= itself "
                                   f"(it owns: {', '.join(HARNESS_KERNEL_ARGS)})")
    return args


def _shown(raw: object) -> str:
    return repr(raw) if is_number(raw) or isinstance(raw, str) else type_name(raw)


def document(doc: dict[str, object], where: Where) -> dict[str, object]:
    """Nesting at most MAX_DEPTH deep, no control characters in keys (walked
    without recursion, so a deep document cannot overflow the stack)."""
    pending: list[tuple[object, Where, int]] = [(doc, where, 0)]
    while pending:
        node, at, depth = pending.pop()
        if depth > MAX_DEPTH:
            at.fail(f"nested more than {MAX_DEPTH} tables or lists deep")
        if isinstance(node, dict):
            for key, value in node.items():
                bad = _LINE_BAD.search(key)
                if bad:
                    Where(at.file, at.key).fail(f"a key contains the control character {_bad_char(bad)}")
                pending.append((value, at.at(key), depth + 1))
        elif isinstance(node, list):
            pending += [(item, at.item(i), depth + 1) for i, item in enumerate(node)]
    return doc


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_text(path: Path, file: str) -> str:
    """The file's text: a regular file of at most MAX_FILE_BYTES, UTF-8.
    Opened without blocking (a FIFO with no writer must not hang us)."""
    where = Where(file)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(file, "file", f"cannot read: {err.strerror or err}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            where.at("file").fail(f"{kind}, not a regular file")
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:
            where.at("file").fail(f"larger than {MAX_FILE_BYTES} bytes: not a scenario")
    except OSError as err:
        raise InputError(file, "file", f"cannot read: {err.strerror or err}") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(file, "toml", f"not UTF-8 text: {err}") from None
