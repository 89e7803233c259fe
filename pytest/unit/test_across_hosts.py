"""The suite across hosts (docs/across-hosts.md): `just across`'s command, and
a real run of a few unit tests on a second "host", an sshd of the test's own
on a loopback port (no boot)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loopback_sshd import loopback_sshd, unavailable
from sandbox.app.across import Across, Host, absolute_args, command_for, parse_host, pytest_argv, tx_spec
from sandbox.app.cli import parser
from sandbox.base.errors import InputError
from sandbox.base.paths import REPO

SELECTION = ["pytest/unit/test_timefmt.py", "pytest/unit/test_cpio.py::test_same_entries_give_the_same_bytes"]


def test_the_gateway_spec_and_the_copy() -> None:
    plan = Across((Host("lab2"), Host("root@10.0.0.7", 2)), "/srv/y2038", Path("/tmp/cfg"), Path("/work/main"))
    assert tx_spec(plan, plan.hosts[0]) == ("ssh=lab2//ssh_config=/tmp/cfg//python=mkdir -p /srv/y2038/main/pytest"
                                            " && env PYTHONPATH=/srv/y2038/main:/srv/y2038/main/pytest"
                                            " /usr/bin/python3//chdir=/srv/y2038")
    spaced = tx_spec(Across((Host("h"),), "y2038 runs", None, Path("/work/main")), Host("h"))
    assert spaced == ("ssh=h//python=mkdir -p 'y2038 runs/main/pytest' && env "
                      "PYTHONPATH='y2038 runs/main:y2038 runs/main/pytest' /usr/bin/python3//chdir=y2038 runs")
    assert tx_spec(plan, plan.hosts[1]).startswith("2*ssh=root@10.0.0.7//")
    argv = pytest_argv(plan, ["-k", "rollover"], REPO)
    assert argv[argv.index("-c") + 1] == "/work/main/pytest/pytest.ini" and "-d" in argv
    assert argv.count("--tx") == 2 and argv[argv.index("--rsyncdir") + 1] == "/work/main"
    assert "--rsyncignore=/work/main/results" in argv and "--rsyncignore=/work/main/rootfs/build" in argv
    assert argv[-2:] == ["-k", "rollover"]


def test_every_other_argument_goes_to_pytest() -> None:
    options, rest = parser().parse_known_args(["across", "--host", "lab2", "-k", "rollover", "--host", "2*lab3",
                                               "pytest/unit", "--machine", "armhf", "--dir", "/srv/y"])
    argv = command_for(options, rest, REPO)
    assert [argv[i + 1].split("//")[0] for i, arg in enumerate(argv) if arg == "--tx"] == ["ssh=lab2", "2*ssh=lab3"]
    assert all(spec.endswith("//chdir=/srv/y") for spec in argv if "ssh=" in spec)
    assert argv[-5:] == ["-k", "rollover", f"{REPO}/pytest/unit", "--machine", "armhf"]


def test_local_paths_become_absolute_for_xdist_to_relocate() -> None:
    assert absolute_args([*SELECTION, "-k", "not slow", "--machine", "x86_64", "no/such.py"], REPO) == [
        f"{REPO}/pytest/unit/test_timefmt.py", f"{REPO}/pytest/unit/test_cpio.py::test_same_entries_give_the_same_bytes",
        "-k", "not slow", "--machine", "x86_64", "no/such.py"]


@pytest.mark.parametrize("text", ["-oProxyCommand=touch pwned", "host;touch pwned", "a b", "0*host", "x*host", ""])
def test_a_host_is_a_name_ssh_takes_never_an_option(text: str) -> None:
    with pytest.raises(InputError):
        parse_host(text)
    assert parse_host("3*root@lab-2.example") == Host("root@lab-2.example", 3)


def test_a_remote_folder_cannot_break_the_spec() -> None:
    with pytest.raises(InputError):
        pytest_argv(Across((Host("h"),), "/srv//x"), [], REPO)


def test_a_few_unit_tests_run_on_a_second_host_over_ssh(tmp_path: Path) -> None:
    """`just across`'s command with the loopback host, into a folder that
    does not exist yet (a fresh host): the tests pass, and they ran in the
    host's copy of the repository, whose results are its own."""
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    remote = tmp_path / "fresh" / "remote"
    local_results = tmp_path / "local-results"
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}", Y2038_RESULTS=str(local_results))
    env.pop("Y2038_SESSION_RESULTS", None)  # this session's own folder is not the controller's
    with loopback_sshd(tmp_path / "sshd") as host:
        proc = subprocess.run([sys.executable, "-m", "sandbox", "across", "--ssh-config", str(host.ssh_config),
                               "--dir", str(remote), "--host", host.alias, *SELECTION],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        sshd_log = host.log.read_text(errors="replace")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    passed = re.search(r"(\d+) passed", out)
    assert passed and int(passed.group(1)) >= 10, out
    assert "Accepted publickey for root from 127.0.0.1" in sshd_log
    # the worker ran the host's copy: its plugin made its results folder there
    named = re.search(rf"gw0 on ssh={host.alias} \(host [^)]+\): its results are there, in (\S+)", out)
    assert named, out
    remote_results = Path(named.group(1))
    assert remote_results.parent == remote / REPO.name / "results" and remote_results.is_dir()
    assert (remote / REPO.name / "sandbox" / "app" / "across.py").is_file()
    assert not (remote / REPO.name / "results").joinpath("..", "rootfs", "build").exists()
    # the controller's own results (junit.xml) stay here
    assert list(local_results.glob("*-pytest/junit.xml"))
    assert not any(p.is_relative_to(remote) for p in local_results.rglob("*"))
