"""What probes saw: one Observation per probe call, and the parser of probe output.

A probe prints one JSON object per line, e.g.

    {"probe":"clock","flavour":"time32-syscall","call":"time","seconds":-2147483620}
    {"probe":"clock","flavour":"time32-libc","call":"time","errno":"EOVERFLOW"}

The host adds where it ran (scenario, machine, phase). Parsing never runs anything.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sandbox.scenario import patterns

Value = int | float | str

PROBE_KEYS: tuple[str, ...] = ("probe", "flavour", "call")
"""Keys every probe line carries."""
HOST_KEYS: tuple[str, ...] = ("scenario", "machine", "phase")
"""Keys the host adds; a probe must not print them."""
IDENTITY_KEYS: tuple[str, ...] = HOST_KEYS + PROBE_KEYS
ERRNO_KEY = "errno"
RESERVED_KEYS = frozenset(IDENTITY_KEYS + (ERRNO_KEY,))


def _is_value(raw: object) -> bool:
    return isinstance(raw, (int, float, str)) and not isinstance(raw, bool)


@dataclass(frozen=True)
class Observation:
    scenario: str
    machine: str
    phase: str
    probe: str
    flavour: str
    call: str
    values: Mapping[str, Value] = field(default_factory=dict)
    errno: str | None = None

    def __post_init__(self) -> None:
        clash = sorted(RESERVED_KEYS & set(self.values))
        if clash:
            raise ValueError(f"observation values may not be named {', '.join(clash)}")
        bad = sorted(key for key, value in self.values.items() if not _is_value(value))
        if bad:
            raise ValueError(f"observation values must be numbers or strings: {', '.join(bad)}")
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))

    def __hash__(self) -> int:
        return hash((self.key, tuple(sorted(self.values.items(), key=lambda item: item[0])), self.errno))

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        """(scenario, machine, phase, probe, flavour, call)."""
        return (self.scenario, self.machine, self.phase, self.probe, self.flavour, self.call)

    def to_record(self) -> dict[str, Value]:
        """A flat dict for JSON: identity, errno when set, then the values."""
        record: dict[str, Value] = dict(zip(IDENTITY_KEYS, self.key))
        if self.errno is not None:
            record[ERRNO_KEY] = self.errno
        record.update(self.values)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> Observation:
        """The inverse of to_record; ValueError on a malformed record."""
        missing = [key for key in IDENTITY_KEYS if not isinstance(record.get(key), str)]
        if missing:
            raise ValueError(f"record lacks string {', '.join(missing)}")
        errno = record.get(ERRNO_KEY)
        if errno is not None and not isinstance(errno, str):
            raise ValueError(f"errno must be a string, got {errno!r}")
        values = {key: value for key, value in record.items() if key not in RESERVED_KEYS}
        identity = {key: str(record[key]) for key in IDENTITY_KEYS}
        return cls(**identity, values=values, errno=errno)  # type: ignore[arg-type]  # values: JSON scalars as written


class ProbeOutputError(ValueError):
    """A probe output line that is not a valid observation; names the line."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"probe output line {line}: {message}")


def _excerpt(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _line_record(text: str, number: int) -> dict[str, object]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise ProbeOutputError(number, f"not JSON ({err.msg}): {_excerpt(text)!r}") from None
    if not isinstance(record, dict):
        raise ProbeOutputError(number, f"expected a JSON object: {_excerpt(text)!r}")
    return record


def _check_line(record: dict[str, object], number: int) -> None:
    for key in PROBE_KEYS:
        if not isinstance(record.get(key), str):
            raise ProbeOutputError(number, f"missing string '{key}'")
    for key in HOST_KEYS:
        if key in record:
            raise ProbeOutputError(number, f"'{key}' is set by the host, not by a probe")
    errno = record.get(ERRNO_KEY)
    if errno is not None and not isinstance(errno, str):
        raise ProbeOutputError(number, f"'errno' must be a name such as \"EOVERFLOW\", got {errno!r}")
    for key, value in record.items():
        if key not in RESERVED_KEYS and not _is_value(value):
            raise ProbeOutputError(number, f"'{key}' must be a number or a string, got {value!r}")


def parse_probe_line(text: str, number: int, *, scenario: str, machine: str, phase: str) -> Observation:
    record = _line_record(text, number)
    _check_line(record, number)
    return Observation.from_record({**record, "scenario": scenario, "machine": machine, "phase": phase})


def parse_probe_output(stdout: str, *, scenario: str, machine: str, phase: str) -> list[Observation]:
    """Observations from a probe's stdout; blank lines are skipped, lines count from 1."""
    return [
        parse_probe_line(line.strip(), number, scenario=scenario, machine=machine, phase=phase)
        for number, line in enumerate(stdout.splitlines(), start=1)
        if line.strip()
    ]


TEXT_LIMIT = 4096  # characters of a program's stdout or stderr kept in its observation
_SIGNALS = {n: name for name, n in vars(__import__("signal")).items()
            if name.startswith("SIG") and not name.startswith("SIG_") and isinstance(n, int)}


def program_status(exit_code: int) -> str:
    """'ok', 'exit 2', 'signal SIGSEGV', 'timeout' (the run step's timeout kills
    with SIGKILL), or 'no userland' (the agent's 125)."""
    if exit_code == 0:
        return "ok"
    if exit_code == 128 + 9:
        return "timeout"
    if exit_code > 128 and exit_code - 128 in _SIGNALS:
        return f"signal {_SIGNALS[exit_code - 128]}"
    return f"exit {exit_code}"


def _time_in(stdout: str, pattern: str) -> int | None:
    """The time the step's checked pattern finds (None: none, or the match ran
    past its time limit: the expectations on `time` then fail as unobserved)."""
    try:
        match = patterns.search(pattern, stdout)
    except patterns.PatternTimeout:
        return None
    if match is None:
        return None
    text = match.group("time") if "time" in match.re.groupindex else match.group(1)
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def program_observation(*, scenario: str, machine: str, phase: str, userland: str, call: str,
                        exit_code: int, stdout: str, stderr: str,
                        time_pattern: str | None = None) -> Observation:
    """A real program's run as one observation: exit, status, stdout, stderr
    and, when its stdout matches the step's time-pattern, the time it printed."""
    values: dict[str, Value] = {"exit": exit_code, "status": program_status(exit_code),
                                "stdout": stdout[:TEXT_LIMIT], "stderr": stderr[:TEXT_LIMIT]}
    if time_pattern is not None:
        seconds = _time_in(stdout, time_pattern)
        if seconds is not None:
            values["time"] = seconds
    return Observation(scenario, machine, phase, "run", userland, call, values)
