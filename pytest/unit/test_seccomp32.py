"""rootfs/probes/seccomp32.c, the seccomp filter a probe step runs `under`,
built for x86_64 and run on the host: its usage errors, the program it
execs, and that its filter leaves a 64-bit program's calls alone (on
x86_64 it matches only the i386 ABI's calls, AUDIT_ARCH_I386). What it does
to a 32-bit program's calls is measured in a guest:
scenarios/kernel/time32-seccomp.toml."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from rootfs_make import MAKE_ENV

from sandbox.base import paths

USAGE = "usage: seccomp32 log|deny|trap -- <program> [arg]..."


@pytest.fixture(scope="module")
def seccomp32(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seccomp32")
    result = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(paths.REPO / "rootfs"), f"OUT={out}",
                             "PROBES=", "TOOLS=seccomp32"], capture_output=True, text=True, env=MAKE_ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return out / "tools" / "seccomp32"


def run(seccomp32: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(seccomp32), *args], capture_output=True, text=True, timeout=10, check=False)


@pytest.mark.parametrize("args, message", [
    ((), "no action"),
    (("deny",), "expected '--' after the action"),
    (("deny", "date"), "expected '--' after the action"),
    (("deny", "--"), "no program"),
    (("kill", "--", "date"), "unknown action 'kill' (expected log, deny or trap)"),
])
def test_a_usage_error_is_one_line_and_exit_2(seccomp32: Path, args: tuple[str, ...], message: str) -> None:
    done = run(seccomp32, *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"seccomp32: {message}; {USAGE}\n")


def _filtered(seccomp32: Path, action: str, *argv: str) -> subprocess.CompletedProcess[str]:
    done = run(seccomp32, action, "--", *argv)
    if done.returncode == 3:
        assert done.stderr.startswith("seccomp32: ") and done.stderr.count("\n") == 1, done.stderr
        pytest.skip(f"no seccomp filter on this host: {done.stderr.strip()}")
    return done


@pytest.mark.parametrize("action", ["log", "deny", "trap"])
def test_a_64_bit_program_keeps_its_time_calls(seccomp32: Path, action: str) -> None:
    done = _filtered(seccomp32, action, "/bin/sh", "-c", "date +%s && sleep 0.01 && touch /dev/null && exit 7")
    assert done.returncode == 7, done.stderr
    assert done.stdout.strip().isdigit() and done.stderr == ""


def test_a_missing_program_is_127_and_one_line(seccomp32: Path) -> None:
    done = _filtered(seccomp32, "deny", "/no/such/program")
    assert (done.returncode, done.stderr) == (127, "seccomp32: cannot run '/no/such/program': No such file or directory\n")
