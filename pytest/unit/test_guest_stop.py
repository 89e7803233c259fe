"""Stopping a guest stops everything QEMU's process started: the sandbox
stops QEMU's whole process group, so a wrapper that forks the real QEMU
(`time qemu-system-...`) leaves nothing running. A shell stands in for
QEMU: it forks a child, says its pid, and waits."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandbox.base.machines import MACHINES
from sandbox.guest import qemu
from sandbox.guest.qemu import BootRequest, Guest


def alive(pid: int) -> bool:
    """Running, or stopped but not yet a zombie (a zombie has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return False
    return fields[0] != "Z"


def test_stop_ends_what_the_qemu_process_forked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qemu, "qemu_argv", lambda request: ["sh", "-c", "sleep 60 & echo $! >&2; wait"])
    request = BootRequest(MACHINES["x86_64"], Path("/k"), Path("/i"), "2038-01-19T03:13:50", "tcg", tmp_path)
    with Guest(request) as guest:
        log = tmp_path / "qemu.log"
        for _ in range(200):
            if log.read_text().strip():
                break
            time.sleep(0.01)
        child = int(log.read_text())
        assert alive(child)
        guest.stop(grace=5.0)
    for _ in range(200):  # the orphan is reaped by init (or a subreaper) after the signal
        if not alive(child):
            break
        time.sleep(0.01)
    assert not alive(child), f"the forked child {child} outlived the guest"
