"""chronyd in the guest: the commands that serve NTP and ask for it (pure
shell text for busybox sh), and what an ntp-sync step's output says (pure
parsing). Running them is sandbox/run/runner.py.

The two guests share one Ethernet link (sandbox/guest/qemu.py Link): the
time server at SERVER_ADDRESS, the scenario's guest at CLIENT_ADDRESS. Each
chronyd runs inside its Debian userland (chroot), as root (`-u root`: the
userland has no _chrony user), logging to LOG there; chronyc speaks to it
over its UNIX socket (cmdport 0: no UDP command port).
"""
from __future__ import annotations

import json
import re
import shlex

from sandbox.run.observations import TEXT_LIMIT, Value

SERVER_ADDRESS = "10.38.0.1"
CLIENT_ADDRESS = "10.38.0.2"
SERVER_MAC = "52:54:00:38:00:01"
CLIENT_MAC = "52:54:00:38:00:02"
PREFIX_LENGTH = 24
CONF = "/etc/y2038-chrony.conf"  # inside the userland
LOG = "/var/log/y2038-chronyd.log"
GUEST_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
POLL_SECONDS = 0.2  # how often the ntp-sync step looks at chronyd's log

SERVER_CONF = (
    "local stratum 1",  # serve its own clock, synchronised or not
    "allow all",
    "cmdport 0",
)
STEPPED = "System clock was stepped by"  # chrony 4.3 reference.c, local.c
REFUSED = "seconds is invalid"
"""chrony 4.3 local.c: "Adjustment of %.1f seconds is invalid", logged for an
offset UTI_IsTimeOffsetSane() rejects. A 32-bit time_t chronyd logs it for
every update from a server past 2038 and never steps: its first refusal ends
the wait (it used to last the step's whole timeout, 12 s of real time)."""


def client_conf(server: str) -> tuple[str, ...]:
    return (
        f"server {server} iburst minpoll 0 maxpoll 0",  # a request every second
        "makestep 1 -1",  # step whenever the offset is over 1 s, at any update
        "cmdport 0",
    )


def network_shell(address: str) -> str:
    """busybox ip: loopback up, the one NIC up with its address."""
    return (f"ip link set lo up && ip addr add {address}/{PREFIX_LENGTH} dev eth0"
            " && ip link set eth0 up")


def _in_userland(userland: str, argv: list[str]) -> str:
    root = f"/userlands/{userland}"
    return (f"cd / && env -i PATH={GUEST_PATH} TZ=UTC0 LC_ALL=C chroot {shlex.quote(root)} "
            + shlex.join(argv))


def start_shell(userland: str, conf: tuple[str, ...], *options: str) -> str:
    """Write the configuration, then start chronyd (it forks; the command ends
    when chronyd is up, or fails with its reason). chronyd makes /run/chrony
    itself, with the permissions it insists on; -4: the kernels have no IPv6."""
    root = shlex.quote(f"/userlands/{userland}")
    return (f"mkdir -p {root}/etc {root}/var/log {root}/run {root}/var/lib/chrony"
            f" && {{ grep -qs '^root:' {root}/etc/passwd || echo 'root:x:0:0:root:/root:/bin/sh' >> {root}/etc/passwd; }}"
            f" && printf '%s\\n' {' '.join(map(shlex.quote, conf))} > {root}{CONF}"
            f" && rm -f {root}{LOG}"
            f" && {_in_userland(userland, ['/usr/sbin/chronyd', '-4', '-u', 'root', '-f', CONF, '-l', LOG, *options])}")


def server_shell(userland: str) -> str:
    """The time server: serves its own clock and never changes it (-x)."""
    return start_shell(userland, SERVER_CONF, "-x")


def log_shell(userland: str) -> str:
    return f"cat {shlex.quote(f'/userlands/{userland}{LOG}')}"


