"""The kernel cache key: every input changes it, nothing else does."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandbox.base import paths
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.trees import TREES
from sandbox.build.kernel import KernelRequest, cache_key, tree_of
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


def test_comments_in_a_fragment_do_not_change_the_key_its_requests_do(series: Path) -> None:
    fragment = series / "config" / "common.config"
    before = key()
    fragment.write_text("# reworded\n\n" + fragment.read_text().replace("\n", "\n# a note\n"))
    assert key() == before
    fragment.write_text(fragment.read_text() + "# CONFIG_PRINTK is not set\n")
    assert key() != before


def test_comments_in_the_series_file_do_not_change_the_key(series: Path) -> None:
    before = key()
    (series / "series").write_text("# only comments\n\n")
    assert key() == before


def test_a_missing_patch_names_the_series_line(series: Path) -> None:
    (series / "series").write_text("# header\n0001-missing.patch\n")
    with pytest.raises(InputError, match=r"series: line 2: no patch file '0001-missing.patch'"):
        read_series()


# --- trees (sandbox/base/trees.py): 6.1's keys and folders as before them -----------
FIXED_FRAGMENTS = {"common.config": "CONFIG_PRINTK=y\n", "x86_64.config": "CONFIG_64BIT=y\n",
                   "series.config": "CONFIG_TIME32_SYSCALL_POLICY=y\n", "disks.config": "CONFIG_BLOCK=y\n",
                   "net.config": "CONFIG_NET=y\n", "devices.config": "CONFIG_MEDIA_SUPPORT=y\n",
                   "kunit.config": "CONFIG_KUNIT=y\n", "memory-disks.config": "CONFIG_MTD_PHRAM=y\n",
                   "strict.config": "# CONFIG_COMPAT_32BIT_TIME is not set\n", "trace.config": "CONFIG_FTRACE=y\n"}


@pytest.fixture
def fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernel-series/ of fixed contents: 6.1's patch at the top, 6.12's in 6.12/."""
    folder = tmp_path / "kernel-series"
    (folder / "config").mkdir(parents=True)
    for name, text in FIXED_FRAGMENTS.items():
        (folder / "config" / name).write_text(text)
    (folder / "0001-a.patch").write_text("From: x\nSubject: [PATCH] a\n")
    (folder / "series").write_text("0001-a.patch\n")
    (folder / "6.12").mkdir()
    (folder / "6.12" / "0001-a.patch").write_text("From: x\nSubject: [PATCH] a, ported\n")
    (folder / "6.12" / "series").write_text("# ported\n0001-a.patch\n")
    monkeypatch.setattr(paths, "KERNEL_SERIES", folder)
    return folder


def test_the_6_1_key_formula_is_the_one_before_trees(fixed: Path) -> None:
    """The values the code before trees (HEAD 4df6bf5's kernel.py) gives for
    these inputs (series and strict recomputed when devices.config, then
    x86_64's memory-disks.config, joined their fragments, pristine unchanged):
    a changed formula would rebuild every cached 6.1 kernel and mutant."""
    x86 = MACHINES["x86_64"]
    assert cache_key("6.1.192-3", KernelRequest(x86, "series")) == "57d848d7e2611acb"
    assert cache_key("6.1.192-3", KernelRequest(x86, "strict")) == "5e2f495c396c9e27"
    assert cache_key("6.1.192-3", KernelRequest(x86, "pristine")) == "d02f2ac37766ed2a"
    assert KernelRequest(x86) == KernelRequest(x86, "series", "6.1")


def test_a_6_12_key_reads_its_own_series_folder(fixed: Path) -> None:
    x86 = MACHINES["x86_64"]
    ours = cache_key("6.12.118-1~deb12u1", KernelRequest(x86, "series", "6.12"))
    old = cache_key("6.1.192-3", KernelRequest(x86, "series"))
    (fixed / "6.12" / "0001-a.patch").write_text("From: x\nSubject: [PATCH] a, ported again\n")
    assert cache_key("6.12.118-1~deb12u1", KernelRequest(x86, "series", "6.12")) != ours
    assert cache_key("6.1.192-3", KernelRequest(x86, "series")) == old  # 6.1 does not read 6.12/
    (fixed / "0001-a.patch").write_text("From: x\nSubject: [PATCH] b\n")
    assert cache_key("6.1.192-3", KernelRequest(x86, "series")) != old


def test_the_version_alone_tells_the_trees_apart(fixed: Path) -> None:
    """The pristine kernels of both trees have no series and the same
    fragments: the Debian version is what differs in their keys."""
    x86 = MACHINES["x86_64"]
    assert (cache_key("6.1.192-3", KernelRequest(x86, "pristine"))
            != cache_key("6.12.118-1~deb12u1", KernelRequest(x86, "pristine", "6.12")))


def test_each_tree_names_its_package_tarball_and_series() -> None:
    assert (TREES["6.1"].package, TREES["6.1"].tarball) == ("linux-source-6.1",
                                                             Path("/usr/src/linux-source-6.1.tar.xz"))
    assert TREES["6.12"].tarball == Path("/usr/src/linux-source-6.12.tar.xz")
    assert TREES["6.1"].series_folder == paths.KERNEL_SERIES
    assert TREES["6.12"].series_folder == paths.KERNEL_SERIES / "6.12"
    ported = [p.name for p in read_series(TREES["6.12"].series_folder).patches]
    # the same patches, ported: series v3's 28 and the sandbox's aid (aids/0001)
    assert ported == [p.name for p in read_series().patches] and len(ported) == 29
    with pytest.raises(SandboxError, match=r"unknown kernel tree '5.10' \(known: 6.1, 6.12\)"):
        tree_of(KernelRequest(MACHINES["x86_64"], "series", "5.10"))
