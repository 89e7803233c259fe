"""`just system --kernel IMAGE --kernel-config CONFIG`: the user's kernel boots
a whole system only when it is for the system's machine and has what systemd
and the memory disk need; otherwise one line, before anything boots."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES
from sandbox.build.own_kernel import OwnKernel
from sandbox.system.rehearse import system_needs, system_target


def own(tmp_path: Path, machine: str, options: list[str]) -> OwnKernel:
    image, config = tmp_path / "zImage", tmp_path / "config"
    image.write_bytes(b"not booted here")
    config.write_text("".join(f"{o}=y\n" for o in options))
    return OwnKernel(image, config, machine, series=True, time32_calls=True)


def test_the_needs_are_read_from_the_system_fragments() -> None:
    needs = system_needs()
    assert {"CONFIG_CGROUPS", "CONFIG_OVERLAY_FS", "CONFIG_AUTOFS_FS", "CONFIG_MTD_PHRAM"} <= set(needs)


def test_a_kernel_for_another_machine_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"^debian12-armhf: an armhf system; the kernel .*zImage is for x86_64$"):
        system_target(MACHINES["armhf"], own(tmp_path, "x86_64", system_needs()), "debian12-armhf")


def test_a_kernel_without_what_systemd_needs_names_each_option(tmp_path: Path) -> None:
    kept = [o for o in system_needs() if o not in ("CONFIG_CGROUPS", "CONFIG_MTD_PHRAM")]
    with pytest.raises(SandboxError) as raised:
        system_target(MACHINES["armhf"], own(tmp_path, "armhf", kept), "debian12-armhf")
    line = str(raised.value)
    assert "\n" not in line
    assert line.startswith(f"{tmp_path / 'config'}: a kernel without CONFIG_CGROUPS, CONFIG_MTD_PHRAM:")
