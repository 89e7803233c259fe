"""The scenario model: what a parsed scenario file says, as frozen dataclasses.

Built only by sandbox/scenario/parser.py; read by the runner (steps), the
judge (expectations) and the report.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from sandbox.base.trees import not_built_for
from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT
from sandbox.scenario.catalogue import ProbeInfo
from sandbox.scenario.disks import Disk
from sandbox.scenario.faketime import FakeTime
from sandbox.scenario.matchers import Matcher, Number

ERRNO_FIELD = "errno"
DEFAULT_TIMEOUT = 120
SET_CLOCK_VIA: tuple[str, ...] = ("settimeofday", "clock_settime")
HWCLOCK = "/usr/sbin/hwclock"  # util-linux's (busybox's has no --set), which the hwclock step runs
KERNEL_FINDINGS: tuple[str, ...] = ("bug", "warning", "hung-task", "rcu-stall", "kasan", "ubsan")
"""What the kernel log may report and `expect-kernel` may name (sandbox/guest/klog.py);
a panic or an oops is not among them: either ends the run."""

@dataclass(frozen=True)
class Expectation:
    flavour: str
    call: str
    field: str
    matcher: Matcher


def expectations_on(own: tuple[Expectation, ...], override: tuple[Expectation, ...]) -> tuple[Expectation, ...]:
    """The expectations that hold on a machine: a step's own, with every
    (flavour, call) the machine overrides replaced in place by its override;
    overrides of calls the step leaves unchecked come last."""
    groups: dict[tuple[str, str], list[Expectation]] = {}
    for expectation in override:
        groups.setdefault((expectation.flavour, expectation.call), []).append(expectation)
    result: list[Expectation] = []
    for expectation in own:
        key = (expectation.flavour, expectation.call)
        if key not in groups:
            result.append(expectation)
        elif groups[key]:
            result += groups[key]
            groups[key] = []  # the group is placed once, at its first base field
    return tuple(result) + tuple(e for group in groups.values() for e in group)


@dataclass(frozen=True)
class ProbeStep:
    index: int
    phase: str
    probe: str
    flavours: tuple[str, ...]
    args: tuple[str, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    # [step.expect-on.<machine>]: per machine, expectations that replace the
    # step's own for the same (flavour, call), all fields of that call at once.
    machine_expectations: Mapping[str, tuple[Expectation, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    reset_clock: int | None = None  # reset-clock: set before each flavour runs
    info: ProbeInfo | None = field(default=None, compare=False)  # what the catalogue says it prints
    # userland: the probe built dynamically, run in that Debian userland
    # (chroot) against its glibc; faketime: under libfaketime there, with
    # `environment` (LD_PRELOAD, FAKETIME) set
    userland: str | None = None
    faketime: FakeTime | None = None
    environment: tuple[tuple[str, str], ...] = ()
    static: bool = False  # linkage = "static": /probes' static build, outside the chroot, same environment
    # under: a tool of /tools and its arguments, the probe's command line
    # appended (["seccomp32", "deny", "--"]): the probe runs as its program
    under: tuple[str, ...] = ()
    kind: ClassVar[str] = "probe"

    def flavours_on(self, available: tuple[str, ...]) -> tuple[str, ...]:
        """The step's flavours a machine with these flavours can run."""
        return tuple(flavour for flavour in self.flavours if flavour in available)

    def expectations_on(self, machine: str) -> tuple[Expectation, ...]:
        return expectations_on(self.expectations, self.machine_expectations.get(machine, ()))


RUN_PROBE = "run"  # the "probe" of a run step's observations


