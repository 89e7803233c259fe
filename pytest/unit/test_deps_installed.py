"""Which listed packages dpkg reports as installed (sandbox/build/deps.py)."""
from __future__ import annotations

import shutil

import pytest

from sandbox.build import deps

STATUS = """ii |bc|amd64
ii |linux-libc-dev|i386
ii |python3-ply|all
rc |xfsprogs|amd64
iU |ccache|amd64
hi |flex|amd64
"""


@pytest.mark.parametrize("name, installed", [
    ("bc", True), ("bc:amd64", True),  # native: with or without its architecture
    ("python3-ply", True), ("python3-ply:all", True),
    ("linux-libc-dev:i386", True), ("linux-libc-dev", False),  # only the foreign one is there
    ("xfsprogs", False),  # removed, its configuration kept
    ("ccache", False),  # unpacked, not configured
    ("flex", True),  # installed and held
    ("qemu-user", False),  # unknown to dpkg
])
def test_installed_in(name: str, installed: bool) -> None:
    assert (name in deps.installed_in(STATUS, "amd64")) is installed


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian host")
def test_missing_asks_dpkg_and_keeps_the_list_order() -> None:
    absent = "no-such-package-y2038-sandbox"
    assert deps.missing(["dpkg", absent, "coreutils", f"{absent}-2"]) == [absent, f"{absent}-2"]
    assert deps.missing([]) == []
