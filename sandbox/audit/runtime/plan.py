"""The runtime audit's guest commands: a pure function of what runs where.

    plan(subjects, moments, timeout, tools, log, count) -> [AuditCommand]

Before anything runs: each userland gets /proc, /dev and a fresh /tmp
(sandbox/run/plan.py userland_commands), the kernel's time32 policy is set
to `log`, and the kernel log is emptied. Then, at each moment (set with
settimeofday from the 64-bit /tools/settime, the first too: the machine
boots with its RTC there, but a 32-bit kernel without the series' patch
leaves a clock past 2038 at 1970), every subject runs once, each run followed by the
collection of what it left: the kernel log's new lines (`dmesg -c`), the
shim's log and, on the series kernel, each process's counts of time32 calls
and truncations (/tools/time32count, which runs the program traced and
reads them from /proc/<pid>/status as each process exits: never lost to
the kernel log's ratelimit). A run is bounded by /tools/inroot (killed
after the timeout).
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from sandbox.audit.commands import Command
from sandbox.base.timefmt import parse_time
from sandbox.run.plan import in_root, userland_commands

SHIM_GUEST_PATH = "/.y2038/time32-refusals.so"  # inside each userland's root
FILES_GUEST_DIR = "/.y2038/files"  # the user's own files, inside the base userland's root
SHIM_LOG = "/tmp/.y2038-refusals-{n}.log"  # inside the userland: its /tmp is a tmpfs
REFUSALS_MARK = "==y2038-refusals=="
COUNTS = "/tmp/.y2038-counts-{n}"  # in the initramfs's root, outside every userland
COUNTS_MARK = "==y2038-counts=="
SETUP, CLOCK, RUN, COLLECT = "setup", "clock", "run", "collect"


@dataclass(frozen=True)
class Moment:
    label: str  # before, after, y2106, or the user's
    at: str  # ISO 8601 UTC


DEFAULT_MOMENTS = (
    Moment("before", "2038-01-19T03:10:00Z"),
    Moment("after", "2038-01-19T03:14:30Z"),
    Moment("y2106", "2106-02-07T06:28:20Z"),
)


@dataclass(frozen=True)
class Subject:
    """One program to run: where it is in the guest and with what."""

    key: int  # its place among the subjects of the boot
    userland: str  # the root it runs in: /userlands/<name>
    path: str  # its path inside that root
    command: Command
    shim: bool  # preload the EOVERFLOW shim (32-bit dynamic programs)

    @property
    def root(self) -> str:
        return f"/userlands/{self.userland}"


@dataclass(frozen=True)
class AuditCommand:
    kind: str  # SETUP, CLOCK, RUN, COLLECT
    shell: str
    moment: int = -1  # index into the moments
    subject: int = -1  # Subject.key
    must_succeed: bool = False


def run_shell(subject: Subject, moment: int, timeout: float, tools: str = "/tools", count: bool = False) -> str:
    """The program in its root, as a scenario's run step runs one
    (sandbox/run/plan.py in_root), with the shim preloaded if asked, and
    traced by time32count if count."""
    preload = ((f"LD_PRELOAD={SHIM_GUEST_PATH}", f"Y2038_SHIM_LOG={shim_log(subject, moment)}")
               if subject.shim else ())
    if subject.command.shell:
        argv = ["/bin/sh", "-c", subject.command.shell, subject.path]
    else:
        argv = [subject.path, *subject.command.args]
    counter = f"{tools}/time32count {counts_file(subject, moment)} " if count else ""
    return f"{counter}{in_root(subject.root, timeout, argv, preload)} </dev/null"


def shim_log(subject: Subject, moment: int) -> str:
    return SHIM_LOG.format(n=f"{subject.key}-{moment}")


def counts_file(subject: Subject, moment: int) -> str:
    return COUNTS.format(n=f"{subject.key}-{moment}")


def _read(path: str) -> str:
    """A file's lines by the shell's own redirection: busybox's cat stat()s
    the file, which fails past 2038 (busybox is a 32-bit time_t program)."""
    return f"{{ while IFS= read -r line; do echo \"$line\"; done < {shlex.quote(path)}; }} 2>/dev/null"


def collect_shell(subject: Subject, moment: int, count: bool = False) -> str:
    """The kernel log's lines since the last collection, the shim's log,
    then time32count's lines if the run was counted."""
    counts = f"echo {COUNTS_MARK}; {_read(counts_file(subject, moment))}; " if count else ""
    return f"dmesg -c; echo {REFUSALS_MARK}; {_read(subject.root + shim_log(subject, moment))}; {counts}true"


def split_collected(text: str) -> tuple[str, str, str]:
    """A collection's output -> (kernel log lines, shim log, time32count's lines)."""
    kernel, _, rest = text.partition(REFUSALS_MARK + "\n")
    shim, _, counts = rest.partition(COUNTS_MARK + "\n")
    return kernel, shim, counts


def plan(subjects: list[Subject], moments: tuple[Moment, ...], timeout: float,
         tools: str = "/tools", log: bool = True, count: bool | None = None) -> list[AuditCommand]:
    """log=False: a kernel without the series (no kernel.time32_syscalls,
    no counts in /proc/<pid>/status: nothing for time32count to read);
    count: each run traced by time32count (default: as log)."""
    count = log if count is None else count
    userlands = tuple(dict.fromkeys(s.userland for s in subjects))
    commands = [AuditCommand(SETUP, c.shell, must_succeed=True) for c in userland_commands(userlands)]
    if log:
        commands.append(AuditCommand(SETUP, f"{tools}/sysctl kernel.time32_syscalls log", must_succeed=True))
    commands.append(AuditCommand(SETUP, "dmesg -c >/dev/null", must_succeed=True))
    for index, moment in enumerate(moments):
        commands.append(AuditCommand(CLOCK, f"{tools}/settime {parse_time(moment.at)} settimeofday "
                                            "&& dmesg -c >/dev/null", index, must_succeed=True))
        for subject in subjects:
            run = run_shell(subject, index, timeout, tools, count)
            commands += [AuditCommand(RUN, run, index, subject.key),
                         AuditCommand(COLLECT, collect_shell(subject, index, count), index, subject.key)]
    return commands