@dataclass(frozen=True)
class RunStep:
    """Run a real program in each named userland (rootfs/userlands.toml): its
    exit status, stdout, stderr and any time it prints are the observation
    of call `program`, flavour <userland>."""

    index: int
    phase: str
    argv: tuple[str, ...]
    userlands: tuple[str, ...]
    expectations: tuple[Expectation, ...] = ()
    machine_expectations: Mapping[str, tuple[Expectation, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    stdin: str | None = None
    timeout: Number = 10
    time_pattern: str | None = None  # a regex over stdout; group "time" (or 1) is epoch seconds
    info: ProbeInfo | None = field(default=None, compare=False)
    kind: ClassVar[str] = "run"
    probe: ClassVar[str] = RUN_PROBE

    @property
    def program(self) -> str:
        """The call name of its observations: the program's file name."""
        return self.argv[0].rsplit("/", 1)[-1]

    @property
    def flavours(self) -> tuple[str, ...]:
        return self.userlands

    def flavours_on(self, available: tuple[str, ...]) -> tuple[str, ...]:
        return self.userlands  # validated: every machine of the scenario runs them

    def expectations_on(self, machine: str) -> tuple[Expectation, ...]:
        return expectations_on(self.expectations, self.machine_expectations.get(machine, ()))


@dataclass(frozen=True)
class SetClockStep:
    index: int
    time: int
    via: str = "settimeofday"
    kind: ClassVar[str] = "set-clock"


@dataclass(frozen=True)
class HwclockStep:
    """Set the RTC to `time`, then the system clock from the RTC."""

    index: int
    time: int
    kind: ClassVar[str] = "hwclock"


@dataclass(frozen=True)
class WaitStep:
    """Let `seconds` of guest time pass."""

    index: int
    seconds: Number
    kind: ClassVar[str] = "wait"


@dataclass(frozen=True)
class SysctlStep:
    """Write `value` to the kernel setting `name` (dotted, as sysctl(8) spells it)."""

    index: int
    name: str
    value: str
    kind: ClassVar[str] = "sysctl"

    @property
    def path(self) -> str:
        return "/proc/sys/" + self.name.replace(".", "/")


NTP_PROBE = "ntp"  # the "probe" of an ntp-sync step's observations
NTP_CALL = "chronyd"  # their call
CHRONY_PACKAGE = "chrony"  # what a userland needs for an ntp-sync step or a [time-server]


@dataclass(frozen=True)
class TimeServer:
    """[time-server]: a second guest, its RTC at `time`, serving NTP with the
    chronyd of `userland` on `machine` (sandbox/run/chrony.py)."""

    time: int
    userland: str
    machine: str


@dataclass(frozen=True)
class NtpSyncStep:
    """Start the chronyd of `userland` as the client of `server` (makestep on
    every update) and wait up to `timeout` guest seconds for it to step the
    clock; what it did is the observation of call "chronyd", flavour <userland>.
    must_step: a timeout without a step fails the run (with chronyd's log)."""

    index: int
    phase: str
    userland: str
    server: str | None = None  # None: the [time-server]
    timeout: Number = 30
    must_step: bool = True
    expectations: tuple[Expectation, ...] = ()
    machine_expectations: Mapping[str, tuple[Expectation, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    info: ProbeInfo | None = field(default=None, compare=False)
    kind: ClassVar[str] = "ntp-sync"
    probe: ClassVar[str] = NTP_PROBE

    @property
    def flavours(self) -> tuple[str, ...]:
        return (self.userland,)

    def flavours_on(self, available: tuple[str, ...]) -> tuple[str, ...]:
        return self.flavours  # validated: every machine of the scenario runs it

    def expectations_on(self, machine: str) -> tuple[Expectation, ...]:
        return expectations_on(self.expectations, self.machine_expectations.get(machine, ()))


Step = ProbeStep | RunStep | SetClockStep | HwclockStep | WaitStep | SysctlStep | NtpSyncStep
JudgedStep = ProbeStep | RunStep | NtpSyncStep
"""The steps whose observations are judged against expectations."""


_UNSAFE_RE = re.compile(r"[^A-Za-z0-9_.-]+|\.{2,}")


@dataclass(frozen=True)
class Scenario:
    file: str
    name: str
    title: str
    rtc: int
    machines: Mapping[str, tuple[str, ...]]
    steps: tuple[Step, ...]
    description: str = ""
    timeout: Number = DEFAULT_TIMEOUT
    disks: tuple[Disk, ...] = ()  # [[disk]]: attached and mounted before the steps run
    kernel: str = DEFAULT_VARIANT  # the kernel variant (sandbox/variants.py)
    kernel_args: tuple[str, ...] = ()  # added to the kernel command line
    expect_kernel: tuple[str, ...] = ()  # kernel findings the run must show (KERNEL_FINDINGS)
    variant: str = ""  # the [[variant]] row of a family file; "" for a plain file
    warp: bool = False  # time warp: guest time jumps ahead while the guest idles (docs/time-warp.md)
    varying: tuple[str, ...] = ()  # fields two runs may observe differently (sandbox/judge/repeat.py)
    time_server: TimeServer | None = None  # [time-server]: a second guest serving NTP
    tree: str | None = None  # the kernel tree it is pinned to (sandbox/base/trees.py); None: the session's

    def tree_on(self, session_tree: str) -> str:
        """The tree it boots in a session of `session_tree` (its own if pinned)."""
        return self.tree or session_tree

    def skip_on(self, session_tree: str, machine: str) -> str | None:
        """Why it does not run in a session of `session_tree` on `machine`, or None."""
        if self.tree is not None and self.tree != session_tree:
            return f"pinned to the {self.tree} tree (tree = \"{self.tree}\"); this session runs {session_tree}"
        return not_built_for(session_tree, machine)

    @property
    def slug(self) -> str:
        """The name as one folder name: 'filetimes/filesystems[ext4-128]' -> 'filetimes-filesystems-ext4-128'.
        Always one plain component: a name from a path such as 'scenarios/...toml' ('..') or
        with other characters becomes letters, digits, '_', '-' and inner dots only."""
        slug = _UNSAFE_RE.sub("-", self.name.replace("[", "-").replace("]", "")).strip(".-")
        return slug or "scenario"

    @property
    def probe_steps(self) -> tuple[ProbeStep, ...]:
        return tuple(step for step in self.steps if isinstance(step, ProbeStep))

    @property
    def judged_steps(self) -> tuple[JudgedStep, ...]:
        """Probe, run and ntp-sync steps: the ones with expectations, in order."""
        return tuple(step for step in self.steps if isinstance(step, (ProbeStep, RunStep, NtpSyncStep)))

    def expectations_for(self, machine: str) -> tuple[tuple[JudgedStep, Expectation], ...]:
        """(step, expectation) of each expectation judged on `machine`: a
        step's own, with [step.expect-on.<machine>] over them, for the
        flavours the machine runs (native64 is not judged on a 32-bit one)."""
        available = self.machines[machine]
        return tuple((step, expectation) for step in self.judged_steps
                     for expectation in step.expectations_on(machine)
                     if expectation.flavour in step.flavours_on(available))

    @property
    def userlands(self) -> tuple[str, ...]:
        """Every userland its run steps and probe steps name, once each, in order."""
        return tuple(dict.fromkeys(u for s in self.steps for u in _userlands_of(s)))

    @property
    def probe_userlands(self) -> tuple[str, ...]:
        """The userlands its probe steps run the dynamic probes in."""
        return tuple(dict.fromkeys(s.userland for s in self.probe_steps if s.userland))


def _userlands_of(step: Step) -> tuple[str, ...]:
    if isinstance(step, RunStep):
        return step.userlands
    if isinstance(step, NtpSyncStep):
        return (step.userland,)
    return (step.userland,) if isinstance(step, ProbeStep) and step.userland else ()


def is_time_field(step: JudgedStep, call: str, field_name: str) -> bool:
    """Whether the catalogue declares this field of the step's probe a time."""
    return step.info is not None and step.info.is_time(call, field_name)
