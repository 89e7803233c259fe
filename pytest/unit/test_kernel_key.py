"""The kernel cache key: every input changes it, nothing else does."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandbox.base import paths
from sandbox.base.errors import InputError
from sandbox.build.kernel import KernelRequest, cache_key
from sandbox.build.kernel_source import read_series
from sandbox.base.machines import MACHINES


@pytest.fixture
def series(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "kernel-series"
    shutil.copytree(paths.KERNEL_SERIES / "config", folder / "config")
    (folder / "series").write_text("# none yet\n")
    monkeypatch.setattr(paths, "KERNEL_SERIES", folder)
    return folder


def key(variant: str = "series", version: str = "6.1.192-3") -> str:
    return cache_key(version, KernelRequest(MACHINES["x86_64"], variant))


def test_same_inputs_same_key(series: Path) -> None:
    assert key() == key()


def test_each_input_changes_the_key(series: Path) -> None:
    before = key()
    assert key(version="6.1.200-1") != before
    assert key(variant="pristine") != before
    (series / "config" / "common.config").write_text("CONFIG_PRINTK=y\n")
    after_fragment = key()
    assert after_fragment != before
    (series / "0001-a.patch").write_text("From: x\nSubject: [PATCH] a\n")
    (series / "series").write_text("0001-a.patch\n")
    assert key() != after_fragment


def test_comments_in_the_series_file_do_not_change_the_key(series: Path) -> None:
    before = key()
    (series / "series").write_text("# only comments\n\n")
    assert key() == before


def test_a_missing_patch_names_the_series_line(series: Path) -> None:
    (series / "series").write_text("# header\n0001-missing.patch\n")
    with pytest.raises(InputError, match=r"series: line 2: no patch file '0001-missing.patch'"):
        read_series()
