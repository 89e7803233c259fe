"""What one run of a program left behind, read (pure: text in, facts out).

    time32_calls(kernel_log)   the series kernel's `log` policy lines
                               ("time32: sqlite3[212] tgid 212 exe
                               /usr/bin/sqlite3 called clock_gettime32
                               (allowed)"): one per process and system call,
                               the first time that process made it, while
                               the reports' ratelimit (200 lines in 5 s for
                               each user, since series v3.1) lets it
    time32_truncations(kernel_log)
                               the series v2 kernel's truncation lines
                               ("time32: date[212] tgid 212 exe /usr/bin/date
                               truncated 2147483670 to -2147483626 in
                               put_old_timespec32 (syscall 265)"): the first time at each site
                               that the kernel handed the process a time that
                               does not fit in 32 bits ("passed -2147483626
                               in get_old_timespec32": took a wrapped one, a
                               negative time 2**32 s from the clock; since
                               series v3.1 not a time before 1970 nor a
                               negative timeout)
    process_counts(lines)      /tools/time32count's lines ("time32count 212 3 1
                               date"): per process, as it exited, the
                               kernel's counts of its time32 calls and
                               truncations (/proc/<pid>/status), none lost
                               to the ratelimit; -1 on a kernel without them
    refusals(shim_log)         the preloaded shim's lines (rootfs/shim/):
                               "<pid> <program> <function>", a glibc call that
                               failed with EOVERFLOW
    clock_readings(text)       the times it printed (dates, epoch seconds)
    shape(text)                output with its numbers and day and month names
                               masked, blanks squeezed: two runs whose outputs differ only in
                               the time they print have the same shape

Series v1 counted time32 calls per task only; series v2 also
reports truncations, and names the tgid and the executable in every line
(kernel-series 0021; lines without them, from older series kernels, are read
too). A kernel can only see the truncations it makes: a glibc
2.34+ program with 32-bit time_t reads the 64-bit time and gets EOVERFLOW
from glibc itself (refusals(), through the shim), and a program that keeps
a 1901 it computed itself shows only as changed output.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sandbox.base.timefmt import days_from_civil

WHO = r"time32: (?P<comm>.{1,16}?)\[(?P<pid>\d+)\](?: tgid (?P<tgid>\d+))?(?: exe (?P<exe>.+?))? "
"""How every report names its process: the thread's comm and pid, then its
tgid and executable (older series: tgid in truncation lines only, no exe)."""
TIME32_LINE = re.compile(WHO + r"called (?P<call>\w+) \((?:allowed|denied|trapped)\)")
TRUNCATION_LINE = re.compile(WHO + r"(?:truncated (?P<value>-?\d+) to (?P<got>-?\d+)|passed (?P<negative>-?\d+)) "
                             r"in (?P<site>\w+) \(syscall (?P<syscall>-?\d+)\)")
COUNT_LINE = re.compile(r"time32count (?P<pid>\d+) (?P<calls>-?\d+) (?P<truncations>-?\d+) (?P<comm>.{1,64})")
REFUSAL_LINE = re.compile(r"(?P<pid>\d+) (?P<comm>.{1,16}) (?P<function>\w+)")
# A number with or without its fraction: Python's datetime prints
# "03:10:01" when the microseconds are 0 and "03:14:30.470000" otherwise.
NUMBER = re.compile(r"\d+(?:\.\d+)?")
SPACES = re.compile(r"[ \t]+")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
ISO_DATE = re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)(?!\d)")
DATE_WORDS = re.compile(r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d>\d{1,2}) "
                        r"\d\d:\d\d:\d\d (?:[A-Z]{3,4} )?(?P<y>\d{4})\b")
EPOCH = re.compile(r"(?<![\d.-])(?:-\d{9,10}|\d{10,11})(?![\d.])")
"""Epoch seconds: negative (before 1970: a wrapped 32-bit time) or 10 and 11
digits (2001 to 5138); a positive 9-digit number is as likely nanoseconds."""
NAMES = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b")


@dataclass(frozen=True)
class Time32Call:
    comm: str
    pid: int
    call: str  # the kernel's name: clock_gettime32, futex_time32, ...
    exe: str = ""  # the executable the kernel names (series 0021 on), else ""


@dataclass(frozen=True)
class Time32Truncation:
    comm: str
    pid: int
    tgid: int
    site: str  # where the kernel narrowed it: put_old_timespec32, time, stat64, ...
    value: int  # the full time
    got: int | None  # what the program got in 32 bits; None: a negative time it passed
    syscall: int  # the number in the program's ABI
    exe: str = ""  # the executable the kernel names (series 0021 on), else ""

    def describe(self) -> str:
        what = f"{self.value} -> {self.got}" if self.got is not None else f"passed {self.value}"
        return f"{self.comm}[{self.pid}] {self.site} {what}"


@dataclass(frozen=True)
class ProcessCount:
    """What the kernel counted for one process (its last image) as it exited."""

    comm: str
    pid: int
    calls: int  # time32 system calls; -1: the kernel has no count
    truncations: int  # times truncated to 32 bits, or negative 32-bit times passed; -1: no count

    def describe(self) -> str:
        return f"{self.comm}[{self.pid}] {self.calls} call(s) {self.truncations} truncation(s)"


@dataclass(frozen=True)
class Refusal:
    comm: str
    pid: int
    function: str  # the glibc function that returned EOVERFLOW


def time32_calls(kernel_log: str) -> tuple[Time32Call, ...]:
    found = []
    for line in kernel_log.splitlines():
        match = TIME32_LINE.search(line)
        if match:
            found.append(Time32Call(match["comm"], int(match["pid"]), match["call"], match["exe"] or ""))
    return tuple(found)


def time32_truncations(kernel_log: str) -> tuple[Time32Truncation, ...]:
    found = []
    for line in kernel_log.splitlines():
        match = TRUNCATION_LINE.search(line)
        if match and match["tgid"]:
            negative = match["negative"] is not None
            found.append(Time32Truncation(
                match["comm"], int(match["pid"]), int(match["tgid"]), match["site"],
                int(match["negative"] if negative else match["value"]),
                None if negative else int(match["got"]), int(match["syscall"]), match["exe"] or ""))
    return tuple(found)


def process_counts(lines: str) -> tuple[ProcessCount, ...]:
    return tuple(ProcessCount(m["comm"], int(m["pid"]), int(m["calls"]), int(m["truncations"]))
                 for line in lines.splitlines() if (m := COUNT_LINE.fullmatch(line.strip())))


def refusals(shim_log: str) -> tuple[Refusal, ...]:
    return tuple(Refusal(m["comm"], int(m["pid"]), m["function"])
                 for line in shim_log.splitlines() if (m := REFUSAL_LINE.fullmatch(line.strip())))


def clock_readings(text: str) -> tuple[int, ...]:
    """The times a program printed, as seconds since the epoch: ISO dates
    (2038-01-19, read as midnight), `date`'s "Jan 19 03:10:05 UTC 2038"
    (midnight too) and epoch seconds (EPOCH)."""
    found = [days_from_civil(int(m["y"]), int(m["m"]), int(m["d"])) * 86400
             for m in ISO_DATE.finditer(text) if 1 <= int(m["m"]) <= 12 and 1 <= int(m["d"]) <= 31]
    found += [days_from_civil(int(m["y"]), MONTHS.index(m["mon"]) + 1, int(m["d"])) * 86400
              for m in DATE_WORDS.finditer(text)]
    found += [int(m[0]) for m in EPOCH.finditer(text)]
    return tuple(found)


def shape(text: str) -> str:
    """Numbers, day and month names masked, runs of blanks made one ("Feb  7")."""
    return SPACES.sub(" ", NAMES.sub("@", NUMBER.sub("#", text))).strip()
