"""Which listed packages dpkg reports as installed (sandbox/build/deps.py)."""
from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox.base.machines import ARMHF, X86_64
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


class FakeApt:
    """subprocess.run for apt-get: the exit codes it answers in turn, and the
    command lines it was given."""

    def __init__(self, codes: list[int]) -> None:
        self.codes, self.argvs = codes, []  # type: list[int], list[list[str]]

    def __call__(self, argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        self.argvs.append(argv)
        return subprocess.CompletedProcess(argv, self.codes.pop(0), "", "")


UPDATE, NATIVE = ["apt-get", "update", "-q"], ["apt-get", "update", "-q", "-o", "APT::Architectures=amd64"]


@pytest.mark.parametrize("codes, argvs, warned", [
    ([0], [UPDATE], ""),
    ([100, 0], [UPDATE] * 2, ""),  # a mirror mid-sync, synced by the second try
    # never: each repository's native index alone, then the others once more
    ([100, 100, 100, 0, 0], [UPDATE] * 3 + [NATIVE, UPDATE], "failed (exit 100) 3 times; fetching each"),
    ([100, 100, 100, 0, 100], [UPDATE] * 3 + [NATIVE, UPDATE], "going on with the package indexes"),
])
def test_update_tries_again_then_fetches_the_native_indexes_alone(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        codes: list[int], argvs: list[list[str]], warned: str) -> None:
    apt, pauses = FakeApt(codes), list[float]()
    monkeypatch.setattr(deps.subprocess, "run", apt)
    monkeypatch.setattr(deps, "_native", lambda: "amd64")
    monkeypatch.setattr(deps.time, "sleep", pauses.append)
    deps._update({})
    assert apt.argvs == argvs and apt.codes == []
    assert pauses == list(deps.APT_PAUSES[:min(len(argvs), 3) - 1])
    err = capsys.readouterr().err
    assert (warned in err) if warned else "warning" not in err


@pytest.mark.parametrize("codes, error", [
    ([0, 100, 0], None),  # update, a download cut, then the install again
    ([0, 100, 100, 100], "'apt-get install -y -q --no-install-recommends absent-package' failed 3 times"),
])
def test_install_tries_again_then_names_what_failed(monkeypatch: pytest.MonkeyPatch, codes: list[int],
                                                     error: str | None) -> None:
    apt, installs = FakeApt(codes), len(codes) - 1
    monkeypatch.setattr(deps.subprocess, "run", apt)
    monkeypatch.setattr(deps.time, "sleep", lambda _: None)
    monkeypatch.setattr(deps, "missing", lambda names: ["absent-package"])
    monkeypatch.setattr(deps, "_added_architectures", lambda: {"i386", "armhf"})
    monkeypatch.setattr(deps.os, "geteuid", lambda: 0)
    if error is None:
        assert deps.ensure(["absent-package"]) == ["absent-package"]
    else:
        with pytest.raises(deps.SandboxError, match=error):
            deps.ensure(["absent-package"])
    assert apt.argvs[1:] == [["apt-get", "install", "-y", "-q", "--no-install-recommends", "absent-package"]] * installs
    assert apt.codes == []


def test_cflags32_adds_the_unpacked_asm_headers() -> None:
    """x86's -m32 gets linux-libc-dev:i386's headers from the cache, so the
    host needs no i386 package of its own; armhf's cross gcc has its own."""
    flags = shlex.split(deps.cflags32(X86_64))
    assert flags[:2] == ["-m32", "-isystem"] and len(flags) == 3
    assert (Path(flags[2]) / "asm" / "unistd_32.h").is_file()
    assert deps.cflags32(ARMHF) == ""
