"""The initramfs's probes and tools (sandbox/build/initramfs.py _programs):
one multi-call binary per flavour, every probe and tool a symlink to it, as
rootfs/Makefile (MULTICALL=1) lays them out; a build that did not link a
name is refused, not shipped without it."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES
from sandbox.build.initramfs import MULTICALL, Busybox, _Inputs, _programs, load_manifest

MANIFEST = load_manifest()


def inputs(name: str) -> _Inputs:
    return _Inputs(MACHINES[name], MANIFEST, Busybox(Path("/bin/busybox"), "busybox-static"), "gcc 12")


def built_tree(root: Path, name: str) -> Path:
    """What `make MULTICALL=1` leaves in OUT for the machine."""
    machine = MACHINES[name]
    for flavour in machine.flavours:
        (root / flavour).mkdir(parents=True)
        (root / flavour / MULTICALL).write_bytes(f"ELF {flavour}".encode())
        for probe in MANIFEST.catalogue.names():
            os.symlink(MULTICALL, root / flavour / probe)
    (root / "tools").mkdir()
    for tool in MANIFEST.catalogue.tools:
        os.symlink(f"../{machine.tools_flavour}/{MULTICALL}", root / "tools" / tool)
    return root


@pytest.mark.parametrize("name", ["x86_64", "i386", "armhf"])
def test_one_binary_per_flavour_and_every_name_a_symlink_to_it(tmp_path: Path, name: str) -> None:
    machine = MACHINES[name]
    entries = {e.name: e for e in _programs(inputs(name), built_tree(tmp_path, name))}
    files = {n: e.data for n, e in entries.items() if stat.S_ISREG(e.mode)}
    assert files == {f"{MANIFEST.probes_dir}/{f}/{MULTICALL}": f"ELF {f}".encode() for f in machine.flavours}
    links = {n: e.data.decode() for n, e in entries.items() if stat.S_ISLNK(e.mode)}
    for probe in MANIFEST.catalogue.probes:
        for flavour in machine.flavours:
            if flavour in probe.flavours:
                assert links.pop(f"{MANIFEST.probes_dir}/{flavour}/{probe.name}") == MULTICALL
    for tool in MANIFEST.catalogue.tools:
        assert links.pop(f"{MANIFEST.tools_dir}/{tool}") == f"/{MANIFEST.probes_dir}/{machine.tools_flavour}/{MULTICALL}"
    # the kernel starts /init by that name; the multicall runs probes/init.c
    assert links.pop("init") == f"/{MANIFEST.probes_dir}/{machine.tools_flavour}/{MULTICALL}"
    assert links == {}


def test_a_name_the_build_left_a_plain_file_is_refused(tmp_path: Path) -> None:
    built = built_tree(tmp_path, "armhf")
    clock = built / "time64" / "clock"
    clock.unlink()
    clock.write_bytes(b"ELF a probe of its own")
    with pytest.raises(SandboxError, match="did not link .*time64/clock to multicall"):
        _programs(inputs("armhf"), built)
