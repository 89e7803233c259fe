"""The initramfs's probes and tools (sandbox/build/initramfs.py _programs):
one multi-call binary per flavour, every probe and tool a symlink to it, as
rootfs/Makefile (MULTICALL=1) lays them out; a build that did not link a
name is refused, not shipped without it."""
from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES
from captured_results import fake_target as captured_target

from sandbox.run.prepare import _host_binaries
from sandbox.base.paths import REPO
from sandbox.build.initramfs import (HOST_BINARIES, MULTICALL, Busybox, HostFile, InitramfsArtifact, _entries,
                                     _host_entries, _Inputs, _programs, load_manifest)
from sandbox.scenario import suite
from sandbox.scenario.model import HwclockStep

MANIFEST = load_manifest()


def inputs(name: str) -> _Inputs:
    return _Inputs(MACHINES[name], MANIFEST, Busybox(Path("/bin/busybox"), "busybox-static"), "gcc 12")


def built_tree(root: Path, name: str) -> Path:
    """What `make MULTICALL=1` leaves in OUT for the machine."""
    machine = MACHINES[name]
    for flavour in machine.toolchain.flavours:
        (root / flavour).mkdir(parents=True)
        (root / flavour / MULTICALL).write_bytes(f"ELF {flavour}".encode())
        for probe in MANIFEST.catalogue.names():
            os.symlink(MULTICALL, root / flavour / probe)
    (root / "tools").mkdir()
    for tool in MANIFEST.catalogue.tools:
        os.symlink(f"../{machine.toolchain.tools_flavour}/{MULTICALL}", root / "tools" / tool)
    return root


@pytest.mark.parametrize("name", ["x86_64", "i386", "armhf"])
def test_one_binary_per_flavour_and_every_name_a_symlink_to_it(tmp_path: Path, name: str) -> None:
    machine = MACHINES[name]
    entries = {e.name: e for e in _programs(inputs(name), built_tree(tmp_path, name))}
    files = {n: e.data for n, e in entries.items() if stat.S_ISREG(e.mode)}
    assert files == {f"{MANIFEST.probes_dir}/{f}/{MULTICALL}": f"ELF {f}".encode() for f in machine.toolchain.flavours}
    links = {n: e.data.decode() for n, e in entries.items() if stat.S_ISLNK(e.mode)}
    for probe in MANIFEST.catalogue.probes:
        for flavour in machine.toolchain.flavours:
            if flavour in probe.flavours:
                assert links.pop(f"{MANIFEST.probes_dir}/{flavour}/{probe.name}") == MULTICALL
    for tool in MANIFEST.catalogue.tools:
        assert links.pop(f"{MANIFEST.tools_dir}/{tool}") == f"/{MANIFEST.probes_dir}/{machine.toolchain.tools_flavour}/{MULTICALL}"
    # the kernel starts /init by that name; the multicall runs probes/init.c
    assert links.pop("init") == f"/{MANIFEST.probes_dir}/{machine.toolchain.tools_flavour}/{MULTICALL}"
    assert links == {}


def test_a_name_the_build_left_a_plain_file_is_refused(tmp_path: Path) -> None:
    built = built_tree(tmp_path, "armhf")
    clock = built / "time64" / "clock"
    clock.unlink()
    clock.write_bytes(b"ELF a probe of its own")
    with pytest.raises(SandboxError, match="did not link .*time64/clock to multicall"):
        _programs(inputs("armhf"), built)


def test_the_host_binaries_are_an_archive_of_their_own(tmp_path: Path) -> None:
    """util-linux's hwclock and its glibc stay out of the initramfs (3.3 MiB
    the kernel would unpack at every boot) and go into a second archive."""
    host = tmp_path / "host"
    (host / "usr" / "sbin").mkdir(parents=True)
    (host / "usr" / "sbin" / "hwclock").write_bytes(b"ELF hwclock")
    files = (HostFile(host / "usr" / "sbin" / "hwclock"),)
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"ELF busybox")  # cannot run here: no applet links
    with_host = replace(inputs("x86_64"), busybox=Busybox(busybox, "busybox-static"), host_files=files)
    base = {e.name for e in _entries(with_host, "k", built_tree(tmp_path / "built", "x86_64"))}
    assert "bin/busybox" in base and "init" in base
    assert not any(name.endswith("hwclock") for name in base)
    extra = {e.name: e for e in _host_entries(with_host)}
    hwclock = files[0].name
    assert extra[hwclock].data == b"ELF hwclock" and stat.S_IMODE(extra[hwclock].mode) == 0o755
    assert hwclock.rsplit("/", 1)[0] in extra  # its folders come with it


def test_a_scenario_gets_the_host_binaries_only_when_a_step_runs_one(tmp_path: Path) -> None:
    archive = tmp_path / HOST_BINARIES
    archive.write_bytes(b"070701")
    target = replace(captured_target(), initramfs=InitramfsArtifact(tmp_path / "initramfs.cpio", "k"))
    hwclock = HwclockStep(0, 2147483640)
    scenario = suite.load(REPO / "scenarios" / "clock" / "rollover.toml")
    assert _host_binaries(target, scenario) == ()
    assert _host_binaries(target, replace(scenario, steps=(*scenario.steps, hwclock))) == (archive,)
    archive.unlink()  # a machine without host binaries: nothing to append
    assert _host_binaries(target, replace(scenario, steps=(hwclock,))) == ()
