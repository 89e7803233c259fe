"""Kernel variants, as data: which sources and which extra config fragments.

Every kernel is tinyconfig + common.config + the machine's fragment; a
variant says whether kernel-series/series is applied and which fragments
(under kernel-series/config/) follow. A scenario names its variant with the
top-level key `kernel` (default "series").

The series variant has disks (block layer, ext4, XFS), a network (IPv4
and a virtio NIC, for NTP between two guests) and a v4l2 test device (for
the v4l2 ioctls with 32-bit times). The strict variant is the
series with strict.config last: the same options but COMPAT_32BIT_TIME, so its
first build starts from a copy of the series build folder (`seed`) and
recompiles only what that option reaches, about a minute instead of five.
The pristine variant (Debian's sources) has none of them: every fragment costs
build time in a cold CI.

The traced variant is the series with event tracing (trace.config) and
without the disks, the network, the devices and KUnit, for the time32
trace events: what its one scenario needs, so that its build (one more in a
cold CI) and its boots are short. The system variant is the series with system.config: what a
whole Debian system with systemd as PID 1 needs (sandbox/system/,
docs/system-rehearsal.md), seeded from the series build. The checked variant has every fragment
and tracing: `just check-series` builds it at every patch, so that every
line of the series compiles; no scenario boots it. Tracing is kept out of
the series variant because it costs every boot: at late_initcall_sync the kernel rewrites
the print formats of every trace event against every TRACE_DEFINE_ENUM of
its system (trace_event_update_all(); XFS alone has about 700 events and 80
enums), about 2.1 s of guest time and 0.7 s of wall time per x86_64 boot
under TCG (initcall_debug: trace_eval_sync).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Variant:
    name: str
    series: bool  # apply kernel-series/series on top of Debian's tree
    fragments: tuple[str, ...]  # after common.config and the machine's fragment
    about: str
    seed: str | None = None  # a variant whose build folder an empty one starts from

    @property
    def has_disks(self) -> bool:
        """Block devices, ext4 and XFS: what a scenario's [[disk]] needs."""
        return DISKS_FRAGMENT in self.fragments

    @property
    def has_network(self) -> bool:
        """IPv4 and a virtio NIC: what a scenario's [time-server] needs."""
        return NET_FRAGMENT in self.fragments


DEFAULT = "series"
DISKS_FRAGMENT = "disks.config"
NET_FRAGMENT = "net.config"
DEVICES_FRAGMENT = "devices.config"
SERIES_FRAGMENTS = ("series.config", DISKS_FRAGMENT, NET_FRAGMENT, DEVICES_FRAGMENT, "kunit.config")
TRACE_FRAGMENT = "trace.config"
SYSTEM_FRAGMENT = "system.config"

VARIANTS: Mapping[str, Variant] = MappingProxyType({
    v.name: v
    for v in (
        Variant("series", True, SERIES_FRAGMENTS,
                "Debian's tree + kernel-series/, with the time32 policy, disks, a network and the KUnit tests"),
        Variant("pristine", False, (),
                "Debian's tree as shipped: what the series changes, seen from before"),
        Variant("strict", True, (*SERIES_FRAGMENTS, "strict.config"),
                "the series with COMPAT_32BIT_TIME=n: no 32-bit time syscalls at all",
                seed="series"),
        Variant("traced", True, ("series.config", TRACE_FRAGMENT),
                "the series with event tracing and nothing else: the time32 trace events in tracefs"),
        Variant("system", True, (*SERIES_FRAGMENTS, SYSTEM_FRAGMENT),
                "the series with what systemd needs (cgroups, namespaces, overlayfs...): whole systems",
                seed="series"),
        Variant("checked", True, (*SERIES_FRAGMENTS, TRACE_FRAGMENT),
                "every fragment of the series and tracing: what `just check-series` compiles at each patch"),
    )
})
