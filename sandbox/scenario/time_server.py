"""[time-server]: the second guest of an NTP scenario, checked before boot.

    [time-server]
    time = "2038-01-19T03:14:00Z"   # its RTC (QEMU -rtc base): 1970..2099
    userland = "debian12-amd64"     # whose chronyd serves (default); it must have chrony

The server boots on the machine that runs the userland's architecture as its
own (amd64: x86_64, i386: i386, armhf: armhf), with the series kernel (the
variant with a network), and serves NTP from its own clock (`local stratum
1`). Pure: running it is sandbox/run/chrony.py and sandbox/run/runner.py.
"""
from __future__ import annotations

from collections.abc import Mapping

from sandbox.base.fields import Where, check_keys, require, string, table
from sandbox.base.machines import MACHINES
from sandbox.scenario.model import CHRONY_PACKAGE, TimeServer
from sandbox.scenario.steps import rtc_time
from sandbox.scenario.userlands import Userlands

KEYS = frozenset({"time", "userland"})
DEFAULT_USERLAND = "debian12-amd64"


def machine_for(arch: str) -> str | None:
    """The machine whose own (first) Debian architecture this is."""
    return next((m.name for m in MACHINES.values() if m.debian_archs[0] == arch), None)


def parse_time_server(raw: object, userlands: Userlands, where: Where) -> TimeServer:
    spec: Mapping[str, object] = table(raw, where)
    check_keys(spec, KEYS, where, " for [time-server]")
    time = rtc_time(require(spec, "time", where), where.at("time"))
    name = string(spec.get("userland", DEFAULT_USERLAND), where.at("userland"))
    userland = userlands.get(name)
    if userland is None:
        where.at("userland").fail(f"unknown userland '{name}' (known: {', '.join(userlands.by_name)})")
    if CHRONY_PACKAGE not in userland.packages:
        where.at("userland").fail(f"userland '{name}' has no {CHRONY_PACKAGE} (add it to its packages "
                                  "in rootfs/userlands.toml)")
    machine = machine_for(userland.arch)
    if machine is None:
        where.at("userland").fail(f"userland '{name}' is {userland.arch}: no machine runs it as its own")
    return TimeServer(time, name, machine)
