"""A system scenario file (scenarios/system/*.toml), read and checked before
anything boots (pure but for reading the file and rootfs/systems.toml).

    title = "Debian 12 armhf across the rollover"
    system = "debian12-armhf"          # one of rootfs/systems.toml
    start = "2038-01-18T22:00:00Z"     # the RTC at power-on (past the rollover: booted past it)
    end = "2038-01-19T06:00:00Z"       # the clock runs under time warp until then
    outcome = "completed"              # how the boot ends (default); "died": PID 1 gone, a kernel panic

    [units]                            # a verdict per unit, and a pattern on the line that decided it
    "cron.service" = { verdict = "broke", line = "missed \\d+ of" }
    "dbus.service" = "calls-time32"

    [journal]                          # the system's log lines (sandbox/system/expect.py)
    must = ["Assertion .* function now\\(\\)"]
    must-not = ["Timeout overflow"]

    [timers]
    "y2038-tick.timer" = { ran-after-rollover = false }

Every mistake is one InputError naming the file and the key: an unknown
key, a verdict or system not known, a unit name the table never shows, a
pattern that is not a regular expression, a time the RTC cannot hold, an
end not after the start, a span longer than MAX_SPAN_SECONDS, a timer
expectation on a span that ends before the rollover.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.fields import Where, check_keys, require, string, strings, table, type_name
from sandbox.base.paths import SYSTEM_SCENARIOS
from sandbox.base.timefmt import format_time
from sandbox.scenario import guards, patterns
from sandbox.scenario.parser import display_path, toml_document
from sandbox.scenario.steps import RTC_MAX, RTC_MIN, parse_time_value
from sandbox.system.catalogue import Systems, load_systems
from sandbox.system.facts import TABLE_KINDS
from sandbox.system.phases import DEFAULT_END, DEFAULT_START, OUTCOMES, ROLLOVER
from sandbox.system.verdict import VERDICTS

TOP_KEYS = ("title", "description", "system", "start", "end", "outcome", "units", "journal", "timers")
UNIT_KEYS = ("verdict", "line")
JOURNAL_KEYS = ("must", "must-not")
TIMER_KEYS = ("ran-after-rollover",)
MAX_SPAN_SECONDS = 24 * 3600
"""A day of guest time at most: Debian 12 armhf's night of 8 hours took 249 s
of TCG here (cron and the timer wake it every minute), so a day is some 13
minutes."""
UNIT_NAME = re.compile(r"^[A-Za-z0-9:_.\\@-]+$")


@dataclass(frozen=True)
class UnitExpectation:
    unit: str
    verdict: str  # one of VERDICTS
    line: str = ""  # a pattern the deciding line (the verdict's reason) must match; "" any


@dataclass(frozen=True)
class JournalExpectation:
    pattern: str
    present: bool  # must appear (True), must not (False)


@dataclass(frozen=True)
class TimerExpectation:
    timer: str
    ran_after_rollover: bool


@dataclass(frozen=True)
class SystemScenario:
    file: str  # as errors show it
    name: str  # "system/<stem>": its results folder and its test id
    title: str
    system: str  # a name of rootfs/systems.toml
    start: str  # YYYY-MM-DDTHH:MM:SSZ
    end: str
    description: str = ""
    outcome: str = "completed"  # how the boot must end (phases.OUTCOMES)
    units: tuple[UnitExpectation, ...] = ()
    journal: tuple[JournalExpectation, ...] = ()
    timers: tuple[TimerExpectation, ...] = ()

    @property
    def slug(self) -> str:
        return self.name.replace("/", "-")


def _unit(name: str, raw: object, where: Where) -> UnitExpectation:
    if not UNIT_NAME.match(name) or not name.endswith(TABLE_KINDS):
        where.fail(f"'{name}' is not a unit the table judges (a name ending {', '.join(TABLE_KINDS)})")
    spec = {"verdict": raw} if isinstance(raw, str) else table(raw, where)
    check_keys(spec, UNIT_KEYS, where)
    verdict = string(require(spec, "verdict", where), where.at("verdict"))
    if verdict not in VERDICTS:
        where.at("verdict").fail(f"unknown verdict '{verdict}' (known: {', '.join(VERDICTS)})")
    line = _pattern(spec["line"], where.at("line")) if "line" in spec else ""
    return UnitExpectation(name, verdict, line)


def _pattern(raw: object, where: Where) -> str:
    text = string(raw, where)
    try:
        return patterns.check(text)
    except patterns.PatternError as err:
        where.fail(str(err))


def _journal(raw: object, where: Where) -> tuple[JournalExpectation, ...]:
    spec = table(raw, where)
    check_keys(spec, JOURNAL_KEYS, where)
    found = []
    for key, present in (("must", True), ("must-not", False)):
        for index, text in enumerate(strings(spec.get(key, []), where.at(key))):
            found.append(JournalExpectation(_pattern(text, where.at(key).item(index)), present))
    return tuple(found)


def _timer(name: str, raw: object, where: Where, end: int) -> TimerExpectation:
    if not UNIT_NAME.match(name) or not name.endswith(".timer"):
        where.fail(f"'{name}' is not a timer (a unit name ending .timer)")
    spec = table(raw, where)
    check_keys(spec, TIMER_KEYS, where)
    ran = require(spec, "ran-after-rollover", where)
    if not isinstance(ran, bool):
        where.at("ran-after-rollover").fail(f"expected true or false, got {type_name(ran)}")
    if end <= ROLLOVER:
        where.fail(f"the span ends at {format_time(end)}, not after the rollover "
                   f"({format_time(ROLLOVER)}): no run can come after it")
    return TimerExpectation(name, ran)


def _rtc(raw: object, where: Where) -> int:
    """A time QEMU's RTC holds (the system boots at start; its clock runs to end)."""
    seconds = parse_time_value(raw, where)
    if not RTC_MIN <= seconds <= RTC_MAX:
        where.fail(f"{format_time(seconds)} is outside {format_time(RTC_MIN)}..{format_time(RTC_MAX)}, "
                   "the times QEMU's emulated RTC holds")
    return seconds


