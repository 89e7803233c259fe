"""The steps of a scenario: ACTIONS maps each step kind (probe, set-clock,
hwclock, wait, sysctl) to its allowed keys and its parser, and a probe
step's expectations are checked against the catalogue (the calls, fields
and flavours rootfs/manifest.toml declares). Pure.

Clock moves as steps (each run by a 64-bit time_t tool, each must succeed;
what it did is recorded as an observation of its own phase "step<N>-<kind>"):
- set-clock = <time>, via = "settimeofday"|"clock_settime";
- hwclock = <time>: util-linux `hwclock --set` then `hwclock --hctosys`, the
  RTC first, the system clock from it (the time must fit the RTC: 1970..2099;
  only on machines that carry /usr/sbin/hwclock);
- wait = <seconds>: let that much guest time pass (CLOCK_MONOTONIC sleep).
A probe step's reset-clock = <time> sets the clock (settimeofday) right
before each of its flavours runs, so every flavour starts from the same
instant: how timers and timeouts armed just before 2038 are compared.
A probe step's under = ["<tool>", "<arg>"...] runs it as the program of
that tool (/tools/<tool> <arg>... /probes/<flavour>/<probe> <args>...):
under seccomp32's filter, say.
A sysctl step writes a kernel setting: sysctl = "kernel.time32_syscalls",
value = "deny" (/proc/sys/kernel/time32_syscalls; must succeed).
An ntp-sync step = <userland> starts that userland's chronyd as the NTP
client of the scenario's [time-server] (or of `server`, an IPv4 address) and
waits up to `timeout` guest seconds for it to step the clock; with
must-step = false a timeout is an observation ("not stepped"), not a failure.

Where a machine behaves differently, a probe step says so explicitly:
[step.expect-on.<machine>.<flavour>] has the shape of [step.expect.<flavour>]
and, on that machine only, replaces the step's expectations for each call it
names (every field of the call at once). The machine must be one of the
scenario's, and must run the flavour.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from sandbox.base.fields import Where, check_keys, is_number, names, require, string, strings, type_name
from sandbox.base.fields import table as as_table
from sandbox.base.timefmt import format_time, parse_time, utc_seconds
from sandbox.scenario.catalogue import CallInfo, Catalogue, ProbeInfo
from sandbox.scenario import patterns
from sandbox.scenario.guards import MAX_STEPS, clock_time, finite
from sandbox.scenario.matchers import MATCHERS, Matcher, MatcherError, bare_matcher, errno_matcher
from sandbox.base.machines import DEBIAN_ARCHS, MACHINES
from sandbox.scenario.faketime import PACKAGE as FAKETIME_PACKAGE, FakeTime, FakeTimeError, parse_faketime
from sandbox.scenario.model import (CHRONY_PACKAGE, ERRNO_FIELD, HWCLOCK, NTP_CALL, NTP_PROBE, RUN_PROBE,
                                    SET_CLOCK_VIA, Expectation, HwclockStep, NtpSyncStep, ProbeStep, RunStep,
                                    SetClockStep, Step, SysctlStep, WaitStep)
from sandbox.scenario.userlands import NO_USERLANDS, Userlands

EXPECT_ON = "expect-on"  # a probe step's per-machine expectations
RTC_MIN = parse_time("1970-01-01T00:00:00Z")
RTC_MAX = parse_time("2099-12-31T23:59:59Z")
RTC_LIMIT_WHY = (
    "QEMU's -rtc base sets the emulated CMOS/RTC clock, which only holds "
    "1970..2099; reach later times with a set-clock step"
)
_PHASE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class StepContext:
    catalogue: Catalogue
    machines: Mapping[str, tuple[str, ...]]  # the scenario's machines and their flavours
    userlands: Userlands = NO_USERLANDS


def rtc_time(raw: object, where: Where) -> int:
    """A time a guest's RTC starts at (QEMU's -rtc base): within RTC_MIN..RTC_MAX."""
    seconds = parse_time_value(raw, where)
    if not RTC_MIN <= seconds <= RTC_MAX:
        where.fail(f"{format_time(seconds)} is outside {format_time(RTC_MIN)}..{format_time(RTC_MAX)}: "
                   + RTC_LIMIT_WHY)
    return seconds


def parse_time_value(raw: object, where: Where) -> int:
    """A time: a "YYYY-MM-DDTHH:MM:SSZ" string or a TOML date-time."""
    if isinstance(raw, _dt.datetime):
        try:
            return utc_seconds(raw)
        except ValueError as err:
            where.fail(str(err))
    if not isinstance(raw, str):
        where.fail(f"expected a time such as \"2038-01-19T03:14:08Z\", got {type_name(raw)}")
    try:
        return parse_time(raw)
    except ValueError as err:
        where.fail(str(err))


# --------------------------------------------------------------------------
# Expectations.


def _matcher(field_name: str, raw: object, where: Where) -> Matcher:
    try:
        if field_name == ERRNO_FIELD:
            return errno_matcher(raw)
        if not isinstance(raw, dict):
            return bare_matcher(raw)
        if len(raw) != 1:
            where.fail(f"a matcher table has exactly one key, got: {', '.join(raw) or 'none'}")
        (name, argument), = raw.items()
        if name not in MATCHERS:
            where.fail(f"unknown matcher '{name}' (known: {', '.join(sorted(MATCHERS))})")
        where = where.at(name)
        return MATCHERS[name](argument)
    except MatcherError as err:
        where.fail(str(err))


def _call_expectations(flavour: str, call: CallInfo, raw: object, where: Where) -> list[Expectation]:
    """The fields must be ones the call prints (rootfs/manifest.toml), or errno."""
    fields = as_table(raw, where)
    if not fields:
        where.fail("no fields to check")
    for name in fields:
        if name != ERRNO_FIELD and name not in call.fields:
            where.at(name).fail(f"unknown field '{name}' (call {call.name} prints: "
                                f"{', '.join([*call.fields, ERRNO_FIELD])})")
    return [
        Expectation(flavour, call.name, name, _matcher(name, matcher, where.at(name)))
        for name, matcher in fields.items()
    ]


def _flavour_expectations(
    flavour: str, raw: object, probe: ProbeInfo, where: Where
) -> list[Expectation]:
    calls = as_table(raw, where)
    expectations: list[Expectation] = []
    for call, fields in calls.items():
        if call not in probe.calls:
            where.at(call).fail(
                f"unknown call '{call}' (probe {probe.name} has: {', '.join(probe.calls)})"
            )
        info = probe.call_info[call]
        if flavour not in info.flavours:
            where.at(call).fail(f"call '{call}' is not printed in flavour '{flavour}' "
                                f"(only in: {', '.join(info.flavours)})")
        expectations += _call_expectations(flavour, info, fields, where.at(call))
    return expectations


def _expectations(
    raw: object, probe: ProbeInfo, flavours: tuple[str, ...], where: Where
) -> tuple[Expectation, ...]:
    expectations: list[Expectation] = []
    for flavour, calls in as_table(raw, where).items():
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


def _phase(raw: object, where: Where) -> str:
    phase = string(raw, where)
    if not _PHASE_RE.fullmatch(phase):
        where.fail(f"'{phase}' is not a phase name (letters, digits, '_', '-', '.')")
    return phase


def _probe_step(table: Mapping[str, object], index: int, where: Where, context: StepContext) -> ProbeStep:
    name = string(table["probe"], where.at("probe"))
    probe = context.catalogue.get(name)
    if probe is None:
        where.at("probe").fail(
            f"unknown probe '{name}' (known: {', '.join(context.catalogue.names()) or 'none'})"
        )
    phase = _phase(require(table, "phase", where), where.at("phase"))
    userland = _probe_userland(table, where, context)
    own = probe.flavours if userland is None else tuple(
        f for f in probe.flavours if f in DEBIAN_ARCHS[context.userlands.by_name[userland].arch].flavours)
    flavours = names(table["flavours"], where.at("flavours"), own, "flavour") if "flavours" in table else own
    if not flavours:
        where.at("userland").fail(f"probe {name} has no flavour the userland's ABI runs")
    faketime = _faketime(table, userland, where, context)
    static = _static(table, userland, where)
    args = strings(table.get("args", []), where.at("args"))
    expectations = _expectations(table.get("expect", {}), probe, flavours, where.at("expect"))
    on_machines = _machine_expectations(table.get(EXPECT_ON, {}), probe, flavours,
                                        where.at(EXPECT_ON), context)
    reset = (clock_time(parse_time_value(table["reset-clock"], where.at("reset-clock")), where.at("reset-clock"))
             if "reset-clock" in table else None)
    environment = () if faketime is None or userland is None else tuple(faketime.environment(
        DEBIAN_ARCHS[context.userlands.by_name[userland].arch].triplet,
        f"/userlands/{userland}" if static else "").items())
    under = _under(table, userland, where, context) if "under" in table else ()
    return _check_printed(ProbeStep(index, phase, name, flavours, args, expectations, on_machines, reset_clock=reset,
                                    info=probe, userland=userland, faketime=faketime, environment=environment,
                                    static=static, under=under), where)


def _under(table: Mapping[str, object], userland: str | None, where: Where, context: StepContext) -> tuple[str, ...]:
    """`under = ["<tool>", "<arg>"...]`: a tool of rootfs/manifest.toml
    ([tool.<name>], /tools/<name> in the guest) that runs the probe, its
    command line appended after these words; not with a userland, whose
    root has no /tools."""
    at = where.at("under")
    words = strings(table["under"], at)
    if not words:
        at.fail('expected a tool and its arguments, e.g. ["seccomp32", "deny", "--"]')
    if context.catalogue.tool(words[0]) is None:
        at.item(0).fail(f"unknown tool '{words[0]}' (known: {', '.join(context.catalogue.tools) or 'none'})")
    if userland is not None:
        at.fail("not with a `userland`: the tools are in /tools, outside the userland's root")
    return words


ALSO_PRINTS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType({
    ("timers", "timer_settime"): ("timer_gettime",),
    ("timers", "timerfd_settime"): ("timerfd_gettime",),
})
"""(probe, call named in args) -> the other calls it prints: the probes'
PROBE_PRINTS where the word is itself a call of the catalogue
(pytest/unit/test_honest_verdicts.py reads the C sources to keep this true)."""
_WORD_RE = re.compile(r"[a-z_][a-z0-9_]*")


def printed_calls(probe: ProbeInfo, args: tuple[str, ...]) -> frozenset[str] | None:
    """The calls a probe step's `args` leave it printing, when the host can
    tell: its args name calls of the catalogue (the other words are times
    or numbers the probe reads first). None: every call, or a word the
    catalogue does not know (ipc's kinds "shm", "sem", "msg")."""
    words = [arg for arg in args if _WORD_RE.fullmatch(arg)]
    if not words or any(word not in probe.call_info for word in words):
        return None
    return frozenset(words).union(*(ALSO_PRINTS.get((probe.name, word), ()) for word in words))


def _check_printed(step: ProbeStep, where: Where) -> ProbeStep:
    """An expectation on a call the step's `args` leave out could only fail
    after boot with "no observation": refused here."""
    printed = printed_calls(step.info, step.args) if step.info is not None else None
    if printed is None:
        return step
    for machine, expectations in (("", step.expectations), *step.machine_expectations.items()):
        for expectation in expectations:
            if expectation.call not in printed:
                at = where.at(EXPECT_ON).at(machine) if machine else where.at("expect")
                at.at(expectation.flavour).at(expectation.call).fail(
                    f"the step's args {list(step.args)} run only {', '.join(sorted(printed))}: "
                    f"call '{expectation.call}' is never printed (name it in args too)")
    return step


LINKAGES = ("dynamic", "static")


def _static(table: Mapping[str, object], userland: str | None, where: Where) -> bool:
    """`linkage = "static"`: the initramfs's static probe, run with the
    userland's environment (what LD_PRELOAD cannot reach); only with a userland."""
    if "linkage" not in table:
        return False
    linkage = string(table["linkage"], where.at("linkage"))
    if linkage not in LINKAGES:
        where.at("linkage").fail(f"unknown linkage {linkage!r} (known: {', '.join(LINKAGES)})")
    if userland is None:
        where.at("linkage").fail("needs a `userland`: without one, every probe is the static build")
    return linkage == "static"


def _probe_userland(table: Mapping[str, object], where: Where, context: StepContext) -> str | None:
    """A probe step's `userland`: one the scenario's machines run, of an
    architecture the probes are built dynamically for."""
    if "userland" not in table:
        return None
    name = runnable(string(table["userland"], where.at("userland")), where.at("userland"), context)
    arch = context.userlands.by_name[name].arch
    if arch not in DEBIAN_ARCHS:
        where.at("userland").fail(f"userland '{name}' is {arch}: no probes are built for it "
                                  f"(known: {', '.join(DEBIAN_ARCHS)})")
    return name


def _faketime(table: Mapping[str, object], userland: str | None, where: Where,
              context: StepContext) -> FakeTime | None:
    """`faketime`: only in a userland that installs libfaketime (rootfs/userlands.toml)."""
    if "faketime" not in table:
        return None
    at = where.at("faketime")
    try:
        faketime = parse_faketime(string(table["faketime"], at))
    except FakeTimeError as err:
        at.fail(str(err))
    if userland is None:
        at.fail("needs a `userland` that has libfaketime: the probes in /probes are static, "
                "and LD_PRELOAD does not reach a static binary")
    if FAKETIME_PACKAGE not in context.userlands.by_name[userland].packages:
        at.fail(f"userland '{userland}' has no {FAKETIME_PACKAGE} (add it to its packages in "
                "rootfs/userlands.toml)")
    return faketime


RUN_FIELDS = {"exit": "number", "status": "text", "stdout": "text", "stderr": "text"}
"""What a run step observes of a program; "time" too with a time-pattern."""
RUN_TIMEOUT_MAX = 600


def _run_info(program: str, userlands: tuple[str, ...], timed: bool) -> ProbeInfo:
    fields = {**RUN_FIELDS, **({"time": "time"} if timed else {})}
    return ProbeInfo(RUN_PROBE, userlands, MappingProxyType({program: CallInfo(program, MappingProxyType(fields),
                                                                                 userlands)}))


def _userlands(raw: object, where: Where, context: StepContext) -> tuple[str, ...]:
    chosen = names(raw, where, tuple(context.userlands.by_name), "userland")
    for index, name in enumerate(chosen):
        runnable(name, where.item(index), context)
    return chosen


def runnable(name: str, where: Where, context: StepContext) -> str:
    """A known userland that every machine of the scenario can run."""
    userland = context.userlands.get(name)
    if userland is None:
        where.fail(f"unknown userland '{name}' (known: {', '.join(context.userlands.by_name)})")
    lacking = [m for m in context.machines if userland.arch not in MACHINES[m].debian_archs]
    if lacking:
        where.fail(f"userland '{name}' is {userland.arch}; machine {', '.join(map(repr, lacking))} "
                   f"cannot run it (list only machines that can in `machines`)")
    return name


def _time_pattern(raw: object, where: Where) -> str:
    pattern = string(raw, where)
    try:
        compiled = re.compile(patterns.check(pattern), re.M)
    except patterns.PatternError as err:
        where.fail(str(err))
    if compiled.groups < 1:
        where.fail("needs a group for the seconds, e.g. '^(-?\\d+)$' or '(?P<time>-?\\d+)'")
    return pattern


def _run_expectations(raw: object, info: ProbeInfo, where: Where) -> tuple[Expectation, ...]:
    """[step.expect.<userland>]: the fields of the program's observation."""
    (call,) = info.call_info.values()
    expectations: list[Expectation] = []
    for userland, fields in as_table(raw, where).items():
        if userland not in info.flavours:
            where.at(userland).fail(f"userland '{userland}' is not among this step's userlands "
                                    f"({', '.join(info.flavours)})")
        expectations += _call_expectations(userland, call, fields, where.at(userland))
    return tuple(expectations)


def _run_step(table: Mapping[str, object], index: int, where: Where, context: StepContext) -> RunStep:
    argv = strings(table["run"], where.at("run"))
    if not argv or not argv[0].strip():
        where.at("run").fail("expected the program and its arguments, e.g. [\"date\", \"+%s\"]")
    phase = _phase(require(table, "phase", where), where.at("phase"))
    userlands = _userlands(require(table, "userlands", where), where.at("userlands"), context)
    stdin = string(table["stdin"], where.at("stdin")) if "stdin" in table else None
    timeout = table.get("timeout", 10)
    if not is_number(timeout) or not 0 < timeout <= RUN_TIMEOUT_MAX:
        where.at("timeout").fail(f"expected a number of seconds in (0, {RUN_TIMEOUT_MAX}], got {timeout!r}")
    pattern = _time_pattern(table["time-pattern"], where.at("time-pattern")) if "time-pattern" in table else None
    info = _run_info(argv[0].rsplit("/", 1)[-1], userlands, pattern is not None)
    expectations = _run_expectations(table.get("expect", {}), info, where.at("expect"))
    return RunStep(index, phase, argv, userlands, expectations, _one_call_machine_expectations(table, info, where, context),
                   stdin=stdin, timeout=timeout, time_pattern=pattern, info=info)


def _one_call_machine_expectations(table: Mapping[str, object], info: ProbeInfo, where: Where,
                                   context: StepContext) -> Mapping[str, tuple[Expectation, ...]]:
    """[step.expect-on.<machine>.<flavour>] of a step whose observations have one call."""
    on_machines: dict[str, tuple[Expectation, ...]] = {}
    for machine, raw in as_table(table.get(EXPECT_ON, {}), where.at(EXPECT_ON)).items():
        if machine not in context.machines:
            where.at(EXPECT_ON).at(machine).fail(
                f"machine '{machine}' is not among the scenario's machines ({', '.join(context.machines)})")
        on_machines[machine] = _run_expectations(raw, info, where.at(EXPECT_ON).at(machine))
    return MappingProxyType(on_machines)


NTP_SYNC_TIMEOUT_MAX = 600
NTP_FIELDS = {"result": "text", "step": "number", "clock": "time", "reference": "text", "stratum": "number",
              "leap": "text", "log": "text", "tracking": "text", "sources": "text"}
"""What an ntp-sync step observes (sandbox/run/chrony.py): result ("stepped",
"not stepped", "exited"), the step chronyd logged, the clock after it, and
chronyc's tracking (reference, stratum, leap status) and sources."""


def _ntp_sync_step(table: Mapping[str, object], index: int, where: Where, context: StepContext) -> NtpSyncStep:
    userland = runnable(string(table["ntp-sync"], where.at("ntp-sync")), where.at("ntp-sync"), context)
    if CHRONY_PACKAGE not in context.userlands.by_name[userland].packages:
        where.at("ntp-sync").fail(f"userland '{userland}' has no {CHRONY_PACKAGE} (add it to its packages "
                                  "in rootfs/userlands.toml)")
    phase = _phase(require(table, "phase", where), where.at("phase"))
    timeout = table.get("timeout", 30)
    if not is_number(timeout) or not 0 < timeout <= NTP_SYNC_TIMEOUT_MAX:
        where.at("timeout").fail(f"expected a number of seconds in (0, {NTP_SYNC_TIMEOUT_MAX}], got {timeout!r}")
    server = _ipv4(table["server"], where.at("server")) if "server" in table else None
    must_step = table.get("must-step", True)
    if not isinstance(must_step, bool):
        where.at("must-step").fail(f"expected true or false, got {type_name(must_step)}")
    info = ProbeInfo(NTP_PROBE, (userland,), MappingProxyType({NTP_CALL: CallInfo(
        NTP_CALL, MappingProxyType(NTP_FIELDS), (userland,))}))
    expectations = _run_expectations(table.get("expect", {}), info, where.at("expect"))
    return NtpSyncStep(index, phase, userland, server, timeout, must_step, expectations,
                       _one_call_machine_expectations(table, info, where, context), info)


def _ipv4(raw: object, where: Where) -> str:
    text = string(raw, where)
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        where.fail(f"{text!r} is not an IPv4 address such as \"10.38.0.1\"")


def _machine_expectations(
    raw: object, probe: ProbeInfo, flavours: tuple[str, ...], where: Where, context: StepContext
) -> Mapping[str, tuple[Expectation, ...]]:
    """[step.expect-on.<machine>.<flavour>.<call>]: for a machine of the
    scenario, and a flavour of the step that the machine runs."""
    result: dict[str, tuple[Expectation, ...]] = {}
    for machine, table in as_table(raw, where).items():
        if machine not in context.machines:
            where.at(machine).fail(
                f"machine '{machine}' is not among the scenario's machines "
                f"({', '.join(context.machines)})"
            )
        lacking = [f for f in as_table(table, where.at(machine)) if f in flavours
                   and f not in context.machines[machine]]
        if lacking:
            where.at(machine).at(lacking[0]).fail(
                f"machine '{machine}' does not run flavour '{lacking[0]}' "
                f"(it has: {', '.join(context.machines[machine])})"
            )
        result[machine] = _expectations(table, probe, flavours, where.at(machine))
    return MappingProxyType(result)


def _set_clock_step(
    table: Mapping[str, object], index: int, where: Where, context: StepContext
) -> SetClockStep:
    seconds = clock_time(parse_time_value(table["set-clock"], where.at("set-clock")), where.at("set-clock"))
    via = table.get("via", SET_CLOCK_VIA[0])
    if via not in SET_CLOCK_VIA:
        where.at("via").fail(f"unknown way to set the clock {via!r} (known: {', '.join(SET_CLOCK_VIA)})")
    return SetClockStep(index, seconds, str(via))


def _hwclock_step(
    table: Mapping[str, object], index: int, where: Where, context: StepContext
) -> HwclockStep:
    seconds = parse_time_value(table["hwclock"], where.at("hwclock"))
    if not RTC_MIN <= seconds <= RTC_MAX:
        where.at("hwclock").fail(
            f"{format_time(seconds)} is outside {format_time(RTC_MIN)}..{format_time(RTC_MAX)}, "
            "what the emulated RTC holds; reach later times with a set-clock step"
        )
    lacking = [m for m in context.machines if not context.catalogue.has_program(m, HWCLOCK)]
    if lacking:
        where.at("hwclock").fail(
            f"machine {', '.join(map(repr, lacking))} has no {HWCLOCK} (rootfs/manifest.toml "
            "[host-binaries.<machine>]); list only machines that have it in `machines`")
    return HwclockStep(index, seconds)


WAIT_MAX = 30 * 86400
"""A month: with time warp an idle month passes in seconds; without it the
waits must add up to less than the scenario's timeout (guards.waits)."""


def _wait_step(table: Mapping[str, object], index: int, where: Where, context: StepContext) -> WaitStep:
    seconds = table["wait"]
    if not is_number(seconds) or not 0 < seconds <= WAIT_MAX:
        where.at("wait").fail(f"expected a number of seconds in (0, {WAIT_MAX}], got {seconds!r}")
    return WaitStep(index, seconds)


_SYSCTL_NAME_RE = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)+")
_SYSCTL_VALUE_RE = re.compile(r"[A-Za-z0-9_.:+-]+")


