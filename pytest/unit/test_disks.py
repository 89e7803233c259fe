"""Disks: the [[disk]] table (sandbox/scenario/disks.py), QEMU disk arguments
(sandbox/guest/qemu.py), guest mounts (sandbox/run/plan.py), host images
(sandbox/build/disk_images.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from sandbox.build.disk_images import AttachedDisk, image_key, make_image, prepare_images
from sandbox.run.plan import mount_shell
from sandbox.base.fields import Where
from sandbox.scenario.disks import Disk, FILESYSTEMS, parse_disks
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.machines import MACHINES
from sandbox.scenario.catalogue import FLAVOURS, parse_catalogue
from sandbox.guest.qemu import BootRequest, disk_args, qemu_argv
from sandbox.run.plan import mount_commands, plan
from sandbox.scenario.model import ProbeStep
from sandbox.scenario.parser import parse_scenario

FILE = "scenarios/filetimes/case.toml"


def disks(text: str) -> tuple[Disk, ...]:
    import tomllib
    return parse_disks(tomllib.loads(textwrap.dedent(text)).get("disk", []), Where(FILE, "disk"))


def error(text: str) -> str:
    with pytest.raises(InputError) as caught:
        disks(text)
    return str(caught.value)


# --- the [[disk]] table -------------------------------------------------------


def test_a_disk_of_each_kind_with_defaults_filled_in() -> None:
    parsed = disks("""
        [[disk]]
        name = "tmp"
        fs = "tmpfs"
        [[disk]]
        name = "ext4-128"
        fs = "ext4"
        inode-size = 128
        [[disk]]
        name = "xfs-old"
        fs = "xfs"
        bigtime = false
        size-mib = 400
        [[disk]]
        name = "xfs"
        fs = "xfs"
    """)
    assert [(d.name, d.fs, d.size_mib, dict(d.options)) for d in parsed] == [
        ("tmp", "tmpfs", 16, {}),
        ("ext4-128", "ext4", 32, {"inode-size": 128}),
        ("xfs-old", "xfs", 400, {"bigtime": False}),
        ("xfs", "xfs", 320, {"bigtime": True}),
    ]
    assert [d.mount_point for d in parsed] == ["/mnt/tmp", "/mnt/ext4-128", "/mnt/xfs-old", "/mnt/xfs"]
    assert [d.has_image for d in parsed] == [False, True, True, True]


def test_mkfs_argv_comes_from_the_options() -> None:
    ext4_128, xfs_old, xfs_big = disks("""
        [[disk]]
        name = "a"
        fs = "ext4"
        inode-size = 128
        [[disk]]
        name = "b"
        fs = "xfs"
        bigtime = false
        [[disk]]
        name = "c"
        fs = "xfs"
        bigtime = true
    """)
    assert ext4_128.mkfs_argv() == ("mke2fs", "-q", "-F", "-t", "ext4", "-I", "128")
    assert xfs_old.mkfs_argv() == ("mkfs.xfs", "-q", "-f", "-m", "bigtime=0")
    assert xfs_big.mkfs_argv() == ("mkfs.xfs", "-q", "-f", "-m", "bigtime=1")


def test_no_disks_is_the_default() -> None:
    assert disks('title = "x"') == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('disk = { name = "a", fs = "ext4" }', f"{FILE}: disk: expected [[disk]] tables, got a table"),
        ('disk = ["a"]', f"{FILE}: disk[0]: expected a [[disk]] table, got a string"),
        ('[[disk]]\nfs = "ext4"', f"{FILE}: disk[0].name: missing (required)"),
        ('[[disk]]\nname = "a"', f"{FILE}: disk[0].fs: missing (required)"),
        ('[[disk]]\nname = "a"\nfs = "btrfs"',
         f"{FILE}: disk[0].fs: unknown filesystem 'btrfs' (known: ext4, tmpfs, xfs)"),
        ('[[disk]]\nname = "a"\nfs = 4', f"{FILE}: disk[0].fs: expected a string, got an integer"),
        ('[[disk]]\nname = "A disk"\nfs = "ext4"', f"{FILE}: disk[0].name: 'A disk' is not a disk name"),
        ('[[disk]]\nname = "abcdefghijklmnopqrstu"\nfs = "ext4"', f"{FILE}: disk[0].name: "),
        ('[[disk]]\nname = "a"\nfs = "ext4"\nbigtime = true',
         f"{FILE}: disk[0].bigtime: unknown key 'bigtime' for a ext4 disk "
         "(known: name, fs, size-mib, inode-size)"),
        ('[[disk]]\nname = "a"\nfs = "tmpfs"\ninode-size = 128',
         f"{FILE}: disk[0].inode-size: unknown key 'inode-size' for a tmpfs disk"),
        ('[[disk]]\nname = "a"\nfs = "ext4"\ninode-size = "128"',
         f"{FILE}: disk[0].inode-size: expected an integer, got a string"),
        ('[[disk]]\nname = "a"\nfs = "ext4"\ninode-size = true',
         f"{FILE}: disk[0].inode-size: expected an integer, got a boolean"),
        ('[[disk]]\nname = "a"\nfs = "ext4"\ninode-size = 100',
         f"{FILE}: disk[0].inode-size: 100 is not one of 128, 256, 512, 1024"),
        ('[[disk]]\nname = "a"\nfs = "xfs"\nbigtime = 1',
         f"{FILE}: disk[0].bigtime: expected a boolean, got an integer"),
        ('[[disk]]\nname = "a"\nfs = "xfs"\nsize-mib = 300',
         f"{FILE}: disk[0].size-mib: 300 MiB is outside 301..4096 for xfs"),
        ('[[disk]]\nname = "a"\nfs = "ext4"\nsize-mib = 32.5',
         f"{FILE}: disk[0].size-mib: expected an integer number of MiB, got a number"),
        ('[[disk]]\nname = "a"\nfs = "ext4"\n[[disk]]\nname = "a"\nfs = "xfs"',
         f"{FILE}: disk[1].name: disk 'a' already declared as disk[0]"),
    ],
)
def test_bad_disks_are_one_line_errors_naming_file_and_key(text: str, message: str) -> None:
    text = error(text)
    assert text.startswith(message)
    assert "\n" not in text


def test_every_kind_lists_its_own_keys_and_sane_sizes() -> None:
    for kind in FILESYSTEMS.values():
        assert kind.keys[:3] == ("name", "fs", "size-mib")
        assert kind.min_size_mib <= kind.size_mib
        assert (kind.mkfs is None) == (kind.package == "")


# --- the scenario's top-level `disk` key -------------------------------------

CATALOGUE = parse_catalogue('[probe.filetimes]\ncalls.stat = { seconds = "time", nsec = "number" }\n'
                            'flavours = ["time32-libc", "time64"]\n', "manifest.toml")
SCENARIO_HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
SCENARIO_STEP = '[[step]]\nphase = "p"\nprobe = "filetimes"\nargs = ["/mnt/e"]\n'


def test_a_scenario_carries_its_disks_in_order() -> None:
    text = SCENARIO_HEAD + ('[[disk]]\nname = "e"\nfs = "ext4"\ninode-size = 128\n'
                            '[[disk]]\nname = "t"\nfs = "tmpfs"\n') + SCENARIO_STEP
    scenario = parse_scenario(text, FILE, CATALOGUE, {"x86_64": FLAVOURS})
    assert [(d.name, d.fs) for d in scenario.disks] == [("e", "ext4"), ("t", "tmpfs")]


def test_a_bad_disk_in_a_scenario_names_the_scenario_file() -> None:
    text = SCENARIO_HEAD + '[[disk]]\nname = "e"\nfs = "ext4"\ninode-size = 127\n' + SCENARIO_STEP
    with pytest.raises(InputError, match=r"^scenarios/filetimes/case.toml: disk\[0\].inode-size: 127"):
        parse_scenario(text, FILE, CATALOGUE, {"x86_64": FLAVOURS})


def test_a_scenario_without_disks_has_none() -> None:
    scenario = parse_scenario(SCENARIO_HEAD + SCENARIO_STEP, FILE, CATALOGUE, {"x86_64": FLAVOURS})
    assert scenario.disks == ()


WITH_EXT4 = '[[disk]]\nname = "e"\nfs = "ext4"\n'
WITH_TMPFS = '[[disk]]\nname = "t"\nfs = "tmpfs"\n'


@pytest.mark.parametrize("disks, warp, expected", [
    ("", "", True),                    # time warp is the default
    (WITH_TMPFS, "", True),                 # a tmpfs is memory: no disk request to wait for
    (WITH_EXT4, "", False),                 # a disk image turns it off
    ("", "warp = false\n", False),    # and a scenario may say so itself
])
def test_time_warp_is_on_unless_a_disk_image_or_the_scenario_says_otherwise(
        disks: str, warp: str, expected: bool) -> None:
    scenario = parse_scenario(SCENARIO_HEAD + warp + disks + SCENARIO_STEP, FILE, CATALOGUE, {"x86_64": FLAVOURS})
    assert scenario.warp is expected


def test_time_warp_with_a_disk_image_is_refused_with_the_reason() -> None:
    with pytest.raises(InputError, match=r"^scenarios/filetimes/case.toml: warp: while QEMU serves a disk "
                                         r"request the guest is idle.*hung-task"):
        parse_scenario(SCENARIO_HEAD + "warp = true\n" + WITH_EXT4 + SCENARIO_STEP, FILE, CATALOGUE,
                       {"x86_64": FLAVOURS})


# --- QEMU arguments (pure) ----------------------------------------------------

IMAGES = (AttachedDisk("ext4-128", Path("/c/a/disk.img")), AttachedDisk("xfs", Path("/c/b,x/disk.img")))


def test_qemu_disk_args_attach_in_order_with_serials() -> None:
    assert disk_args(MACHINES["x86_64"].qemu, IMAGES) == [
        "-drive", "file=/c/a/disk.img,if=none,format=raw,id=disk0,snapshot=on",
        "-device", "virtio-blk-device,drive=disk0,serial=ext4-128",
        # a comma in a path is doubled, as QEMU's option parser wants
        "-drive", "file=/c/b,,x/disk.img,if=none,format=raw,id=disk1,snapshot=on",
        "-device", "virtio-blk-device,drive=disk1,serial=xfs",
    ]


def test_no_disks_no_arguments() -> None:
    assert disk_args(MACHINES["x86_64"].qemu, ()) == []


def test_every_machine_names_its_block_device_model() -> None:
    # every machine's virtio devices are virtio-mmio ones: no PCI bus (microvm, -M virt)
    assert {m.qemu.block_device for m in MACHINES.values()} == {"virtio-blk-device"}
    assert {m.qemu.net_device for m in MACHINES.values()} == {"virtio-net-device"}


def test_qemu_argv_carries_the_boot_request_disks(tmp_path: Path) -> None:
    base = BootRequest(MACHINES["x86_64"], Path("/k/vmlinux"), Path("/i/initramfs.cpio"),
                       "2038-01-19T03:13:50Z", "tcg", tmp_path)
    without = qemu_argv(base)
    with_disks = qemu_argv(BootRequest(**{**base.__dict__, "disks": IMAGES}))
    assert "-drive" not in without
    assert with_disks[:len(without)] == without
    assert with_disks[len(without):] == disk_args(MACHINES["x86_64"].qemu, IMAGES)


# --- mounting in the guest ----------------------------------------------------

EXT4, TMP = disks("""
    [[disk]]
    name = "ext4-128"
    fs = "ext4"
    inode-size = 128
    [[disk]]
    name = "scratch"
    fs = "tmpfs"
    size-mib = 8
