"""Scenario files: the model, the matchers and the validating parser.

A scenario is one TOML file (see docs and scenarios/clock/rollover.toml).
Parsing is a pure function of the text, the probe catalogue and the
machines on offer; it never runs anything. Every problem raises one
InputError naming the file and the dotted key path, for example

    scenarios/clock/rollover.toml: step[2].expect.time64.time.seconds: unknown matcher ...

Steps are numbered from 0, as in the key paths.

Two tables make the format grow without new if-chains:
- MATCHERS: the table forms of an expectation ({ between = [lo, hi] }, ...);
- ACTIONS:  the step kinds (probe, set-clock, hwclock, wait), each with its
            allowed keys.

Clock moves as steps (each run by a 64-bit time_t tool, each must succeed;
what it did is recorded as an observation of its own phase "step<N>-<kind>"):
- set-clock = <time>, via = "settimeofday"|"clock_settime";
- hwclock = <time>: util-linux `hwclock --set` then `hwclock --hctosys`, the
  RTC first, the system clock from it (the time must fit the RTC: 1970..2099);
- wait = <seconds>: let that much guest time pass (CLOCK_MONOTONIC sleep).
A probe step's reset-clock = <time> sets the clock (settimeofday) right
before each of its flavours runs, so every flavour starts from the same
instant: how timers and timeouts armed just before 2038 are compared.

A sysctl step writes a kernel setting: sysctl = "kernel.time32_syscalls",
value = "deny" (/proc/sys/kernel/time32_syscalls; must succeed).

The kernel: top-level kernel = "series" | "pristine" | "strict" names the
variant (sandbox/variants.py; default "series"), and kernel-args = [...]
adds words to its command line (e.g. "rtc_core.hctosys_beyond_2038=1").

Where a machine behaves differently, a probe step says so explicitly:
[step.expect-on.<machine>.<flavour>] has the shape of [step.expect.<flavour>]
and, on that machine only, replaces the step's expectations for each call it
names (every field of the call at once). The machine must be one of the
scenario's, and must run the flavour.
"""
from __future__ import annotations

import datetime as _dt
import errno as _errno
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import MappingProxyType
from typing import ClassVar, NoReturn, Protocol

from sandbox.disks import Disk, parse_disks
from sandbox.errors import InputError
from sandbox.paths import REPO
from sandbox.probes import Catalogue, ProbeInfo
from sandbox.timefmt import ROLLOVER, UINT32_SPAN, format_time, parse_time, seconds_from_datetime
from sandbox.variants import DEFAULT as DEFAULT_VARIANT, VARIANTS

Value = int | float | str
"""A value a probe reports for a field."""
Number = int | float

ERRNO_FIELD = "errno"
EXPECT_ON = "expect-on"  # a probe step's per-machine expectations
ERRNO_NONE = "none"
DEFAULT_TIMEOUT = 120
RTC_MIN = parse_time("1970-01-01T00:00:00Z")
RTC_MAX = parse_time("2099-12-31T23:59:59Z")
_RTC_LIMIT_WHY = (
    "QEMU's -rtc base sets the emulated CMOS/RTC clock, which only holds "
    "1970..2099; reach later times with a set-clock step"
)
_PHASE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_TIME_SHAPE_RE = re.compile(r"[+-]?\d{4,}-\d")
_ERRNO_NAMES = frozenset(_errno.errorcode.values())
_ERRNO_NUMBERED_RE = re.compile(r"E\d+")  # what a probe prints for an errno glibc cannot name


# --------------------------------------------------------------------------
# Matchers: one small class each; MATCHERS maps a table key to its builder.


class Matcher(Protocol):
    def matches(self, observed: Value | None) -> bool: ...

    def describe(self) -> str: ...


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _render(value: Value, as_time: bool) -> str:
    if as_time and isinstance(value, int):
        return format_time(value)
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Equals:
    """A bare value: the field equals it (a time string was turned into seconds)."""

    value: Value
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) == is_number(self.value) and observed == self.value

    def describe(self) -> str:
        return f"= {_render(self.value, self.as_time)}"


@dataclass(frozen=True)
class ErrnoIs:
    """The call failed with this errno; None: the call succeeded."""

    name: str | None

    def matches(self, observed: Value | None) -> bool:
        return observed == self.name

    def describe(self) -> str:
        return "no errno (call succeeded)" if self.name is None else f"errno {self.name}"


