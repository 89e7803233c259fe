"""The scenario model: what a parsed scenario file says, as frozen dataclasses.

Built only by sandbox/scenario/parser.py; read by the runner (steps), the
judge (expectations) and the report.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT
from sandbox.scenario.catalogue import ProbeInfo
from sandbox.scenario.disks import Disk
from sandbox.scenario.matchers import Matcher, Number

ERRNO_FIELD = "errno"
DEFAULT_TIMEOUT = 120
SET_CLOCK_VIA: tuple[str, ...] = ("settimeofday", "clock_settime")
HWCLOCK = "/usr/sbin/hwclock"  # util-linux's (busybox's has no --set), which the hwclock step runs

@dataclass(frozen=True)
class Expectation:
    flavour: str
    call: str
    field: str
    matcher: Matcher


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
    kind: ClassVar[str] = "probe"

    def flavours_on(self, available: tuple[str, ...]) -> tuple[str, ...]:
        """The step's flavours a machine with these flavours can run."""
        return tuple(flavour for flavour in self.flavours if flavour in available)

    def expectations_on(self, machine: str) -> tuple[Expectation, ...]:
        """The expectations that hold on `machine`: the step's own, with every
        (flavour, call) the machine overrides replaced in place by its override;
        overrides of calls the step leaves unchecked come last."""
        override = self.machine_expectations.get(machine, ())
        groups: dict[tuple[str, str], list[Expectation]] = {}
        for expectation in override:
            groups.setdefault((expectation.flavour, expectation.call), []).append(expectation)
        result: list[Expectation] = []
        for expectation in self.expectations:
            key = (expectation.flavour, expectation.call)
            if key not in groups:
                result.append(expectation)
            elif groups[key]:
                result += groups[key]
                groups[key] = []  # the group is placed once, at its first base field
        return tuple(result) + tuple(e for group in groups.values() for e in group)


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


Step = ProbeStep | SetClockStep | HwclockStep | WaitStep | SysctlStep


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
    variant: str = ""  # the [[variant]] row of a family file; "" for a plain file

    @property
    def slug(self) -> str:
        """The name as one folder name: 'filetimes/filesystems[ext4-128]' -> 'filetimes-filesystems-ext4-128'."""
        return self.name.replace("/", "-").replace("[", "-").replace("]", "")

    @property
    def probe_steps(self) -> tuple[ProbeStep, ...]:
        return tuple(step for step in self.steps if isinstance(step, ProbeStep))


def is_time_field(step: ProbeStep, call: str, field_name: str) -> bool:
    """Whether the catalogue declares this field of the step's probe a time."""
    return step.info is not None and step.info.is_time(call, field_name)
