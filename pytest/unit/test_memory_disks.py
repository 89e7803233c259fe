"""Userlands as memory disks: the images (sandbox/build/userland.py), where
QEMU puts them and what the kernel is told (sandbox/guest/qemu.py), how the
guest mounts them (sandbox/run/plan.py), which kernels serve them
(sandbox/scenario/needs.py, kernel-series/config/memory-disks.config)."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.base.machines import MACHINES
from sandbox.base.variants import VARIANTS
from sandbox.build.kconfig import parse_fragments
from sandbox.build.kernel import KernelRequest, fragment_paths
from sandbox.build.userland import image_command
from sandbox.guest.qemu import (MEMORY_DISKS_AT_MIB, BootRequest, MemoryRegion, memory_disk_args, memory_regions,
                                qemu_argv)
from sandbox.run.plan import userland_commands
from sandbox.scenario.needs import MEMORY_DISK_OPTIONS, serves_memory_disks

MIB = 2**20


def request(tmp_path: Path, *sizes: int) -> BootRequest:
    images = []
    for n, size in enumerate(sizes):
        image = tmp_path / f"u{n}.ext4"
        image.write_bytes(b"\0" * size)
        images.append(image)
    return BootRequest(MACHINES["x86_64"], Path("/k/vmlinux"), Path("/i/initramfs.cpio"),
                       "2038-01-19T03:13:50Z", "tcg", tmp_path, memory_disks=tuple(images))


def test_the_images_lie_one_after_the_other_in_reserved_ram(tmp_path: Path) -> None:
    req = request(tmp_path, 5 * MIB, 3 * MIB + 1)
    qemu, kernel, added = memory_disk_args(req)
    first, second = MEMORY_DISKS_AT_MIB, MEMORY_DISKS_AT_MIB + 6  # 5 MiB rounded up to 6
    assert memory_regions(req.machine.qemu, None, req.memory_disks) == (MemoryRegion(first, 6), MemoryRegion(second, 4))
    assert kernel == (f"memmap=6M${first}M", f"memmap=4M${second}M")
    assert qemu == ("-device", f"loader,file={tmp_path}/u0.ext4,addr={first * MIB:#x},force-raw=on",
                    "-device", f"loader,file={tmp_path}/u1.ext4,addr={second * MIB:#x},force-raw=on")
    assert added == 6 + 4


def test_the_guest_gets_the_disks_on_top_of_its_memory(tmp_path: Path) -> None:
    argv = qemu_argv(request(tmp_path, 5 * MIB))
    assert argv[len(argv) - argv[::-1].index("-m")] == str(256 + 6)  # the last -m wins
    assert f"memmap=6M${MEMORY_DISKS_AT_MIB}M" in argv[argv.index("-append") + 1]
    plain = qemu_argv(request(tmp_path))
    assert "loader" not in " ".join(plain) and "memmap" not in " ".join(plain)


def test_on_arm_the_disks_lie_above_the_kernels_memory(tmp_path: Path) -> None:
    """-M virt's RAM starts at 1 GiB and QEMU puts the initramfs 128 MiB into
    it: the disks go above the kernel's memory, which `mem=` keeps it to."""
    req = replace(request(tmp_path, 5 * MIB, 3 * MIB), machine=MACHINES["armhf"], memory_mib=300)
    qemu, kernel, added = memory_disk_args(req)
    assert memory_regions(req.machine.qemu, req.memory_mib, req.memory_disks) == (
        MemoryRegion(1024 + 300, 6), MemoryRegion(1024 + 306, 4))
    assert kernel == ("mem=300M", f"vmalloc={240 + 10}M") and added == 10
    assert f"addr={(1024 + 300) * MIB:#x}" in qemu[1] and f"addr={(1024 + 306) * MIB:#x}" in qemu[3]
    argv = qemu_argv(req)
    assert argv[argv.index("-m") + 1] == str(300 + 10)  # the disks end where the RAM does


