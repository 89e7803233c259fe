"""The commands of a system rehearsal, as data (pure): what the agent runs, from
the initramfs, to reach the system through PID 1's root, and the marks of
guest time at which the night is looked at.

The agent's own tools are 64-bit time_t (/tools/clockstep: the guest's
clock, and waits on CLOCK_MONOTONIC); the system's programs (systemctl,
journalctl, who...) are whatever the system ships, and what they say after
the rollover is part of what is observed.
"""
from __future__ import annotations

from dataclasses import dataclass

from sandbox.base.timefmt import format_time, parse_time

__all__ = ["format_time"]
ROLLOVER = parse_time("2038-01-19T03:14:08Z")
DEFAULT_START = "2038-01-18T22:00:00Z"
DEFAULT_END = "2038-01-19T06:00:00Z"
SYS = "chroot /proc/1/root"
ENV = "/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C TZ=UTC0 SYSTEMD_COLORS=0 SYSTEMD_PAGER="
PROPERTIES = ("Id", "LoadState", "ActiveState", "SubState", "Result", "NRestarts", "ExecMainStatus",
              "ExecMainCode", "ControlGroup", "MainPID", "LastTriggerUSec", "NextElapseUSecRealtime",
              "StateChangeTimestamp")
TLS_PORTS = (("tls-2040", 4433), ("tls-2051", 4434))
JOURNAL_FOLDERS = ("/proc/1/root/var/log/journal", "/proc/1/root/run/log/journal")


COMMAND_SECONDS = 60
"""Guest seconds before a command in the system is killed: a systemctl whose
manager froze (PID 1 crashed at the rollover) would otherwise wait for ever.
Cheap under time warp: an idle guest's clock jumps to the timeout."""


# The system's own env by its path: the initramfs's busybox runs a bare
# `env`, `who`, `date`, `hwclock` or `last` as its own applet even after
# chroot, and its 32-bit time_t answers are not the system's.


def in_system(command: str) -> str:
    """A command run chrooted into the system (PID 1's root), its environment
    cleared, killed after COMMAND_SECONDS."""
    return f"timeout -s KILL {COMMAND_SECONDS} {SYS} {ENV} {command}"


OURS = "ours"
INIT_KIND = ("ours=$(readlink -f /init); n=0;"
             " while [ \"$(readlink /proc/1/exe)\" = \"$ours\" ] && [ $n -lt 50 ]; do n=$((n + 1)); sleep 0.2; done;"
             f" e=$(readlink /proc/1/exe); if [ \"$e\" = \"$ours\" ]; then echo {OURS}; else basename \"$e\"; fi")
"""What PID 1 runs once our /init has had its moment to exec the system's
(the agent starts before that): the program's name, or OURS when it did not."""
SETTLE_TRIES = 120
SETTLE_SYSTEMD = (f"n=0; while [ $n -lt {SETTLE_TRIES} ]; do"
                  f" s=$({in_system('systemctl is-system-running --wait')} 2>/dev/null);"
                  " case \"$s\" in ''|offline) ;; *) echo \"$s\"; exit 0;; esac; n=$((n + 1)); sleep 1; done; exit 1")
"""`systemctl is-system-running --wait`, asked again while the manager is not
yet listening (no answer at all): its answer, running or degraded."""
SETTLE_QUIET_SECONDS = 60  # another init: a quiet minute of guest time stands for "settled"
_SHOW = ",".join(PROPERTIES)
UNITS = in_system("sh -c 'systemctl list-units --all --plain --no-legend --no-pager | cut -d\" \" -f1"
                  f" | xargs systemctl show --no-pager -p {_SHOW} --'")  # -- : the unit -.mount
STATES = in_system("systemctl list-units --all --plain --no-legend --no-pager")
CLOCK = "/tools/clockstep wait 0.001"  # its JSON line names the clock (wait takes more than 0)
PROCESSES = ("for d in /proc/[0-9]*; do p=${d#/proc/}; c=$(cat $d/comm 2>/dev/null) || continue;"
             " g=$(head -n1 $d/cgroup 2>/dev/null); s=$(grep '^Time32_syscalls' $d/status | cut -f2);"
             " t=$(grep '^Time32_truncations' $d/status | cut -f2);"
             " printf '%s\\t%s\\t%s\\t%s\\t%s\\n' \"$p\" \"$c\" \"${g#0::}\" \"$s\" \"$t\"; done")
KERNEL_LOG = "dmesg"
JOURNAL_FILES = " ".join(f"{d}/*/*.journal" for d in JOURNAL_FOLDERS)
LIST_JOURNALS = f"for f in {JOURNAL_FILES}; do case \"$f\" in *'*'*) ;; *) echo \"$f\";; esac; done"
"""The journal files, by their names alone: the initramfs's busybox is a
32-bit time_t program, whose stat() (test -e) fails with EOVERFLOW on a
file written after the rollover; a pattern that matched nothing stays as it is."""


@dataclass(frozen=True)
class Look:
    """One thing looked at after the night: its evidence file and its command."""

    name: str
    command: str


FINAL_LOOKS: tuple[Look, ...] = (
    Look("syslog.txt", "cat /proc/1/root/var/log/syslog"),
    Look("ticks.txt", "cat /proc/1/root/var/log/y2038-tick"),
    Look("who.txt", in_system("who -b")),
    Look("last.txt", in_system("last -x -F")),
    Look("hwclock.txt", in_system("hwclock --show --utc")),
    Look("chrony.txt", in_system("chronyc -n tracking")),
    Look("date.txt", in_system("date -u +%Y-%m-%dT%H:%M:%SZ")),
    *(Look(f"{name}.txt", in_system(f"sh -c 'echo | openssl s_client -connect 127.0.0.1:{port}"
                                    f" -CAfile /etc/y2038/{name}.crt 2>&1'"))
      for name, port in TLS_PORTS),
)


OUTCOMES = ("completed", "died", "hang", "no-init", "clock-moved", "agent-error")
"""How a system's boot ends (sandbox/system/boot.py): its night run through, the
guest dead (a kernel panic: PID 1 gone), no answer in time, our /init could not
start the system's, the clock elsewhere than the RTC once settled, the agent
misunderstood."""
CLOCK_SLACK_SECONDS = 600
"""Guest seconds the clock may be past the RTC's start once the system has
settled (booting and settling take some minutes of guest time at most)."""
RTC_PAST_2038 = "rtc_core.hctosys_beyond_2038=1"
"""The series kernel's word (kernel-series/0002-rtc-class-...): a 32-bit kernel
sets the clock from an RTC past 2038 (it refuses by default, as mainline does,
and the clock starts in 1970)."""


def clock_moved(clock: int, start: int, end: int) -> str:
    """Why the night cannot run from this clock at the baseline, or "": the
    system (or the kernel) put its clock elsewhere than the RTC's start."""
    if start <= clock <= start + CLOCK_SLACK_SECONDS and clock < end:
        return ""
    return (f"the system's clock reads {format_time(clock)} once settled, not the RTC's "
            f"{format_time(start)}: the kernel or the system moved it (see the clock: lines); no night run")


def marks(start: int, end: int) -> tuple[int, ...]:
    """When the night is looked at: every whole hour after start, a minute
    after the rollover, and the end (seconds, ascending, each after start)."""
    hour = 3600
    found = {t for t in range(start - start % hour + hour, end, hour)}
    if start < ROLLOVER + 60 < end:
        found.add(ROLLOVER + 60)
    found.add(end)
    return tuple(sorted(t for t in found if start < t <= end))
