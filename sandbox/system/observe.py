"""What a system rehearsal saw, read (pure: captured text in, facts out).

    unit_blocks(text)        `systemctl show` of every unit (KEY=VALUE blocks) -> {unit: {key: value}}
    unit_states(text)        `systemctl list-units --all --plain` -> {unit: "active/running"}
    processes(text)          our /proc walk ("pid comm cgroup syscalls truncations") -> [Process]
    journal_entries(text)    journal JSON lines (journalctl -o json) -> [JournalEntry]
    ticks(text)              /var/log/y2038-tick ("cron 2038-01-19T03:15:00Z") -> {who: [seconds]}
    tls_result(text)         `openssl s_client` -> its "Verify return code" and the error
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from sandbox.base.timefmt import parse_time

UNIT_KINDS = (".service", ".timer", ".socket", ".path", ".mount", ".scope", ".target", ".slice", ".device",
              ".automount", ".swap")
AGENT_CGROUP = "/"  # the agent and its commands: the root cgroup, outside every unit
TICK_LINE = re.compile(r"^(?P<who>\w+) (?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$")
VERIFY = re.compile(r"Verify return code: (?P<code>-?\d+) \((?P<text>[^)]*)\)")


@dataclass(frozen=True)
class Process:
    pid: int
    comm: str
    cgroup: str  # cgroup v2 path, "/system.slice/cron.service"
    time32_syscalls: int
    time32_truncations: int

    @property
    def unit(self) -> str:
        """The unit its cgroup names ("" for the root cgroup: our agent, the kernel's threads)."""
        for part in reversed(self.cgroup.strip("/").split("/")):
            if part.endswith(UNIT_KINDS):
                return part
        return ""


@dataclass(frozen=True)
class JournalEntry:
    usec: int  # __REALTIME_TIMESTAMP: when journald stamped it (its own clock)
    unit: str  # UNIT (what PID 1 says about a unit), else _SYSTEMD_UNIT (who wrote it), else ""
    identifier: str  # SYSLOG_IDENTIFIER
    pid: int
    priority: int
    message: str

    def line(self) -> str:
        return f"{self.identifier or '?'}[{self.pid}]: {self.message}"


def unit_blocks(text: str) -> dict[str, dict[str, str]]:
    units: dict[str, dict[str, str]] = {}
    for block in re.split(r"\n\s*\n", text):
        fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if fields.get("Id"):
            units[fields["Id"]] = fields
    return units


def unit_states(text: str) -> dict[str, str]:
    """`UNIT LOAD ACTIVE SUB DESCRIPTION` lines -> {unit: "ACTIVE/SUB"}; a
    leading "●" (a failed unit's mark) is dropped."""
    states = {}
    for line in text.splitlines():
        words = line.replace("●", " ").split()
        if len(words) >= 4 and words[0].endswith(UNIT_KINDS):
            states[words[0]] = f"{words[2]}/{words[3]}"
    return states


def processes(text: str) -> list[Process]:
    found = []
    for line in text.splitlines():
        words = line.split("\t")
        if len(words) != 5 or not words[0].isdigit():
            continue
        found.append(Process(int(words[0]), words[1], words[2], _int(words[3]), _int(words[4])))
    return found


def _int(text: str) -> int:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else 0


def journal_entries(text: str) -> list[JournalEntry]:
    entries = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        message = raw.get("MESSAGE", "")
        if isinstance(message, list):  # bytes the journal could not store as text
            message = bytes(message).decode("utf-8", "replace")
        entries.append(JournalEntry(
            int(raw.get("__REALTIME_TIMESTAMP", 0)), raw.get("UNIT") or raw.get("USER_UNIT") or
            raw.get("_SYSTEMD_UNIT", ""), raw.get("SYSLOG_IDENTIFIER", ""), _int(str(raw.get("_PID", "0"))),
            _int(str(raw.get("PRIORITY", "6"))), str(message)))
    return entries


def ticks(text: str) -> dict[str, list[int]]:
    """The periodic job's lines by who wrote them (cron, timer), as seconds."""
    found: dict[str, list[int]] = {}
    for line in text.splitlines():
        match = TICK_LINE.match(line.strip())
        if match:
            found.setdefault(match["who"], []).append(parse_time(match["time"]))
    return found


@dataclass(frozen=True)
class TlsResult:
    code: int | None  # openssl's verify code: 0 fine, 9 not yet valid, 10 expired; None: no handshake
    text: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def tls_result(text: str) -> TlsResult:
    match = VERIFY.search(text)
    if match:
        return TlsResult(int(match["code"]), match["text"])
    tail = [line for line in text.splitlines() if line.strip()]
    return TlsResult(None, tail[-1].strip() if tail else "no output")