@dataclass(frozen=True)
class Between:
    """lo <= value <= hi."""

    lo: Number
    hi: Number
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and self.lo <= observed <= self.hi  # type: ignore[operator]

    def describe(self) -> str:
        return f"in [{_render(self.lo, self.as_time)}, {_render(self.hi, self.as_time)}]"


@dataclass(frozen=True)
class Wrapped:
    """A negative signed 32-bit value whose real time (value + 2**32) is in [lo, hi]."""

    lo: int
    hi: int

    def matches(self, observed: Value | None) -> bool:
        if not isinstance(observed, int) or isinstance(observed, bool):
            return False
        return -ROLLOVER <= observed < 0 and self.lo <= observed + UINT32_SPAN <= self.hi

    def describe(self) -> str:
        return f"wrapped into [{format_time(self.lo)}, {format_time(self.hi)}]"


@dataclass(frozen=True)
class Clamped:
    """The value was clamped (by a filesystem or the kernel) to exactly this limit."""

    limit: Number
    as_time: bool = False

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and observed == self.limit

    def describe(self) -> str:
        return f"clamped at {_render(self.limit, self.as_time)}"


@dataclass(frozen=True)
class Elapsed:
    """A duration in seconds within [lo, hi]."""

    lo: float
    hi: float

    def matches(self, observed: Value | None) -> bool:
        return is_number(observed) and self.lo <= observed <= self.hi  # type: ignore[operator]

    def describe(self) -> str:
        return f"elapsed in [{self.lo} s, {self.hi} s]"


class MatcherError(ValueError):
    """A matcher's argument is wrong; the parser adds file and key."""


def _instant(raw: object) -> tuple[Number, bool]:
    """A number, or a time (string or TOML date-time) as seconds; and whether it was a time."""
    if is_number(raw):
        return raw, False  # type: ignore[return-value]
    if isinstance(raw, _dt.datetime):
        return seconds_from_datetime(raw), True
    if isinstance(raw, str):
        try:
            return parse_time(raw), True
        except ValueError as err:
            raise MatcherError(str(err)) from None
    raise MatcherError(f"expected a number or a time string, got {_type_name(raw)}")


def _pair(raw: object, what: str = "a number or a time") -> tuple[object, object]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise MatcherError(f"expected [lo, hi] (two items, each {what})")
    return raw[0], raw[1]


def _ordered(lo: Number, hi: Number, as_time: bool) -> None:
    if lo > hi:
        raise MatcherError(f"lo {_render(lo, as_time)} is greater than hi {_render(hi, as_time)}")


def _between(raw: object) -> Between:
    (lo, lo_time), (hi, hi_time) = (_instant(item) for item in _pair(raw))
    as_time = lo_time or hi_time
    _ordered(lo, hi, as_time)
    return Between(lo, hi, as_time)


def _wrapped(raw: object) -> Wrapped:
    lo, hi = (_instant(item)[0] for item in _pair(raw))
    if not all(isinstance(bound, int) for bound in (lo, hi)):
        raise MatcherError("wrapped bounds are whole seconds")
    _ordered(lo, hi, True)
    first, last = ROLLOVER, UINT32_SPAN - 1
    if lo < first or hi > last:
        raise MatcherError(
            f"a wrapped 32-bit time lies in [{format_time(first)}, {format_time(last)}]"
        )
    return Wrapped(int(lo), int(hi))


def _clamped(raw: object) -> Clamped:
    limit, as_time = _instant(raw)
    return Clamped(limit, as_time)


def _elapsed(raw: object) -> Elapsed:
    lo, hi = _pair(raw, "a number of seconds")
    if not (is_number(lo) and is_number(hi)):
        raise MatcherError("expected [lo, hi] in seconds (numbers)")
    if lo < 0:  # type: ignore[operator]
        raise MatcherError(f"a duration cannot be negative: {lo}")
    _ordered(lo, hi, False)  # type: ignore[arg-type]
    return Elapsed(float(lo), float(hi))  # type: ignore[arg-type]


MATCHERS: Mapping[str, Callable[[object], Matcher]] = MappingProxyType(
    {
        "between": _between,
        "clamped": _clamped,
        "elapsed": _elapsed,
        "wrapped": _wrapped,
    }
)


