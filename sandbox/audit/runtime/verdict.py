"""The runtime verdict of one program, from its runs at each time (pure).

    runtime_verdict(static_verdict, runs) -> (verdict, reason)

The first run is the reference (default: before the rollover); every later
one is compared with it. The rules are a table read top down; the first
that holds decides (RULES).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sandbox.audit.runtime.facts import ProcessCount, Refusal, Time32Call, Time32Truncation, clock_readings, shape
from sandbox.audit.verdict import MIXED, NEEDS_RUNTIME, TIME32, first_rule
from sandbox.base.timefmt import format_time, parse_time

SAFE = "safe"  # no time32 call, nothing refused, nothing changed
CALLS_TIME32 = "calls-time32"  # makes time32 system calls, but its output and status held
BROKE = "broke"  # the kernel truncated a time for it, glibc refused, the status or the output changed
NOT_EXERCISED = "not-exercised"  # the static audit found time32 use the runs never reached
RUNTIME_VERDICTS = (BROKE, CALLS_TIME32, NOT_EXERCISED, SAFE)
"""Worst first: the order the summary counts them in."""
KILLED = 137  # killed by /tools/inroot at the timeout: 128 + SIGKILL
DAY = 86400
NOT_STARTED = (126, 127)  # the shell's and env's "cannot run" / "not found"


@dataclass(frozen=True)
class RunFacts:
    label: str  # before, after, y2106, or the user's
    at: str  # the clock set before the run, ISO 8601
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    time32: tuple[Time32Call, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    truncations: tuple[Time32Truncation, ...] = ()  # series v2 kernels only
    counted: tuple[ProcessCount, ...] = ()  # /tools/time32count: per process, none lost (series kernels)

    @property
    def timed_out(self) -> bool:
        return self.exit_code == KILLED

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "at": self.at, "exit": self.exit_code, "seconds": round(self.seconds, 3),
                "timed_out": self.timed_out, "stdout": self.stdout, "stderr": self.stderr,
                "time32": [f"{c.comm}[{c.pid}] {c.call}" for c in self.time32],
                "refusals": [f"{r.comm}[{r.pid}] {r.function}" for r in self.refusals],
                "truncations": [t.describe() for t in self.truncations],
                "counted": [c.describe() for c in self.counted]}


@dataclass(frozen=True)
class Runs:
    static_verdict: str
    runs: tuple[RunFacts, ...]
    timeout: float
    refusals_seen: bool = True  # False: a static 32-bit glibc program, whose EOVERFLOW no shim sees

    @property
    def later(self) -> tuple[RunFacts, ...]:
        return self.runs[1:]

    def changes(self) -> list[str]:
        """What differs in each later run from the first: status, then output."""
        first, found = self.runs[0], []
        for run in self.later:
            if run.exit_code != first.exit_code:
                found.append(f"{run.label}: exit {first.exit_code}→{run.exit_code}{_first_line(run.stderr)}")
            elif shape(run.stdout) != shape(first.stdout):
                found.append(f"{run.label}: output changed{_first_line(run.stdout)}")
            elif shape(run.stderr) != shape(first.stderr):
                found.append(f"{run.label}: stderr changed{_first_line(run.stderr)}")
        return found

    def went_back(self) -> list[str]:
        """Later runs that printed a time more than a day before the first
        run's clock, which the first run did not print: a wrapped or garbage
        clock reading (busybox's date printing 1970, sqlite3 1956)."""
        first = self.runs[0]
        floor = parse_time(first.at) - DAY
        seen = set(clock_readings(first.stdout))
        found = []
        for run in self.later:
            early = [t for t in clock_readings(run.stdout) if t < floor and t not in seen]
            if early:
                found.append(f"{run.label}: printed {format_time(early[0])[:10]}, the clock read {run.at[:10]}")
        return found

    def truncated(self) -> list[str]:
        """Each site where the kernel handed the program a time that does not
        fit in 32 bits (or took a wrapped, negative one from it), with the first value."""
        first: dict[str, Time32Truncation] = {}
        for run in self.runs:
            for t in run.truncations:
                first.setdefault(t.site, t)
        return [f"{site} ({t.value}→{t.got})" if t.got is not None else f"{site} (passed {t.value})"
                for site, t in first.items()]

    def refused(self) -> list[str]:
        return _distinct(f"{r.function}" for run in self.runs for r in run.refusals)

    def time32_calls(self) -> list[str]:
        return _distinct(c.call for run in self.runs for c in run.time32)

    def counted_calls(self) -> tuple[int, int]:
        """The time32 calls the kernel counted, every process of every run,
        and in how many processes."""
        made = [c.calls for run in self.runs for c in run.counted if c.calls > 0]
        return sum(made), len(made)

    def counted_truncations(self) -> list[str]:
        """Processes the kernel counted truncations for: a break even when its
        site's report was lost to the kernel log's ratelimit."""
        return [f"{run.label}: {c.comm}[{c.pid}] x{c.truncations}"
                for run in self.runs for c in run.counted if c.truncations > 0]

    def calls_seen(self) -> str:
        """The time32 calls named in the kernel log, and the count of them all."""
        names = " ".join(self.time32_calls())
        calls, processes = self.counted_calls()
        counted = f"{calls} counted in {processes} process(es)" if calls else ""
        return "time32: " + "; ".join(part for part in (names, counted) if part)


def refusals_unseen(bits: int, linkage: str, libc: str) -> bool:
    """A static 32-bit glibc program: the preloaded shim cannot reach it, and
    glibc 2.34+ inside it reads the clock with the 64-bit calls and fails
    with EOVERFLOW itself, so the kernel sees nothing either."""
    return bits == 32 and linkage == "static" and libc == "glibc"


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f" ({line[:60]})" if line else ""


def _distinct(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


Rule = tuple[Callable[[Runs], bool], str, Callable[[Runs], str]]
BINDS_TIME32 = (TIME32, MIXED, NEEDS_RUNTIME)

RULES: tuple[Rule, ...] = (
    (lambda r: not r.runs and r.static_verdict in BINDS_TIME32, NOT_EXERCISED,
     lambda r: "not run (not a program), static audit: " + r.static_verdict),
    (lambda r: not r.runs, SAFE,
     lambda r: "not run (not a program), static audit: " + r.static_verdict),
    (lambda r: all(run.exit_code in NOT_STARTED for run in r.runs), NOT_EXERCISED,
     lambda r: f"did not start: exit {r.runs[0].exit_code}{_first_line(r.runs[0].stderr)}"),
    (lambda r: all(run.timed_out for run in r.runs), NOT_EXERCISED,
     lambda r: f"timed out after {r.timeout:g} s at every time"),
    (lambda r: bool(r.truncated()), BROKE,
     lambda r: "; ".join(["kernel truncated: " + " ".join(r.truncated()),
                          *(["glibc EOVERFLOW: " + " ".join(r.refused())] if r.refused() else []),
                          *r.went_back(), *r.changes()])),
    (lambda r: bool(r.counted_truncations()), BROKE,
     lambda r: "; ".join(["kernel counted truncations (no site: its report was not logged): "
                          + " ".join(r.counted_truncations()), *r.went_back(), *r.changes()])),
    (lambda r: bool(r.refused()), BROKE,
     lambda r: "; ".join(["glibc EOVERFLOW: " + " ".join(r.refused()), *r.went_back(), *r.changes()])),
    (lambda r: bool(r.changes() or r.went_back()), BROKE,
     lambda r: "; ".join(r.went_back() + r.changes())),
    (lambda r: bool(r.time32_calls()) or r.counted_calls()[0] > 0, CALLS_TIME32, Runs.calls_seen),
    (lambda r: len({run.exit_code for run in r.runs}) == 1 and r.runs[0].exit_code != 0, NOT_EXERCISED,
     lambda r: f"failed the same way at every time: exit {r.runs[0].exit_code}{_first_line(r.runs[0].stderr)}"),
    (lambda r: r.static_verdict in (TIME32, MIXED), NOT_EXERCISED,
     lambda r: f"static audit: {r.static_verdict}; the command reached no time32 call"),
    (lambda r: not r.refusals_seen, NOT_EXERCISED,
     lambda r: "static glibc: its own EOVERFLOW refusals cannot be seen (no shim reaches a static "
               "program, the kernel sees 64-bit calls); no time32 call, nothing changed"),
    (lambda r: True, SAFE,
     lambda r: "no time32 call, nothing refused or changed"),
)


def runtime_verdict(runs: Runs) -> tuple[str, str]:
    return first_rule(RULES, runs)
