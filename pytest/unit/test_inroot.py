"""rootfs/probes/inroot.c, the wrapper of every run step's program, run on
the host with / as the root (chroot to / changes nothing; it needs root, as
`just test` runs). What the guest relies on: the program found in PATH with
argv[0] as given, only the given environment, its exit status or signal
passed on, SIGKILL at the limit, and no child of its own left for the
program to wait for."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from rootfs_make import MAKE_ENV

from sandbox.base import paths

PATH = "PATH=/usr/bin:/bin"


@pytest.fixture(scope="module")
def inroot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.geteuid() != 0:
        pytest.skip("inroot changes root: run as root (as `just test` does)")
    out = tmp_path_factory.mktemp("inroot")
    result = subprocess.run(["make", "--no-print-directory", "-s", "-C", str(paths.REPO / "rootfs"), f"OUT={out}",
                             "PROBES=", "TOOLS=inroot"], capture_output=True, text=True, env=MAKE_ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return out / "tools" / "inroot"


def run(inroot: Path, *args: str, seconds: str = "20") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(inroot), "/", seconds, *args], capture_output=True, text=True, timeout=10,
                          check=False, env={"LEAKED": "yes", "PATH": os.environ.get("PATH", "")})


def test_the_program_is_found_in_path_and_named_as_given(inroot: Path) -> None:
    done = run(inroot, PATH, "--", "ls", "--no-such-option")
    assert done.returncode == 2
    assert done.stderr.startswith("ls: unrecognized option '--no-such-option'")


def test_only_the_given_environment_reaches_the_program(inroot: Path) -> None:
    done = run(inroot, PATH, "TZ=UTC0", "A=b=c", "--", "env")
    assert (done.returncode, done.stdout) == (0, "PATH=/usr/bin:/bin\nTZ=UTC0\nA=b=c\n")


@pytest.mark.parametrize("script, code", [("exit 3", 3), ("kill -TERM $$", -signal.SIGTERM), ("exit 0", 0)])
def test_the_programs_exit_status_or_signal_is_the_callers(inroot: Path, script: str, code: int) -> None:
    assert run(inroot, PATH, "--", "sh", "-c", script).returncode == code


def test_a_program_past_its_limit_is_killed(inroot: Path) -> None:
    assert run(inroot, PATH, "--", "sleep", "30", seconds="0.3").returncode == -signal.SIGKILL


def test_the_program_has_no_child_it_did_not_make(inroot: Path) -> None:
    """A shell's bare `wait` waits for every child: had the watcher been one,
    it would wait the full 20 s, past this run's 10 s bound."""
    done = run(inroot, PATH, "--", "sh", "-c", "sleep 0.1 & wait; echo waited")
    assert (done.returncode, done.stdout) == (0, "waited\n")


@pytest.mark.parametrize("args, code, message", [
    ((PATH, "--", "no-such-program"), 127, "inroot: 'no-such-program': No such file or directory"),
    ((), 125, "inroot: too few arguments"),
    ((PATH, "--"), 125, "inroot: no program after --"),
    ((PATH, "date"), 125, "inroot: before --, only NAME=VALUE"),
    (("=x", "--", "date"), 125, "inroot: before --, only NAME=VALUE"),
    ((PATH, "A=1", "--"), 125, "inroot: no program after --"),
])
def test_its_own_failures_are_one_line_and_env_s_codes(inroot: Path, args: tuple[str, ...], code: int,
                                                       message: str) -> None:
    done = run(inroot, *args)
    assert (done.returncode, done.stderr.splitlines()[0]) == (code, message)


def test_a_file_that_cannot_run_is_126(inroot: Path, tmp_path: Path) -> None:
    plain = tmp_path / "not-a-program"
    plain.write_text("data\n")
    plain.chmod(0o644)
    done = run(inroot, PATH, "--", str(plain))
    assert (done.returncode, done.stderr) == (126, f"inroot: '{plain}': Permission denied\n")


@pytest.mark.parametrize("seconds", ["0", "-1", "x", "1e9", ""])
def test_a_limit_that_is_not_a_positive_number_is_refused(inroot: Path, seconds: str) -> None:
    done = run(inroot, PATH, "--", "true", seconds=seconds)
    assert done.returncode == 125
    assert done.stderr.splitlines()[0] == "inroot: <seconds> must be a number above 0, at most 2147483"
