"""The combined initramfs files (probes + userlands) stay within a bound:
the least recently used go first, a reused one counts as used."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.build.userland import UserlandArtifact, guest_memory_mib, prune_combined, with_userlands
from sandbox.scenario.userlands import load_userlands


def made(folder: Path, name: str, size: int, age: float) -> Path:
    path = folder / f"{name}.cpio"
    path.write_bytes(b"\0" * size)
    stamp = 1_000_000.0 - age
    os.utime(path, (stamp, stamp))
    return path


def test_the_least_recently_used_go_until_the_rest_fit(tmp_path: Path) -> None:
    new, used, old, oldest = (made(tmp_path, n, 400, age) for n, age in
                              (("new", 0), ("used", 10), ("old", 20), ("oldest", 30)))
    (tmp_path / "x.cpio.123.tmp").write_bytes(b"1")  # another process's file being written: not ours
    removed = prune_combined(tmp_path, 1000)
    assert set(removed) == {old, oldest}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.cpio", "used.cpio", "x.cpio.123.tmp"]
    assert new.is_file() and used.is_file()


def test_the_newest_stays_even_alone_over_the_bound(tmp_path: Path) -> None:
    big = made(tmp_path, "big", 2000, 0)
    small = made(tmp_path, "small", 10, 5)
    assert prune_combined(tmp_path, 1000) == [small]
    assert big.is_file()


def test_a_reused_file_counts_as_just_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path / "cache"))
    (tmp_path / "initramfs.cpio").write_bytes(b"probes")
    (tmp_path / "userland.cpio").write_bytes(b"programs")
    artifact = UserlandArtifact(load_userlands().by_name["debian12-amd64"], "k1", tmp_path, tmp_path / "userland.cpio", ())
    combined = with_userlands(tmp_path / "initramfs.cpio", (artifact,))
    assert combined.read_bytes() == b"probesprograms"
    os.utime(combined, (1.0, 1.0))
    assert with_userlands(tmp_path / "initramfs.cpio", (artifact,)) == combined
    assert combined.stat().st_mtime > 1.0


def test_guest_memory_grows_with_the_userlands_it_carries() -> None:
    """One rule for scenario boots (sandbox/run/prepare.py) and the runtime audit's
    (sandbox/audit/runtime/boot.py): 256 MiB and 3 MiB per MiB added."""
    assert guest_memory_mib(0) is None and guest_memory_mib(2**20) is None
    assert guest_memory_mib(77 * 2**20) == 256 + 3 * 77
    assert guest_memory_mib(172 * 2**20 + 5) == 256 + 3 * 172