def _span(document: dict[str, object], where: Where) -> tuple[int, int]:
    start = _rtc(document.get("start", DEFAULT_START), where.at("start"))
    end = _rtc(document.get("end", DEFAULT_END), where.at("end"))
    if end <= start:
        where.at("end").fail(f"{format_time(end)} is not after start {format_time(start)}")
    if end - start > MAX_SPAN_SECONDS:
        where.at("end").fail(f"{(end - start) / 3600:g} hours after start, more than "
                             f"{MAX_SPAN_SECONDS // 3600} hours of guest time")
    return start, end


def parse_system_scenario(text: str, file: str, name: str, systems: Systems) -> SystemScenario:
    where = Where(file)
    document = toml_document(text, where)
    check_keys(document, TOP_KEYS, where)
    title = guards.line(string(require(document, "title", where), where.at("title")), where.at("title"))
    description = guards.text(string(document["description"], where.at("description")), where.at("description")) \
        if "description" in document else ""
    system = string(require(document, "system", where), where.at("system"))
    if system not in systems.by_name:
        where.at("system").fail(f"unknown system '{system}' (known: {', '.join(sorted(systems.by_name))})")
    start, end = _span(document, where)
    outcome = string(document.get("outcome", OUTCOMES[0]), where.at("outcome"))
    if outcome not in OUTCOMES:
        where.at("outcome").fail(f"unknown outcome '{outcome}' (known: {', '.join(OUTCOMES)})")
    for key in ("units", "timers"):
        if key in document and outcome != OUTCOMES[0]:
            where.at(key).fail(f"no unit table when the boot ends '{outcome}': only [journal] can be judged")
    units = tuple(_unit(unit, raw, where.at("units").at(unit))
                  for unit, raw in table(document.get("units", {}), where.at("units")).items())
    journal = _journal(document["journal"], where.at("journal")) if "journal" in document else ()
    timers = tuple(_timer(timer, raw, where.at("timers").at(timer), end)
                   for timer, raw in table(document.get("timers", {}), where.at("timers")).items())
    if not (units or journal or timers):
        where.fail("expects nothing: give [units], [journal] or [timers]")
    return SystemScenario(file, name, title, system, format_time(start), format_time(end), description,
                          outcome, units, journal, timers)


def load_system_scenario(path: Path, systems: Systems | None = None) -> SystemScenario:
    file = display_path(path)
    text = guards.read_text(path, file)  # a regular file, bounded, UTF-8
    return parse_system_scenario(text, file, f"system/{path.stem}", systems or load_systems())


def system_scenario_files(root: Path = SYSTEM_SCENARIOS) -> list[Path]:
    return sorted(root.rglob("*.toml")) if root.is_dir() else []


def is_system_scenario(path: Path) -> bool:
    """A file of scenarios/system/, or one whose top level names a `system`
    (a scenario file kept elsewhere): read the cheap way, bad files are the
    probe scenarios' loader's to report."""
    if SYSTEM_SCENARIOS in path.resolve().parents:
        return True
    if not path.is_file():  # a FIFO must not block us; the loader names what it is
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:guards.MAX_FILE_BYTES]
    except OSError:
        return False
    return bool(re.search(r"(?m)^system\s*=", head)) and not re.search(r"(?m)^\[\[step\]\]", head)
