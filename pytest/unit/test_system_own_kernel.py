"""`just system --kernel IMAGE --kernel-config CONFIG`: the user's kernel boots
a whole system only when it is for the system's machine and has what systemd
and the memory disk need; otherwise one line, before anything boots."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES
from sandbox.build.own_kernel import OwnKernel
from sandbox.system.rehearse import SystemRequest, rehearse_system, system_needs, system_target


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


@pytest.mark.parametrize("start,end,at,line", [
    ("nonsense", "2038-01-19T06:00:00Z", "", "--start: not a time: 'nonsense'"),
    ("2038-01-19T03:00:00Z", "2038-01-19T03:20:00Z", "2038-01-19T03:10:00Z",
     "--at 2038-01-19T03:10:00Z is not after --end 2038-01-19T03:20:00Z"),
    ("2038-01-19T03:00:00Z", "2038-01-19T03:20:00Z", "2300-01-01T00:00:00Z",
     "--at 2300-01-01T00:00:00Z: past 2232-04-18T23:47:15Z"),
])
def test_an_impossible_span_or_step_is_one_line_before_anything(tmp_path: Path, start: str, end: str, at: str,
                                                                 line: str) -> None:
    with pytest.raises(SandboxError, match=re.escape(line)):
        rehearse_system(SystemRequest("debian13-armhf", tmp_path / "evidence", start, end, at=at))
    assert not (tmp_path / "evidence").exists()  # nothing built, nothing booted, no folder
