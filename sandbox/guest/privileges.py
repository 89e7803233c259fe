"""QEMU without the capabilities it does not need.

The sandbox runs as root (it installs packages, builds kernels); QEMU needs
none of root's capabilities: it reads the kernel, the initramfs and the disk
images and writes the console file and its disks, all owned by root, whose
owner permissions need no capability. So the child drops them between fork
and exec (drop_all, called from the preexec hook of sandbox/guest/qemu.py):
the bounding set emptied (a root exec then gets no permitted capability),
the inheritable and ambient sets cleared, and no_new_privs set (no setuid
binary can give them back). QEMU's own seccomp filter (-sandbox) stays as
the second barrier. `/proc/<qemu pid>/status` then reads `CapEff:
0000000000000000` (docs/reliability.md has the measurement).

Each call may fail where the process lacks CAP_SETPCAP (not root): it then
has no capability to drop, and the failure is ignored.
"""
from __future__ import annotations

import ctypes
from pathlib import Path

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_LAST_CAP_FILE = Path("/proc/sys/kernel/cap_last_cap")


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _last_cap() -> int:
    try:
        return int(CAP_LAST_CAP_FILE.read_text())
    except (OSError, ValueError):
        return 63


def drop_all() -> None:
    """Empty this process's bounding, inheritable and ambient capability sets
    and set no_new_privs: what it execs next runs without capabilities."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(_last_cap() + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = _Header(_LINUX_CAPABILITY_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) == 0:
        for half in data:
            half.inheritable = 0
        libc.capset(ctypes.byref(header), data)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def effective(pid: int | str = "self") -> int | None:
    """The effective capability set of a process (CapEff of /proc/<pid>/status)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return None
