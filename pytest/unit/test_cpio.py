"""sandbox.build.cpio: the newc archives it writes are what GNU cpio reads back."""
from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from sandbox.build.cpio import Entry, with_parents, write_newc

needs_cpio = pytest.mark.skipif(shutil.which("cpio") is None, reason="GNU cpio not installed (Debian: cpio)")

# Contents of every length modulo 4, so that both the name and the data
# padding are exercised.
CONTENTS = {f"data/len{n}": bytes(range(65, 65 + n)) for n in range(6)}


def sample_entries() -> list[Entry]:
    return with_parents([
        Entry.directory("bin"),
        Entry.file("bin/busybox", b"\x7fELF fake busybox\n", 0o755),
        Entry.symlink("bin/sh", "/bin/busybox"),
        Entry.symlink("sh-relative", "bin/busybox"),
        Entry.file("init", b"#!/bin/sh\necho up\n", 0o755),
        Entry.directory("tmp", 0o1777),
        Entry.file("etc/deep/nested/file.txt", b"nested\n", 0o600),
        Entry.file("empty", b""),
        *(Entry.file(name, data) for name, data in CONTENTS.items()),
    ])


def archive(entries: list[Entry]) -> bytes:
    buf = io.BytesIO()
    size = write_newc(entries, buf)
    data = buf.getvalue()
    assert size == len(data)
    return data


def gnu_cpio(args: list[str], data: bytes, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["cpio", *args], input=data, capture_output=True, cwd=cwd,
                            env={**os.environ, "TZ": "UTC", "LC_ALL": "C"}, check=False)
    assert result.returncode == 0, result.stderr.decode()
    return subprocess.CompletedProcess(result.args, result.returncode,
                                       result.stdout.decode(), result.stderr.decode())


def parse_newc(data: bytes) -> list[dict[str, object]]:
    """A minimal independent reader: every header field, name and data."""
    names = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor",
             "devminor", "rdevmajor", "rdevminor", "namesize", "check")
    members: list[dict[str, object]] = []
    pos = 0
    while True:
        assert pos % 4 == 0
        assert data[pos:pos + 6] == b"070701"
        fields = {n: int(data[pos + 6 + 8 * i: pos + 14 + 8 * i], 16) for i, n in enumerate(names)}
        pos += 110
        name = data[pos:pos + fields["namesize"] - 1].decode()
        assert data[pos + fields["namesize"] - 1] == 0
        pos += fields["namesize"]
        pos += -pos % 4
        body = data[pos:pos + fields["filesize"]]
        pos += fields["filesize"]
        pos += -pos % 4
        members.append({**fields, "name": name, "data": body})
        if name == "TRAILER!!!":
            assert pos == len(data)
            return members


def test_headers_are_root_owned_epoch_and_aligned() -> None:
    entries = sample_entries()
    members = parse_newc(archive(entries))
    assert [m["name"] for m in members] == [e.name for e in entries] + ["TRAILER!!!"]
    for member, entry in zip(members, entries):
        assert member["uid"] == member["gid"] == member["mtime"] == 0
        assert member["mode"] == entry.mode
        assert member["data"] == entry.data
        assert member["nlink"] == (2 if entry.is_dir else 1)
    inos = [m["ino"] for m in members[:-1]]
    assert len(set(inos)) == len(inos) and 0 not in inos


def test_same_entries_give_the_same_bytes() -> None:
    assert archive(sample_entries()) == archive(sample_entries())
    reordered = sample_entries()
    reordered[-1], reordered[-2] = reordered[-2], reordered[-1]
    assert archive(reordered) != archive(sample_entries())


@needs_cpio
def test_gnu_cpio_lists_names_types_and_modes() -> None:
    data = archive(sample_entries() + [Entry.directory("dev"), Entry.chardev("dev/console", 5, 1)])
    names = gnu_cpio(["-i", "-t"], data).stdout.splitlines()
    assert names == [e.name for e in sample_entries()] + ["dev", "dev/console"]

    listing = {line.split()[-1] if " -> " not in line else line.split()[-3]: line
               for line in gnu_cpio(["-i", "-t", "-v"], data).stdout.splitlines()}
    assert listing["bin"].startswith("drwxr-xr-x ")
    assert listing["tmp"].startswith("drwxrwxrwt ")
    assert listing["init"].startswith("-rwxr-xr-x ")
    assert listing["etc/deep/nested/file.txt"].startswith("-rw------- ")
    assert listing["bin/sh"].startswith("lrwxrwxrwx ") and listing["bin/sh"].endswith("bin/sh -> /bin/busybox")
    assert listing["dev/console"].startswith("crw------- ")
    assert " 5,   1 " in listing["dev/console"]
    for line in listing.values():
        assert " root     root " in line
        assert " Jan  1  1970 " in line