def _errno_matcher(raw: object) -> ErrnoIs:
    if not isinstance(raw, str):
        raise MatcherError(f"expected an errno name such as 'EOVERFLOW', or '{ERRNO_NONE}'")
    if raw == ERRNO_NONE:
        return ErrnoIs(None)
    if raw not in _ERRNO_NAMES and not _ERRNO_NUMBERED_RE.fullmatch(raw):
        raise MatcherError(f"unknown errno name '{raw}'")
    return ErrnoIs(raw)


def _bare_matcher(raw: object) -> Equals:
    """A bare value: a plain string, or a number or time (as seconds)."""
    if isinstance(raw, str) and not _TIME_SHAPE_RE.match(raw):
        return Equals(raw)
    value, as_time = _instant(raw)
    return Equals(value, as_time)


# --------------------------------------------------------------------------
# The model.


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

    @property
    def probe_steps(self) -> tuple[ProbeStep, ...]:
        return tuple(step for step in self.steps if isinstance(step, ProbeStep))


SET_CLOCK_VIA: tuple[str, ...] = ("settimeofday", "clock_settime")


# --------------------------------------------------------------------------
# Parsing helpers.


@dataclass(frozen=True)
class _Where:
    """The file and dotted key path an error is reported at."""

    file: str
    key: str = ""

    def at(self, name: str) -> _Where:
        return _Where(self.file, f"{self.key}.{name}" if self.key else name)

    def item(self, index: int) -> _Where:
        return _Where(self.file, f"{self.key}[{index}]")

    def fail(self, message: str) -> NoReturn:
        raise InputError(self.file, self.key or "(file)", message)


@dataclass(frozen=True)
class _Context:
    catalogue: Catalogue
    machines: Mapping[str, tuple[str, ...]]  # the scenario's machines and their flavours


def _type_name(raw: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "a list", dict: "a table"}
    return names.get(type(raw), type(raw).__name__)


def _check_keys(table: Mapping[str, object], known: frozenset[str], where: _Where, what: str = "") -> None:
    for key in table:
        if key not in known:
            where.at(key).fail(f"unknown key '{key}'{what} (known: {', '.join(sorted(known))})")


def _require(table: Mapping[str, object], key: str, where: _Where) -> object:
    if key not in table:
        where.at(key).fail("missing (required)")
    return table[key]


def _string(raw: object, where: _Where) -> str:
    if not isinstance(raw, str):
        where.fail(f"expected a string, got {_type_name(raw)}")
    if not raw.strip():
        where.fail("must not be empty")
    return raw


def _table(raw: object, where: _Where) -> Mapping[str, object]:
    if not isinstance(raw, dict):
        where.fail(f"expected a table, got {_type_name(raw)}")
    return raw