def _sysctl_step(table: Mapping[str, object], index: int, where: Where, context: StepContext) -> SysctlStep:
    name = string(table["sysctl"], where.at("sysctl"))
    if not _SYSCTL_NAME_RE.fullmatch(name):
        where.at("sysctl").fail(f"'{name}' is not a sysctl name such as \"kernel.time32_syscalls\"")
    raw = require(table, "value", where)
    value = str(raw) if finite(raw) else string(raw, where.at("value"))
    if not _SYSCTL_VALUE_RE.fullmatch(value):
        where.at("value").fail(f"{value!r}: one word of letters, digits and '_.:+-'")
    return SysctlStep(index, name, value)


@dataclass(frozen=True)
class ActionKind:
    keys: frozenset[str]
    parse: Callable[[Mapping[str, object], int, Where, StepContext], Step]


ACTIONS: Mapping[str, ActionKind] = MappingProxyType(
    {
        "probe": ActionKind(frozenset({"probe", "phase", "flavours", "args", "expect", EXPECT_ON,
                                       "reset-clock", "userland", "faketime", "linkage", "under"}),
                            _probe_step),
        "run": ActionKind(frozenset({"run", "phase", "userlands", "stdin", "timeout", "time-pattern",
                                     "expect", EXPECT_ON}), _run_step),
        "set-clock": ActionKind(frozenset({"set-clock", "via"}), _set_clock_step),
        "hwclock": ActionKind(frozenset({"hwclock"}), _hwclock_step),
        "wait": ActionKind(frozenset({"wait"}), _wait_step),
        "sysctl": ActionKind(frozenset({"sysctl", "value"}), _sysctl_step),
        "ntp-sync": ActionKind(frozenset({"ntp-sync", "phase", "timeout", "server", "must-step", "expect",
                                          EXPECT_ON}), _ntp_sync_step),
    }
)


