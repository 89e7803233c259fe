"""The system image's host side: dpkg's database as `dpkg --unpack` leaves it,
merged /usr, the configuration's upper layer laid over the tree, and the
checks of the user's root filesystem (no boot)."""
from __future__ import annotations

import io
import tarfile

import pytest

from sandbox.base.errors import SandboxError
from sandbox.system import dpkgdb, inputs, tree

LISTING = """drwxr-xr-x root/root         0 2023-01-01 00:00 ./
drwxr-xr-x root/root         0 2023-01-01 00:00 ./usr/bin/
-rwxr-xr-x root/root     12345 2023-01-01 00:00 ./usr/bin/cron
lrwxrwxrwx root/root         0 2023-01-01 00:00 ./usr/sbin/cron -> ../bin/cron
-rw-r--r-- root/root       100 2023-01-01 00:00 ./etc/cron.d/with space
"""


def test_list_paths_as_dpkg_keeps_them():
    assert dpkgdb.list_paths(LISTING) == ("/.", "/usr/bin", "/usr/bin/cron", "/usr/sbin/cron",
                                          "/etc/cron.d/with space")


def test_status_paragraph_unpacked_with_new_conffiles():
    package = dpkgdb.Unpacked("Package: cron\nVersion: 3.0pl1-162\nArchitecture: armhf\nMulti-Arch: foreign\n",
                              (), ("/etc/crontab",))
    assert dpkgdb.status_paragraph(package) == ("Package: cron\nStatus: install ok unpacked\nVersion: 3.0pl1-162\n"
                                                "Architecture: armhf\nMulti-Arch: foreign\n"
                                                "Conffiles:\n /etc/crontab newconffile\n")
    assert package.info_name == "cron"
    assert dpkgdb.Unpacked("Package: libc6\nArchitecture: armhf\nMulti-Arch: same\n", (), ()).info_name \
        == "libc6:armhf"


def test_merge_usr_moves_folders_and_leaves_a_clash(tmp_path):
    for path in ("bin/ls", "usr/bin/cat", "lib/arm/libc.so", "usr/lib/arm/libm.so", "sbin/init", "usr/sbin/init"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(path)
    assert tree.merge_usr(tmp_path) == ["bin", "lib"]
    assert (tmp_path / "bin").is_symlink() and (tmp_path / "bin" / "ls").read_text() == "bin/ls"
    assert sorted(p.name for p in (tmp_path / "usr" / "lib" / "arm").iterdir()) == ["libc.so", "libm.so"]
    assert not (tmp_path / "sbin").is_symlink()  # init in both: left as it is


def _tar(entries: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return out.getvalue()


def test_apply_upper_replaces_adds_and_whites_out(tmp_path):
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_text("old")
    (root / "etc" / "gone.conf").write_text("x")
    (root / "etc" / "crontab.dpkg-new").write_text("new")
    passwd = tarfile.TarInfo("./etc/passwd")
    passwd.size = 3
    whiteout = tarfile.TarInfo("./etc/gone.conf")
    whiteout.type, whiteout.devmajor, whiteout.devminor = tarfile.CHRTYPE, 0, 0
    renamed = tarfile.TarInfo("./etc/crontab.dpkg-new")
    renamed.type, renamed.devmajor, renamed.devminor = tarfile.CHRTYPE, 0, 0
    crontab = tarfile.TarInfo("./etc/crontab")
    crontab.size = 3
    (tmp_path / "upper.tar.gz").write_bytes(_tar([(passwd, b"new"), (whiteout, b""), (renamed, b""),
                                                  (crontab, b"new")]))
    assert tree.apply_upper(root, tmp_path / "upper.tar.gz") == 4
    assert (root / "etc" / "passwd").read_text() == "new"
    assert sorted(p.name for p in (root / "etc").iterdir()) == ["crontab", "passwd"]


def _elf(machine: int) -> bytes:
    return b"\x7fELF\x01\x01\x01" + b"\0" * 11 + machine.to_bytes(2, "little") + b"\0" * 40


def test_check_root_follows_links_and_reads_the_machine(tmp_path):
    (tmp_path / "lib" / "systemd").mkdir(parents=True)
    (tmp_path / "lib" / "systemd" / "systemd").write_bytes(_elf(40))
    (tmp_path / "sbin").mkdir()
    (tmp_path / "sbin" / "init").symlink_to("/lib/systemd/systemd")
    found = inputs.check_root(tmp_path, tmp_path)
    assert (found.arch, found.init) == ("armhf", "/lib/systemd/systemd")


@pytest.mark.parametrize("make,message", [
    (lambda root: None, "not a root filesystem (no /sbin/init)"),
    (lambda root: (root / "sbin").mkdir() or (root / "sbin" / "init").write_text("#!/bin/sh\n"),
     "/sbin/init is not an ELF program"),
    (lambda root: (root / "sbin").mkdir() or (root / "sbin" / "init").write_bytes(_elf(183)),
     "/sbin/init is for e_machine 183, which no machine here boots"),
])
def test_bad_roots_are_one_line_naming_the_image(tmp_path, make, message):
    make(tmp_path)
    with pytest.raises(SandboxError) as err:
        inputs.check_root(tmp_path, tmp_path)
    assert str(err.value).startswith(f"{tmp_path}: {message}")


def test_checksum_of_a_tree_sees_a_change(tmp_path):
    (tmp_path / "a").write_text("1")
    before = inputs.checksum(tmp_path)
    assert inputs.checksum(tmp_path) == before
    (tmp_path / "a").write_text("2")
    assert inputs.checksum(tmp_path) != before