def _names(raw: object, where: _Where, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    """A non-empty list of distinct names, each among `known`."""
    if not isinstance(raw, list) or not raw:
        where.fail(f"expected a non-empty list of {what}s")
    for index, name in enumerate(raw):
        if not isinstance(name, str):
            where.item(index).fail(f"expected a {what} name, got {_type_name(name)}")
        if name not in known:
            where.item(index).fail(f"unknown {what} '{name}' (known: {', '.join(known)})")
        if name in raw[:index]:
            where.item(index).fail(f"{what} '{name}' listed twice")
    return tuple(raw)


def _time(raw: object, where: _Where) -> int:
    if isinstance(raw, _dt.datetime):
        return seconds_from_datetime(raw)
    if not isinstance(raw, str):
        where.fail(f"expected a time such as \"2038-01-19T03:14:08Z\", got {_type_name(raw)}")
    try:
        return parse_time(raw)
    except ValueError as err:
        where.fail(str(err))


# --------------------------------------------------------------------------
# Expectations.


def _matcher(field_name: str, raw: object, where: _Where) -> Matcher:
    try:
        if field_name == ERRNO_FIELD:
            return _errno_matcher(raw)
        if not isinstance(raw, dict):
            return _bare_matcher(raw)
        if len(raw) != 1:
            where.fail(f"a matcher table has exactly one key, got: {', '.join(raw) or 'none'}")
        (name, argument), = raw.items()
        if name not in MATCHERS:
            where.fail(f"unknown matcher '{name}' (known: {', '.join(sorted(MATCHERS))})")
        where = where.at(name)
        return MATCHERS[name](argument)
    except MatcherError as err:
        where.fail(str(err))


def _call_expectations(flavour: str, call: str, raw: object, where: _Where) -> list[Expectation]:
    fields = _table(raw, where)
    if not fields:
        where.fail("no fields to check")
    return [
        Expectation(flavour, call, name, _matcher(name, matcher, where.at(name)))
        for name, matcher in fields.items()
    ]


def _flavour_expectations(
    flavour: str, raw: object, probe: ProbeInfo, where: _Where
) -> list[Expectation]:
    calls = _table(raw, where)
    expectations: list[Expectation] = []
    for call, fields in calls.items():
        if call not in probe.calls:
            where.at(call).fail(
                f"unknown call '{call}' (probe {probe.name} has: {', '.join(probe.calls)})"
            )
        expectations += _call_expectations(flavour, call, fields, where.at(call))
    return expectations


def _expectations(
    raw: object, probe: ProbeInfo, flavours: tuple[str, ...], where: _Where
) -> tuple[Expectation, ...]:
    expectations: list[Expectation] = []
    for flavour, calls in _table(raw, where).items():
        if flavour not in probe.flavours:
            where.at(flavour).fail(
                f"unknown flavour '{flavour}' (probe {probe.name} has: {', '.join(probe.flavours)})"
            )
        if flavour not in flavours:
            where.at(flavour).fail(
                f"flavour '{flavour}' is not among this step's flavours ({', '.join(flavours)})"
            )
        expectations += _flavour_expectations(flavour, calls, probe, where.at(flavour))
    return tuple(expectations)


# --------------------------------------------------------------------------
# Steps: ACTIONS maps the action key to its allowed keys and its parser.


def _args(raw: object, where: _Where) -> tuple[str, ...]:
    if not isinstance(raw, list):
        where.fail(f"expected a list of strings, got {_type_name(raw)}")
    for index, arg in enumerate(raw):
        if not isinstance(arg, str):
            where.item(index).fail(f"expected a string, got {_type_name(arg)}")
    return tuple(raw)


def _phase(raw: object, where: _Where) -> str:
    phase = _string(raw, where)
    if not _PHASE_RE.fullmatch(phase):
        where.fail(f"'{phase}' is not a phase name (letters, digits, '_', '-', '.')")
    return phase


def _probe_step(table: Mapping[str, object], index: int, where: _Where, context: _Context) -> ProbeStep:
    name = _string(table["probe"], where.at("probe"))
    probe = context.catalogue.get(name)
    if probe is None:
        where.at("probe").fail(
            f"unknown probe '{name}' (known: {', '.join(context.catalogue.names()) or 'none'})"
        )
    phase = _phase(_require(table, "phase", where), where.at("phase"))
    flavours = (
        _names(table["flavours"], where.at("flavours"), probe.flavours, "flavour")
        if "flavours" in table
        else probe.flavours
    )
    args = _args(table.get("args", []), where.at("args"))
    expectations = _expectations(table.get("expect", {}), probe, flavours, where.at("expect"))
    on_machines = _machine_expectations(table.get(EXPECT_ON, {}), probe, flavours,
                                        where.at(EXPECT_ON), context)
    reset = _time(table["reset-clock"], where.at("reset-clock")) if "reset-clock" in table else None
    return ProbeStep(index, phase, name, flavours, args, expectations, on_machines, reset_clock=reset)


def _machine_expectations(
    raw: object, probe: ProbeInfo, flavours: tuple[str, ...], where: _Where, context: _Context
) -> Mapping[str, tuple[Expectation, ...]]:
    """[step.expect-on.<machine>.<flavour>.<call>]: for a machine of the
    scenario, and a flavour of the step that the machine runs."""
    result: dict[str, tuple[Expectation, ...]] = {}
    for machine, table in _table(raw, where).items():
        if machine not in context.machines:
            where.at(machine).fail(
                f"machine '{machine}' is not among the scenario's machines "
                f"({', '.join(context.machines)})"
            )
        lacking = [f for f in _table(table, where.at(machine)) if f in flavours
                   and f not in context.machines[machine]]
        if lacking:
            where.at(machine).at(lacking[0]).fail(
                f"machine '{machine}' does not run flavour '{lacking[0]}' "
                f"(it has: {', '.join(context.machines[machine])})"
            )
        result[machine] = _expectations(table, probe, flavours, where.at(machine))
    return MappingProxyType(result)


def _set_clock_step(
    table: Mapping[str, object], index: int, where: _Where, context: _Context
) -> SetClockStep:
    seconds = _time(table["set-clock"], where.at("set-clock"))
    via = table.get("via", SET_CLOCK_VIA[0])
    if via not in SET_CLOCK_VIA:
        where.at("via").fail(f"unknown way to set the clock {via!r} (known: {', '.join(SET_CLOCK_VIA)})")
    return SetClockStep(index, seconds, str(via))


def _hwclock_step(
    table: Mapping[str, object], index: int, where: _Where, context: _Context
) -> HwclockStep:
    seconds = _time(table["hwclock"], where.at("hwclock"))
    if not RTC_MIN <= seconds <= RTC_MAX:
        where.at("hwclock").fail(
            f"{format_time(seconds)} is outside {format_time(RTC_MIN)}..{format_time(RTC_MAX)}, "
            "what the emulated RTC holds; reach later times with a set-clock step"
        )
    return HwclockStep(index, seconds)


WAIT_MAX = 3600


def _wait_step(table: Mapping[str, object], index: int, where: _Where, context: _Context) -> WaitStep:
    seconds = table["wait"]
    if not is_number(seconds) or not 0 < seconds <= WAIT_MAX:  # type: ignore[operator]
        where.at("wait").fail(f"expected a number of seconds in (0, {WAIT_MAX}], got {seconds!r}")
    return WaitStep(index, seconds)  # type: ignore[arg-type]


_SYSCTL_NAME_RE = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)+")
_SYSCTL_VALUE_RE = re.compile(r"[A-Za-z0-9_.:+-]+")