""")


def test_a_tmpfs_is_mounted_from_memory() -> None:
    assert mount_shell(TMP) == "mkdir -p /mnt/scratch && mount -t tmpfs -o size=8m scratch /mnt/scratch"


def test_an_image_is_found_by_serial_and_mounted_with_its_type() -> None:
    shell = mount_shell(EXT4)
    assert '"$(cat "$d/serial" 2>/dev/null)" = ext4-128' in shell
    assert shell.endswith('mkdir -p /mnt/ext4-128 && mount -t ext4 "$dev" /mnt/ext4-128')


def _guest_sh() -> list[str]:
    busybox = shutil.which("busybox") or "/bin/busybox"
    return [busybox, "sh"] if Path(busybox).exists() else ["sh"]


@pytest.mark.parametrize("disk", [EXT4, TMP], ids=["image", "tmpfs"])
def test_mount_commands_are_valid_guest_shell(disk: Disk) -> None:
    checked = subprocess.run([*_guest_sh(), "-n", "-c", mount_shell(disk)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_the_serial_lookup_reports_a_missing_disk(tmp_path: Path) -> None:
    # Run only the lookup part against an empty /sys/block stand-in.
    lookup = mount_shell(EXT4).split("mkdir -p")[0].replace("/sys/block", str(tmp_path))
    done = subprocess.run([*_guest_sh(), "-c", lookup + "echo found $dev"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == "no block device with serial ext4-128"
    (tmp_path / "vdb").mkdir()
    (tmp_path / "vdb" / "serial").write_text("ext4-128")
    done = subprocess.run([*_guest_sh(), "-c", lookup + "echo found $dev"],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "found /dev/vdb")


def test_mounts_come_before_the_steps_and_must_succeed() -> None:
    step = ProbeStep(0, "p", "filetimes", ("time64",), ("/mnt/ext4-128",))
    commands = mount_commands((EXT4, TMP)) + plan((step,), FLAVOURS)
    assert [(c.phase, c.must_succeed) for c in commands] == [
        ("mount-ext4-128", True), ("mount-scratch", True), ("p", False)]
    assert commands[0].shell == mount_shell(EXT4)


# --- images on the host -------------------------------------------------------


def test_the_image_key_follows_argv_size_and_version() -> None:
    key = image_key(("mke2fs", "-I", "128"), 32, "mke2fs 1.47.0")
    assert key == image_key(("mke2fs", "-I", "128"), 32, "mke2fs 1.47.0")
    assert len({key, image_key(("mke2fs", "-I", "256"), 32, "mke2fs 1.47.0"),
                image_key(("mke2fs", "-I", "128"), 64, "mke2fs 1.47.0"),
                image_key(("mke2fs", "-I", "128"), 32, "mke2fs 1.46.6")}) == 4


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


needs_e2fsprogs = pytest.mark.skipif(not (shutil.which("mke2fs") and shutil.which("dumpe2fs")),
                                     reason="e2fsprogs is not installed (just deps)")


@needs_e2fsprogs
def test_an_ext4_image_is_made_once_with_the_inode_size_asked(cache: Path, tmp_path: Path) -> None:
    first = make_image(EXT4)
    assert not first.reused and first.path.is_file()
    assert first.path.stat().st_size == 32 * 1024 * 1024
    assert "128-byte inodes cannot handle dates beyond 2038" in first.mkfs_output
    header = subprocess.run(["dumpe2fs", "-h", str(first.path)], capture_output=True,
                            text=True, check=True).stdout
    assert any(line.split() == ["Inode", "size:", "128"] for line in header.splitlines())
    again = make_image(EXT4)
    assert again.reused and again.path == first.path
    assert list(cache.glob("disks/ext4-*/disk.img")) == [first.path]


@needs_e2fsprogs
def test_prepare_images_skips_tmpfs_and_records_every_disk(cache: Path, tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    attached = prepare_images((EXT4, TMP), evidence)
    assert [a.name for a in attached] == ["ext4-128"]
    record = json.loads((evidence / "disks.json").read_text())
    assert [r["name"] for r in record] == ["ext4-128", "scratch"]
    assert record[0]["mkfs"][:-1] == list(EXT4.mkfs_argv())
    assert record[0]["image"] == str(attached[0].image)
    assert "image" not in record[1]


def test_a_missing_mkfs_names_the_package(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(cache))  # nothing to find there
    monkeypatch.setattr("sandbox.build.disk_images.SBIN_DIRS", ())
    with pytest.raises(SandboxError, match="install the Debian package xfsprogs"):
        make_image(disks('[[disk]]\nname = "x"\nfs = "xfs"')[0])
