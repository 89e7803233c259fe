"""A firmware image rehearsed at runtime gives the same records whatever it
is packed as: a small root filesystem cut from the cached Debian 12 armhf
userland (dash, date, touch, sqlite3, their loader and libraries) packed with
Debian's own tools as each format sandbox/images/ reads, all rehearsed in one
boot (`just rehearse IMAGE...` without --static), every image's records held
to the folder's: path, build-id, static and runtime verdict. sqlite3 and dash
must break there (glibc refuses their 32-bit times), date must not.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from image_packers import pack

from sandbox.audit.corpus import cached_userland
from sandbox.audit.elf import read_elf
from sandbox.audit.runtime.audit import RuntimeOptions, audit_runtime

PROGRAMS = ("bin/dash", "bin/date", "bin/touch", "usr/bin/sqlite3")  # dash's command runs touch
LIBRARY_DIRS = ("lib/arm-linux-gnueabihf", "usr/lib/arm-linux-gnueabihf")
LOADER = "lib/ld-linux-armhf.so.3"
FORMATS = ("tar", "tar.gz", "tar.xz", "tar.zst", "cpio", "cpio.gz", "cpio.xz", "ext4", "squashfs")
BROKE, SAFE = ("bin/dash", "usr/bin/sqlite3"), ("bin/date",)


def _library(userland: Path, name: str) -> Path:
    return next(userland / d / name for d in LIBRARY_DIRS if (userland / d / name).exists())


def small_root(userland: Path, root: Path) -> Path:
    """PROGRAMS, bin/sh, the loader and every library they need, as files."""
    wanted, done = list(PROGRAMS), set()
    while wanted:
        path = wanted.pop()
        if path in done:
            continue
        done.add(path)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(userland / path, root / path)  # links followed: the library under its soname
        wanted += [_library(userland, lib).relative_to(userland).as_posix()
                   for lib in read_elf(userland / path).needed]
    shutil.copy(userland / LOADER, root / LOADER)
    os.symlink("dash", root / "bin/sh")
    (root / "tmp").mkdir()
    return root


def records(report: dict[str, Any], image: str) -> dict[str, tuple[str, str, str]]:
    return {a["origin"]["path"]: (a["build_id"], a["verdict"], a["runtime"]["verdict"])
            for a in report["audits"] if a["origin"]["input"] == image}


def test_every_image_format_gives_the_folders_runtime_verdicts(y2038_target: object, tmp_path: Path) -> None:
    userland = cached_userland("debian12-armhf")
    if userland is None:
        pytest.skip("the debian12-armhf userland is not cached (just build-all)")
    y2038_target("armhf")  # type: ignore[operator]  # built or reused once per session
    folder = small_root(userland, tmp_path / "root")
    images = {"folder": folder}
    for name in FORMATS:
        images[name] = pack(folder, name, tmp_path / f"image-{name.replace('.', '-')}", size="32M")
    report = audit_runtime([str(p) for p in images.values()], RuntimeOptions()).to_json()
    expected = records(report, str(folder))
    assert set(PROGRAMS) <= set(expected)
    assert all(expected[p][2] == "broke" for p in BROKE) and all(expected[p][2] == "safe" for p in SAFE)
    for name, image in images.items():
        assert records(report, str(image)) == expected, name