def _sysctl_step(table: Mapping[str, object], index: int, where: _Where, context: _Context) -> SysctlStep:
    name = _string(table["sysctl"], where.at("sysctl"))
    if not _SYSCTL_NAME_RE.fullmatch(name):
        where.at("sysctl").fail(f"'{name}' is not a sysctl name such as \"kernel.time32_syscalls\"")
    raw = _require(table, "value", where)
    value = str(raw) if is_number(raw) else _string(raw, where.at("value"))
    if not _SYSCTL_VALUE_RE.fullmatch(value):
        where.at("value").fail(f"{value!r}: one word of letters, digits and '_.:+-'")
    return SysctlStep(index, name, value)


@dataclass(frozen=True)
class ActionKind:
    keys: frozenset[str]
    parse: Callable[[Mapping[str, object], int, _Where, _Context], Step]


ACTIONS: Mapping[str, ActionKind] = MappingProxyType(
    {
        "probe": ActionKind(frozenset({"probe", "phase", "flavours", "args", "expect", EXPECT_ON,
                                       "reset-clock"}),
                            _probe_step),
        "set-clock": ActionKind(frozenset({"set-clock", "via"}), _set_clock_step),
        "hwclock": ActionKind(frozenset({"hwclock"}), _hwclock_step),
        "wait": ActionKind(frozenset({"wait"}), _wait_step),
        "sysctl": ActionKind(frozenset({"sysctl", "value"}), _sysctl_step),
    }
)


def _step(raw: object, index: int, where: _Where, context: _Context) -> Step:
    table = _table(raw, where)
    actions = [key for key in table if key in ACTIONS]
    known = ", ".join(ACTIONS)
    if len(actions) > 1:
        where.fail(f"more than one action ({', '.join(actions)}); a step has exactly one of: {known}")
    if not actions:
        where.fail(f"no action; a step has exactly one of: {known}")
    kind = ACTIONS[actions[0]]
    _check_keys(table, kind.keys, where, f" for a {actions[0]} step")
    return kind.parse(table, index, where, context)


def _unique_phases(steps: tuple[Step, ...], where: _Where) -> None:
    seen: dict[str, int] = {}
    for step in steps:
        if isinstance(step, ProbeStep):
            if step.phase in seen:
                where.item(step.index).at("phase").fail(
                    f"phase '{step.phase}' already names step[{seen[step.phase]}]"
                )
            seen[step.phase] = step.index


def _steps(raw: object, where: _Where, context: _Context) -> tuple[Step, ...]:
    if not isinstance(raw, list) or not raw:
        where.fail("expected at least one [[step]]")
    steps = tuple(_step(item, index, where.item(index), context) for index, item in enumerate(raw))
    _unique_phases(steps, where)
    return steps


# --------------------------------------------------------------------------
# The top level.