@needs_cpio
def test_gnu_cpio_extracts_contents_modes_and_symlinks(tmp_path: Path) -> None:
    entries = sample_entries()
    gnu_cpio(["-i", "-d", "--no-absolute-filenames"], archive(entries), cwd=tmp_path)

    assert (tmp_path / "init").read_bytes() == b"#!/bin/sh\necho up\n"
    assert stat.S_IMODE((tmp_path / "init").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "etc/deep/nested/file.txt").stat().st_mode) == 0o600
    assert (tmp_path / "empty").read_bytes() == b""
    for name, content in CONTENTS.items():
        assert (tmp_path / name).read_bytes() == content
    assert os.readlink(tmp_path / "bin/sh") == "/bin/busybox"
    assert os.readlink(tmp_path / "sh-relative") == "bin/busybox"
    assert (tmp_path / "sh-relative").read_bytes() == b"\x7fELF fake busybox\n"
    assert (tmp_path / "tmp").is_dir()
    extracted = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert extracted == sorted(e.name for e in entries)


@needs_cpio
def test_large_binary_file_round_trips(tmp_path: Path) -> None:
    blob = os.urandom(300_001)
    gnu_cpio(["-i", "-d"], archive([Entry.file("blob", blob, 0o755)]), cwd=tmp_path)
    assert (tmp_path / "blob").read_bytes() == blob


def test_with_parents_inserts_missing_directories_first() -> None:
    entries = with_parents([
        Entry.file("a/b/c/file", b"x"),
        Entry.file("a/b/other", b"y"),
        Entry.symlink("z", "a"),
    ])
    assert [e.name for e in entries] == ["a", "a/b", "a/b/c", "a/b/c/file", "a/b/other", "z"]
    assert all(e.mode == stat.S_IFDIR | 0o755 for e in entries[:3])


def test_refuses_a_child_before_its_parent() -> None:
    with pytest.raises(ValueError, match="parent directory bin must come first"):
        archive([Entry.symlink("bin/sh", "/bin/busybox")])
    with pytest.raises(ValueError, match="parent directory"):
        archive([Entry.file("bin", b"not a dir"), Entry.file("bin/sh", b"")])


def test_refuses_duplicates_before_writing_anything() -> None:
    buf = io.BytesIO()
    with pytest.raises(ValueError, match="duplicate cpio entry: init"):
        write_newc([Entry.file("init", b"1"), Entry.file("init", b"2")], buf)
    assert buf.getvalue() == b""


@pytest.mark.parametrize("name", ["", "/init", "a//b", "a/../b", "./init", "dir/", "TRAILER!!!"])
def test_refuses_unclean_names(name: str) -> None:
    with pytest.raises(ValueError):
        Entry.file(name, b"")


def test_refuses_inconsistent_entries() -> None:
    with pytest.raises(ValueError, match="cannot carry data"):
        Entry(name="d", mode=stat.S_IFDIR | 0o755, data=b"x")
    with pytest.raises(ValueError, match="needs a target"):
        Entry(name="l", mode=stat.S_IFLNK | 0o777)
    with pytest.raises(ValueError, match="device number"):
        Entry(name="f", mode=stat.S_IFREG | 0o644, rdev=(1, 3))
    with pytest.raises(ValueError, match="unknown file type"):
        Entry(name="f", mode=0o644)


def test_device_node_needs_no_privileges() -> None:
    console = Entry.chardev("console", 5, 1)
    (member, _trailer) = parse_newc(archive([console]))
    assert stat.S_ISCHR(member["mode"]) and stat.S_IMODE(member["mode"]) == 0o600
    assert (member["rdevmajor"], member["rdevminor"]) == (5, 1)
    assert member["filesize"] == 0
    assert console.target is None and Entry.symlink("sh", "busybox").target == "busybox"


def test_a_directory_carries_the_mtime_it_names() -> None:
    entries = [Entry.directory("stamps", mtime=2**31), Entry.directory("stamps/last", mtime=2**32 - 1)]
    assert [m["mtime"] for m in parse_newc(archive(entries))] == [2**31, 2**32 - 1, 0]


@needs_cpio
def test_gnu_cpio_reads_an_mtime_past_2038(tmp_path: Path) -> None:
    gnu_cpio(["-i", "-d", "--preserve-modification-time"],
             archive([Entry.directory("after", mtime=4102444800)]), cwd=tmp_path)
    assert (tmp_path / "after").stat().st_mtime == 4102444800  # 2100-01-01T00:00:00Z


@pytest.mark.parametrize("mtime", [-1, 2**32])
def test_refuses_an_mtime_newc_cannot_hold(mtime: int) -> None:
    with pytest.raises(ValueError, match="32 unsigned bits"):
        Entry.directory("d", mtime=mtime)
