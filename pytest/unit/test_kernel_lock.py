"""The shared kernel tree's lock: a second build waits, and says so."""
from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from sandbox.build import kernel


def test_a_build_that_must_wait_for_the_lock_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(kernel.paths, "cache_dir", lambda: tmp_path)
    with kernel.locked("kernel-tree"):  # free: taken at once, nothing said
        pass
    assert "waiting" not in capsys.readouterr().err

    taken: list[int] = []
    real_flock = fcntl.flock

    def held_once(fd: object, op: int) -> None:
        if op & fcntl.LOCK_NB and not taken:  # another build holds it, once
            taken.append(op)
            raise BlockingIOError
        real_flock(fd, op)

    monkeypatch.setattr(kernel.fcntl, "flock", held_once)
    with kernel.locked("kernel-tree"):
        pass
    err = capsys.readouterr().err
    assert "waiting for another build of the kernel sources to end" in err and "kernel-tree.lock" in err