TOP_KEYS = frozenset({"title", "description", "machines", "rtc", "timeout", "disk", "step",
                      "kernel", "kernel-args"})
_KERNEL_ARG_RE = re.compile(r"[A-Za-z0-9_.-]+(=[^\s\"']*)?")


def _kernel(raw: object, where: _Where) -> str:
    variant = _string(raw, where)
    if variant not in VARIANTS:
        where.fail(f"unknown kernel variant '{variant}' (known: {', '.join(VARIANTS)})")
    return variant


def _check_disks_fit_kernel(disks: tuple[Disk, ...], kernel: str, where: _Where) -> None:
    """A disk image is a block device: only variants built with disks.config can mount it."""
    if VARIANTS[kernel].has_disks:
        return
    with_disks = " or ".join(repr(name) for name, variant in VARIANTS.items() if variant.has_disks)
    for index, disk in enumerate(disks):
        if disk.has_image:
            where.at("disk").item(index).fail(
                f"kernel '{kernel}' is built without block devices; the {disk.fs} disk '{disk.name}' "
                f"needs kernel = {with_disks}")


def _kernel_args(raw: object, where: _Where) -> tuple[str, ...]:
    args = _args(raw, where)
    for index, arg in enumerate(args):
        if not _KERNEL_ARG_RE.fullmatch(arg):
            where.item(index).fail(f"{arg!r} is not one kernel parameter (name or name=value, no spaces)")
    return args


def _rtc(raw: object, where: _Where) -> int:
    seconds = _time(raw, where)
    if not RTC_MIN <= seconds <= RTC_MAX:
        where.fail(
            f"{format_time(seconds)} is outside {format_time(RTC_MIN)}..{format_time(RTC_MAX)}: "
            + _RTC_LIMIT_WHY
        )
    return seconds


def _timeout(raw: object, where: _Where) -> Number:
    if not is_number(raw) or raw <= 0:  # type: ignore[operator]
        where.fail(f"expected a positive number of seconds, got {raw!r}")
    return raw  # type: ignore[return-value]


def _machines(raw: object, where: _Where, machines: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    chosen = _names(raw, where, tuple(machines), "machine")
    return MappingProxyType({arch: tuple(machines[arch]) for arch in chosen})


def scenario_name(file: str) -> str:
    """'scenarios/clock/rollover.toml' -> 'clock/rollover'; elsewhere the file's stem."""
    parts = PurePath(file).with_suffix("").parts
    if "scenarios" not in parts[:-1]:
        return parts[-1]
    last = max(i for i, part in enumerate(parts[:-1]) if part == "scenarios")
    return "/".join(parts[last + 1:])


def _document(text: str, where: _Where) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))


def parse_scenario(
    text: str,
    file: str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
) -> Scenario:
    """The Scenario a file's text describes; InputError names file and key of any problem."""
    where = _Where(file)
    document = _document(text, where)
    _check_keys(document, TOP_KEYS, where)
    title = _string(_require(document, "title", where), where.at("title"))
    description = document.get("description", "")
    if not isinstance(description, str):
        where.at("description").fail(f"expected a string, got {_type_name(description)}")
    rtc = _rtc(_require(document, "rtc", where), where.at("rtc"))
    chosen = _machines(document.get("machines", list(machines)), where.at("machines"), machines)
    timeout = _timeout(document.get("timeout", DEFAULT_TIMEOUT), where.at("timeout"))
    disks = parse_disks(document.get("disk", []), file)
    kernel = _kernel(document.get("kernel", DEFAULT_VARIANT), where.at("kernel"))
    _check_disks_fit_kernel(disks, kernel, where)
    kernel_args = _kernel_args(document.get("kernel-args", []), where.at("kernel-args"))
    context = _Context(catalogue, chosen)
    steps = _steps(_require(document, "step", where), where.at("step"), context)
    return Scenario(
        file=file,
        name=scenario_name(file),
        title=title,
        rtc=rtc,
        machines=chosen,
        steps=steps,
        description=description,
        timeout=timeout,
        disks=disks,
        kernel=kernel,
        kernel_args=kernel_args,
    )


def display_path(path: Path) -> str:
    """A path as errors show it: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def load_scenario(
    path: Path | str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
) -> Scenario:
    path = Path(path)
    file = display_path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise InputError(file, "file", f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise InputError(file, "toml", f"not UTF-8 text: {err}") from None
    return parse_scenario(text, file, catalogue, machines)