def sync_shell(userland: str, server: str, timeout: float, must_step: bool) -> str:
    """Start the client, wait until its log says it stepped the clock or
    refused to (REFUSED), it exited, or `timeout` guest seconds passed; then
    print the sections sync_fields() reads. Exits 1 without a step when the
    step must happen, with chronyd's log on stderr."""
    root = shlex.quote(f"/userlands/{userland}")
    ticks = max(1, round(timeout / POLL_SECONDS))
    chronyc = [_in_userland(userland, ["/usr/bin/chronyc", "-n", what]) for what in ("tracking", "sources")]
    failing = (f"echo 'chronyd did not step the clock within {timeout:g} s (or refused to); its log:' >&2;"
               f" cat {root}{LOG} >&2; exit 1") if must_step else "exit 0"
    return (
        f"{start_shell(userland, client_conf(server))} || exit 1\n"
        f"result='not stepped'; n=0\n"
        f"while [ $n -lt {ticks} ]; do\n"
        f"  if grep -q '{STEPPED}' {root}{LOG}; then result=stepped; break; fi\n"
        f"  if grep -q '{REFUSED}' {root}{LOG}; then break; fi\n"
        f"  if ! pidof chronyd >/dev/null; then result=exited; break; fi\n"
        f"  n=$((n + 1)); sleep {POLL_SECONDS}\n"
        f"done\n"
        f"echo '=== result'; echo \"$result\"\n"
        f"echo '=== log'; cat {root}{LOG}\n"
        f"echo '=== tracking'; {chronyc[0]} 2>&1\n"
        f"echo '=== sources'; {chronyc[1]} 2>&1\n"
        f"echo '=== clock'; /tools/clockstep wait 0.001\n"
        f"[ \"$result\" != 'not stepped' ] || {{ {failing}; }}\n"
    )


_SECTION_RE = re.compile(r"^=== (\w+)$", re.M)
_STEP_RE = re.compile(re.escape(STEPPED) + r" (-?[0-9.]+) seconds")
_TRACKING_RE = re.compile(r"^(?P<key>[A-Za-z ()]+?)\s*: (?P<value>.*)$", re.M)
_REFERENCE_RE = re.compile(r"\(([^)]*)\)")


def sections(stdout: str) -> dict[str, str]:
    """The text after each '=== name' line, up to the next."""
    parts = _SECTION_RE.split(stdout)
    return {name: text.strip("\n") for name, text in zip(parts[1::2], parts[2::2])}


def _tracking(text: str) -> dict[str, Value]:
    rows = {m["key"]: m["value"].strip() for m in _TRACKING_RE.finditer(text)}
    values: dict[str, Value] = {}
    if "Reference ID" in rows:
        found = _REFERENCE_RE.search(rows["Reference ID"])
        values["reference"] = found.group(1) if found else rows["Reference ID"]
    if rows.get("Stratum", "").isdigit():
        values["stratum"] = int(rows["Stratum"])
    if "Leap status" in rows:
        values["leap"] = rows["Leap status"]
    return values


def _clock(text: str) -> dict[str, Value]:
    """realtime_after of `clockstep wait` (a 64-bit time_t tool)."""
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("realtime_after"), int):
            return {"clock": record["realtime_after"]}
    return {}


def sync_fields(stdout: str) -> dict[str, Value]:
    """The observation of an ntp-sync step: result, the step chronyd logged
    (its last), the clock after, chronyc's reference, stratum and leap
    status, and the texts of the log, tracking and sources."""
    parts = sections(stdout)
    log = parts.get("log", "")
    steps = _STEP_RE.findall(log)
    values: dict[str, Value] = {"result": parts.get("result", "").strip()}
    if steps:
        values["step"] = float(steps[-1])
    values.update(_clock(parts.get("clock", "")))
    values.update(_tracking(parts.get("tracking", "")))
    for name in ("log", "tracking", "sources"):
        values[name] = parts.get(name, "")[:TEXT_LIMIT]
    return values
