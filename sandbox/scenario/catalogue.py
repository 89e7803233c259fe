"""The probe catalogue: which probes and tools exist, the calls they print,
each call's fields and their kinds, and the guest programs per machine.

Read from `rootfs/manifest.toml`, written by the rootfs side:

    [probe.clock]
    usage = "[call...]"                # its arguments, for the authoring guide
    about = "Reads CLOCK_REALTIME ..."     # what it does, likewise (any TOML string)
    flavours = ["time32-syscall", "time32-libc", "time64", "native64"]
    calls.time = { seconds = "time" }
    calls.gettimeofday = { seconds = "time", usec = "number" }
    only.some_call = ["time64"]        # a call printed in these flavours only

    [tool.settime]
    calls.settimeofday = { target = "time" }

    [host-binaries.x86_64]
    "/usr/sbin/hwclock" = "util-linux-extra"

Field kinds are FIELD_KINDS; every call may also print `errno`. The
scenario parser refuses an expectation on a call, field or flavour the
catalogue does not know, before anything boots, and the judge and report take
"which fields are times" from here. Other keys of the manifest belong to the
initramfs build (sandbox/build/rootfs_manifest.py).
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from sandbox.base.fields import Where, names, read_text, string, table
from sandbox.base.machines import FLAVOURS
from sandbox.base.paths import ROOTFS

MANIFEST = ROOTFS / "manifest.toml"
FIELD_KINDS = ("time", "number", "text", "errno")
"""time: seconds since the epoch; number; text; errno: an errno name."""
TIME = "time"


@dataclass(frozen=True)
class CallInfo:
    name: str
    fields: Mapping[str, str]  # field -> kind, in the order the call prints them
    flavours: tuple[str, ...]  # the flavours that print this call


@dataclass(frozen=True)
class ProbeInfo:
    name: str
    flavours: tuple[str, ...]
    call_info: Mapping[str, CallInfo] = field(default_factory=lambda: MappingProxyType({}))
    usage: str = ""  # the arguments after the probe's name, for the authoring guide
    about: str = ""  # what it does, for the authoring guide

    @property
    def calls(self) -> tuple[str, ...]:
        return tuple(self.call_info)

    def kind(self, call: str, field_name: str) -> str | None:
        info = self.call_info.get(call)
        return info.fields.get(field_name) if info else None

    def is_time(self, call: str, field_name: str) -> bool:
        return self.kind(call, field_name) == TIME


@dataclass(frozen=True)
class Catalogue:
    probes: tuple[ProbeInfo, ...]
    tool_info: tuple[ProbeInfo, ...] = ()
    programs: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    """Per machine, the absolute guest paths of the host programs it carries."""

    def get(self, name: str) -> ProbeInfo | None:
        return next((probe for probe in self.probes if probe.name == name), None)

    def names(self) -> tuple[str, ...]:
        return tuple(probe.name for probe in self.probes)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tool_info)

    def tool(self, name: str) -> ProbeInfo | None:
        return next((tool for tool in self.tool_info if tool.name == name), None)

    def has_program(self, machine: str, path: str) -> bool:
        return path in self.programs.get(machine, frozenset())


def _fields(raw: object, where: Where) -> Mapping[str, str]:
    fields = table(raw, where)
    for name, kind in fields.items():
        if kind not in FIELD_KINDS:
            where.at(name).fail(f"unknown field kind {kind!r} (known: {', '.join(FIELD_KINDS)})")
        if name == "errno":
            where.at(name).fail("'errno' is implicit for every call; do not declare it")
    return MappingProxyType({name: str(kind) for name, kind in fields.items()})  # each kind is a FIELD_KINDS name


_ENTRY_KEYS = ("calls", "flavours", "only", "usage", "about")


def _entry(name: str, raw: object, where: Where, all_flavours: tuple[str, ...]) -> ProbeInfo:
    spec = table(raw, where)
    for key in spec:
        if key not in _ENTRY_KEYS:
            where.at(key).fail(f"unknown key '{key}' (known: {', '.join(_ENTRY_KEYS)})")
    flavours = names(spec["flavours"], where.at("flavours"), FLAVOURS, "flavour") \
        if "flavours" in spec else all_flavours
    calls = table(spec.get("calls", {}), where.at("calls"))
    only = table(spec.get("only", {}), where.at("only"))
    for call in only:
        if call not in calls:
            where.at("only").at(call).fail(f"no call '{call}' in calls")
    info = {call: CallInfo(call, _fields(fields, where.at("calls").at(call)),
                           names(only[call], where.at("only").at(call), flavours, "flavour")
                           if call in only else flavours)
            for call, fields in calls.items()}
    usage, about = (string(spec[key], where.at(key)) if key in spec else "" for key in ("usage", "about"))
    return ProbeInfo(name, flavours, MappingProxyType(info), usage, " ".join(about.split()))


def parse_catalogue(text: str, file: str) -> Catalogue:
    """The catalogue described by manifest text; InputError names file and key."""
    where = Where(file)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    probes = table(document.get("probe", {}), where.at("probe"))
    tools = table(document.get("tool", {}), where.at("tool"))
    for name, raw in probes.items():
        if "calls" not in table(raw, where.at("probe").at(name)):
            where.at("probe").at(name).at("calls").fail("missing (required)")
    host = table(document.get("host-binaries", {}), where.at("host-binaries"))
    programs = {machine: frozenset(table(spec, where.at("host-binaries").at(machine)))
                for machine, spec in host.items()}
    return Catalogue(
        probes=tuple(_entry(name, raw, where.at("probe").at(name), FLAVOURS) for name, raw in probes.items()),
        tool_info=tuple(_entry(name, raw, where.at("tool").at(name), ()) for name, raw in tools.items()),
        programs=MappingProxyType(programs),
    )


def load_catalogue(path: Path | str = MANIFEST) -> Catalogue:
    path = Path(path)
    return parse_catalogue(read_text(path), str(path))
