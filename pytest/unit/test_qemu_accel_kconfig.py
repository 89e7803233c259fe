"""Pure host-side pieces: QEMU arguments, accelerator choice, kconfig checks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.guest import accel
from sandbox.build import kconfig
from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES
from sandbox.guest.qemu import BootRequest, qemu_argv


def request(tmp_path: Path, **changes: object) -> BootRequest:
    base = BootRequest(MACHINES["x86_64"], Path("/k/vmlinux"), Path("/i/initramfs.cpio"),
                       "2038-01-19T03:13:50Z", "tcg", tmp_path)
    return BootRequest(**{**base.__dict__, **changes})


def option(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]


def test_qemu_argv_places_the_clock_and_isolates_the_guest(tmp_path: Path) -> None:
    argv = qemu_argv(request(tmp_path))
    assert argv[0] == "qemu-system-x86_64"
    assert option(argv, "-rtc") == ["base=2038-01-19T03:13:50"]
    assert {"-no-reboot", "-nodefaults", "-no-user-config"} <= set(argv)
    assert option(argv, "-nic") == ["none"]
    assert option(argv, "-accel") == ["tcg"]
    append = option(argv, "-append")[0].split()
    assert {"console=ttyS0", "panic=-1", "y2038.agent=ttyS1"} <= set(append)


def test_time_warp_counts_instructions_and_puts_the_rtc_on_guest_time(tmp_path: Path) -> None:
    plain, warped = qemu_argv(request(tmp_path)), qemu_argv(request(tmp_path, warp=True))
    assert option(plain, "-icount") == []
    assert option(warped, "-icount") == ["shift=3,sleep=off"]
    assert option(warped, "-rtc") == ["base=2038-01-19T03:13:50,clock=vm"]
    plain_args, warped_args = (set(option(a, "-append")[0].split()) for a in (plain, warped))
    assert warped_args - plain_args == {"y2038.warp=1", "tsc=reliable"}  # x86: NO_HZ needs a trusted TSC
    arm = set(option(qemu_argv(request(tmp_path, warp=True, machine=MACHINES["armhf"])), "-append")[0].split())
    assert "tsc=reliable" not in arm and "sysctl.vm.compaction_proactiveness=0" in arm  # kcompactd's 500 ms


@pytest.mark.parametrize(("name", "expected"), [("x86_64", {"no_timer_check", "pty.legacy_count=0"}),
                                                ("i386", {"no_timer_check", "pty.legacy_count=0"}),
                                                ("armhf", {"pty.legacy_count=0"})])
def test_every_boot_skips_the_timer_check_and_the_legacy_ptys(tmp_path: Path, name: str,
                                                               expected: set[str]) -> None:
    for warp in (False, True):
        append = set(option(qemu_argv(request(tmp_path, warp=warp, machine=MACHINES[name])), "-append")[0].split())
        assert expected <= append and ("no_timer_check" in append) == (name != "armhf")


def test_every_boot_seeds_the_guest_random_pool(tmp_path: Path) -> None:
    """/init credits the seed (rootfs/probes/seedrng.c): 64 hex digits, the same on every boot."""
    seeds = [a for a in option(qemu_argv(request(tmp_path)), "-append")[0].split() if a.startswith("y2038.seed=")]
    assert len(seeds) == 1 and len(seeds[0].split("=")[1]) == 64
    int(seeds[0].split("=")[1], 16)


def test_qemu_argv_puts_console_and_agent_on_separate_ports(tmp_path: Path) -> None:
    argv = qemu_argv(request(tmp_path))
    assert option(argv, "-serial") == [f"file:{tmp_path / 'console.log'}"]
    assert "stdio,id=agent,signal=off" in option(argv, "-chardev")
    assert "isa-serial,chardev=agent" in option(argv, "-device")


def test_qemu_argv_passes_extra_kernel_arguments(tmp_path: Path) -> None:
    argv = qemu_argv(request(tmp_path, append=("y2038.extra=1",)))
    assert option(argv, "-append")[0].endswith("y2038.extra=1")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path))
    monkeypatch.delenv("Y2038_ACCEL", raising=False)
    monkeypatch.setattr(accel, "can_open_kvm", lambda: True)
    monkeypatch.setattr(accel, "host_identity", lambda qemu: "host-a qemu-7.2")
    return tmp_path


def test_kvm_is_chosen_only_after_a_handshake_and_remembered(cache: Path) -> None:
    calls: list[str] = []

    def handshake(name: str) -> bool:
        calls.append(name)
        return True

    assert accel.choose("qemu", True, handshake).name == "kvm"
    again = accel.choose("qemu", True, handshake)
    assert calls == ["kvm"]  # the second choice did not boot again
    assert again.name == "kvm" and again.reason.startswith("remembered")
    assert json.loads((cache / "accel.json").read_text())["host-a qemu-7.2"]["accel"] == "kvm"


def test_a_failed_handshake_means_tcg(cache: Path) -> None:
    choice = accel.choose("qemu", True, lambda name: False)
    assert choice.name == "tcg" and "handshake failed" in choice.reason


def test_no_handshake_without_usable_kvm(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accel, "can_open_kvm", lambda: False)
    def never(name: str) -> bool:
        raise AssertionError("must not boot")
    assert accel.choose("qemu", True, never).name == "tcg"
    assert accel.choose("qemu", False, never).name == "tcg"


def test_the_environment_forces_an_accelerator(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_ACCEL", "tcg")
    assert str(accel.choose("qemu", True, lambda n: True)) == "tcg (forced by Y2038_ACCEL)"
    monkeypatch.setenv("Y2038_ACCEL", "hvf")
    with pytest.raises(SandboxError, match="Y2038_ACCEL=hvf: must be one of kvm, tcg"):
        accel.choose("qemu", True, lambda n: True)


def test_kconfig_reports_requests_that_did_not_hold(tmp_path: Path) -> None:
    common = tmp_path / "common.config"
    common.write_text("CONFIG_TMPFS=y\n# CONFIG_SWAP is not set\nCONFIG_HZ=100\n")
    machine = tmp_path / "x86_64.config"
    machine.write_text("CONFIG_HZ=250\n")
    final = "CONFIG_HZ=250\nCONFIG_SWAP=y\n# CONFIG_TMPFS is not set\n"
    lost = kconfig.mismatches(kconfig.parse_fragments([common, machine]), final)
    assert [str(m) for m in lost] == [
        f"CONFIG_TMPFS=y (got n) from {common}:1",
        f"CONFIG_SWAP=n (got y) from {common}:2",
    ]


def test_kconfig_all_held() -> None:
    requests = kconfig.parse_config("CONFIG_A=y\n# CONFIG_B is not set\n", "f")
    assert kconfig.mismatches(requests, "CONFIG_A=y\n") == []


def test_boot_phases_run_from_qemu_start_through_each_console_mark_to_the_agent() -> None:
    from sandbox.guest.qemu import boot_phases
    marks = {"kernel": 10.2, "init": 10.9, "agent": 11.0}
    assert boot_phases(10.0, marks, 11.3) == pytest.approx({"qemu": 0.2, "kernel": 0.7, "init": 0.1, "agent": 0.3})
    # a boot that died in the kernel: the phases seen through, no more
    assert boot_phases(10.0, {"kernel": 10.2}, 0.0) == pytest.approx({"qemu": 0.2})
