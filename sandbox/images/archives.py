"""Tar and cpio archives read as a stream of members (sandbox/images/members.py).

    tar_members(stream)   POSIX, GNU and pax tar (Python's tarfile, stream mode)
    cpio_members(stream)  newc (070701, 070702) and odc (070707) cpio

Both read front to back once, so a compressed stream needs no seeking.
A malformed archive raises ValueError with what is wrong.
"""
from __future__ import annotations

import stat
import tarfile
from collections.abc import Iterator
from typing import IO

from sandbox.images.members import DIRECTORY, FILE, HARDLINK, OTHER, SYMLINK, Member

CPIO_TRAILER = "TRAILER!!!"
MAX_NAME = 4096  # PATH_MAX: a longer cpio name is a broken header
MAX_LINK_TARGET = 4096


def tar_members(stream: IO[bytes]) -> Iterator[Member]:
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            for info in archive:
                if info.isreg():
                    yield Member(info.name, FILE, info.mode, info.size, archive.extractfile(info))
                elif info.isdir():
                    yield Member(info.name, DIRECTORY, info.mode)
                elif info.issym():
                    yield Member(info.name, SYMLINK, target=info.linkname)
                elif info.islnk():
                    yield Member(info.name, HARDLINK, target=info.linkname)
                else:
                    yield Member(info.name, OTHER)
    except tarfile.TarError as err:
        raise ValueError(f"not a readable tar archive ({err})") from None


class _Part:
    """The next `size` bytes of a stream, as a file to read."""

    def __init__(self, stream: IO[bytes], size: int) -> None:
        self.stream = stream
        self.left = size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.stream.read(n)
        if len(data) < n:
            raise ValueError("the archive ends inside a file")
        self.left -= len(data)
        return data

    def drain(self) -> None:
        while self.left:
            self.read(1 << 20)


def _exactly(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if len(data) < n:
        raise ValueError("the archive ends inside a header")
    return data


def _pad(stream: IO[bytes], length: int, align: int) -> None:
    if align > 1 and length % align:
        _exactly(stream, align - length % align)


# magic -> (header length, field widths, base, alignment); field order below
CPIO_HEADERS = {
    b"070701": (110, (8,) * 13, 16, 4),
    b"070702": (110, (8,) * 13, 16, 4),
    b"070707": (76, (6, 6, 6, 6, 6, 6, 6, 11, 6, 11), 8, 1),
}
NEWC_FIELDS = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor", "devminor",
               "rdevmajor", "rdevminor", "namesize", "check")
ODC_FIELDS = ("dev", "ino", "mode", "uid", "gid", "nlink", "rdev", "mtime", "namesize", "filesize")


def _header(stream: IO[bytes]) -> tuple[dict[str, int], int]:
    magic = _exactly(stream, 6)
    if magic not in CPIO_HEADERS:
        raise ValueError(f"bad cpio header magic {magic!r}")
    length, widths, base, align = CPIO_HEADERS[magic]
    raw = _exactly(stream, length - 6)
    names = ODC_FIELDS if magic == b"070707" else NEWC_FIELDS
    fields, at = {}, 0
    for name, width in zip(names, widths):
        try:
            fields[name] = int(raw[at:at + width], base)
        except ValueError:
            raise ValueError(f"bad cpio header field {name}") from None
        at += width
    fields.setdefault("dev", fields.get("devmajor", 0) << 32 | fields.get("devminor", 0))
    return fields, align


def cpio_members(stream: IO[bytes]) -> Iterator[Member]:
    """Members in order; a file with several links (one inode, its data on
    one of its names) is the first name, then hard links to it."""
    first_name: dict[tuple[int, int], str] = {}
    while True:
        fields, align = _header(stream)
        head_length = 110 if align == 4 else 76
        if not 0 < fields["namesize"] <= MAX_NAME:
            raise ValueError(f"bad cpio name length {fields['namesize']}")
        name = _exactly(stream, fields["namesize"]).rstrip(b"\0").decode("utf-8", "surrogateescape")
        _pad(stream, head_length + fields["namesize"], align)
        if name == CPIO_TRAILER:
            return
        mode, size = fields["mode"], fields["filesize"]
        part = _Part(stream, size)
        if stat.S_ISREG(mode):
            key = (fields["dev"], fields["ino"])
            if fields["nlink"] > 1 and key in first_name:
                yield Member(name, HARDLINK, target=first_name[key])
                if size:  # newc keeps the data on the last name: it is the first's too
                    yield Member(first_name[key], FILE, mode & 0o7777, size, part)  # type: ignore[arg-type]  # part: a bounded reader of the stream
            else:
                if fields["nlink"] > 1:
                    first_name[key] = name
                yield Member(name, FILE, mode & 0o7777, size, part)  # type: ignore[arg-type]  # part: a bounded reader of the stream
        elif stat.S_ISDIR(mode):
            yield Member(name, DIRECTORY, mode & 0o7777)
        elif stat.S_ISLNK(mode):
            if size > MAX_LINK_TARGET:
                raise ValueError(f"{name}: symbolic link target of {size} bytes")
            yield Member(name, SYMLINK, target=part.read().decode("utf-8", "surrogateescape"))
        else:
            yield Member(name, OTHER)
        part.drain()
        _pad(stream, size, align)