def _step(raw: object, index: int, where: Where, context: StepContext) -> Step:
    table = as_table(raw, where)
    actions = [key for key in table if key in ACTIONS]
    known = ", ".join(ACTIONS)
    if len(actions) > 1:
        where.fail(f"more than one action ({', '.join(actions)}); a step has exactly one of: {known}")
    if not actions:
        where.fail(f"no action; a step has exactly one of: {known}")
    kind = ACTIONS[actions[0]]
    check_keys(table, kind.keys, where, f" for a {actions[0]} step")
    return kind.parse(table, index, where, context)


def _unique_phases(steps: tuple[Step, ...], where: Where) -> None:
    seen: dict[str, int] = {}
    for step in steps:
        if isinstance(step, (ProbeStep, RunStep, NtpSyncStep)):
            if step.phase in seen:
                where.item(step.index).at("phase").fail(
                    f"phase '{step.phase}' already names step[{seen[step.phase]}]"
                )
            seen[step.phase] = step.index


def parse_steps(raw: object, where: Where, context: StepContext) -> tuple[Step, ...]:
    if not isinstance(raw, list) or not raw:
        where.fail("expected at least one [[step]]")
    if len(raw) > MAX_STEPS:
        where.fail(f"{len(raw)} steps, more than {MAX_STEPS}: each is a command the guest answers in turn")
    steps = tuple(_step(item, index, where.item(index), context) for index, item in enumerate(raw))
    _unique_phases(steps, where)
    return steps