@pytest.mark.parametrize(("machine", "vmalloc"), [("i386", [f"vmalloc={128 + 6 + 4}M"]), ("x86_64", [])])
def test_a_32_bit_kernel_gets_vmalloc_space_for_its_disks(tmp_path: Path, machine: str,
                                                          vmalloc: list[str]) -> None:
    """i386's phram maps each disk into vmalloc space (128 MiB by default):
    the boot asks for that much more; a 64-bit kernel has room."""
    req = replace(request(tmp_path, 5 * MIB, 3 * MIB), machine=MACHINES[machine])
    _, kernel, added = memory_disk_args(req)
    assert [arg for arg in kernel if arg.startswith("vmalloc=")] == vmalloc and added == 10
    assert not any(arg.startswith("vmalloc=") for arg in memory_disk_args(replace(req, memory_disks=()))[1])


def test_a_disk_userland_is_mapped_and_mounted_before_its_proc_dev_and_tmp() -> None:
    first, in_archive, second = userland_commands(
        ("old", "new", "other"), {"old": MemoryRegion(128, 6), "other": MemoryRegion(134, 4)})
    assert in_archive.shell.startswith("mount -t proc proc /userlands/new/proc")
    assert "phram" not in in_archive.shell
    shell = first.shell
    assert shell.startswith("echo old,128Mi,6Mi > /sys/module/phram/parameters/phram && ")
    assert shell.index("mount -t ext4 /dev/mtdblock0 /userlands/old") < shell.index("mount -t proc proc /userlands/old/proc")
    assert "mount -o bind /userlands/.old-initramfs/probes /userlands/old/probes" in shell
    assert "echo other,134Mi,4Mi > " in second.shell and "/dev/mtdblock1 /userlands/other" in second.shell
    assert all(c.must_succeed for c in (first, in_archive, second))


def test_the_mount_shell_runs_in_the_guest_shell() -> None:
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("no busybox (Debian: busybox-static) to check the guest's shell syntax")
    (command,) = userland_commands(("old",), {"old": MemoryRegion(128, 6)})
    checked = subprocess.run([busybox, "sh", "-n", "-c", command.shell], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize(("machine", "variant", "serves"), [
    ("x86_64", "series", True), ("x86_64", "strict", True),
    ("x86_64", "traced", False),  # no block layer
    ("x86_64", "pristine", False),
    ("i386", "series", True), ("i386", "strict", True),
    ("armhf", "series", True), ("armhf", "strict", True),
    ("armhf", "pristine", False),
])
def test_the_fragments_ask_for_memory_disks_where_the_kernel_can_serve_them(
        machine: str, variant: str, serves: bool) -> None:
    """What each kernel's fragments ask for; the build refuses a kernel whose
    .config does not honour them (sandbox/build/kconfig.py mismatches)."""
    asked = {r.option: r.value for r in parse_fragments(fragment_paths(KernelRequest(MACHINES[machine], variant)))}
    assert serves_memory_disks(asked) is serves
    assert VARIANTS[variant].has_disks or not serves


def test_only_built_in_options_serve() -> None:
    config = dict.fromkeys(MEMORY_DISK_OPTIONS, "y")
    assert serves_memory_disks(config)
    assert not serves_memory_disks({**config, "CONFIG_MTD_PHRAM": "m"})  # the guest loads no modules


def test_a_userland_image_keeps_its_files_and_times_past_2038(tmp_path: Path) -> None:
    if shutil.which("mke2fs") is None or shutil.which("debugfs") is None:
        pytest.skip("no mke2fs/debugfs (Debian: e2fsprogs)")
    root = tmp_path / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "hello").write_text("#!/bin/sh\necho hello\n")
    (root / "bin").symlink_to("usr/bin")
    image = tmp_path / "u.ext4"
    subprocess.run(image_command(root, image, 8, "debian12-amd64-long-name"), check=True)
    assert image.stat().st_size == 8 * MIB
    shown = subprocess.run(["debugfs", "-R", "cat /usr/bin/hello", str(image)], capture_output=True, text=True,
                           check=True).stdout
    assert shown == "#!/bin/sh\necho hello\n"
    link = subprocess.run(["debugfs", "-R", "stat /bin", str(image)], capture_output=True, text=True,
                          check=True).stdout
    assert 'Fast link dest: "usr/bin"' in link
    stats = subprocess.run(["debugfs", "-R", "stats", str(image)], capture_output=True, text=True,
                           check=True).stdout
    assert "Inode size:\t          256" in stats
    assert "has_journal" not in stats
    assert "Filesystem volume name:   debian12-amd64-l" in stats  # ext4 labels hold 16 bytes
