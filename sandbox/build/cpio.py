"""A pure-Python writer for "newc" (SVR4, magic 070701) cpio archives.

This is the format the kernel unpacks as an initramfs
(Documentation/driver-api/early-userspace/buffer-format.rst). Every entry is
owned by root (uid/gid 0) with mtime 0 unless the entry names one (newc's
8 hex digits: 1970 to 2106), inode numbers are given in order, so the same
entries always give the same bytes. Device nodes are plain entries:
no privileges are needed to write /dev/console.
"""
from __future__ import annotations

import stat
from dataclasses import dataclass
from typing import BinaryIO, Iterable

MAGIC = b"070701"
TRAILER = "TRAILER!!!"
_MAX_FIELD = 0xFFFFFFFF
_TYPES = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symlink",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFIFO: "fifo",
}


@dataclass(frozen=True)
class Entry:
    """One archive member.

    name:  path inside the archive, relative ("bin/sh", never "/bin/sh")
    mode:  full st_mode, file type bits included (use the constructors)
    data:  a file's contents, or a symlink's target (that is how newc
           stores it); empty for everything else
    rdev:  (major, minor) of a device node
    mtime: seconds since the epoch, 0 to 2**32 - 1
    """

    name: str
    mode: int
    data: bytes = b""
    rdev: tuple[int, int] = (0, 0)
    mtime: int = 0

    def __post_init__(self) -> None:
        parts = self.name.split("/")
        if not self.name or self.name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"cpio entry name must be a clean relative path: {self.name!r}")
        if self.name == TRAILER:
            raise ValueError(f"{TRAILER!r} is reserved for the archive trailer")
        kind = stat.S_IFMT(self.mode)
        if kind not in _TYPES:
            raise ValueError(f"{self.name}: unknown file type in mode {self.mode:o}")
        if self.data and kind not in (stat.S_IFREG, stat.S_IFLNK):
            raise ValueError(f"{self.name}: a {_TYPES[kind]} cannot carry data")
        if kind == stat.S_IFLNK and not self.data:
            raise ValueError(f"{self.name}: a symlink needs a target")
        if len(self.data) > _MAX_FIELD:
            raise ValueError(f"{self.name}: too large for newc ({len(self.data)} bytes)")
        if not 0 <= self.mtime <= _MAX_FIELD:
            raise ValueError(f"{self.name}: mtime {self.mtime} does not fit newc's 32 unsigned bits")
        if self.rdev != (0, 0) and kind not in (stat.S_IFCHR, stat.S_IFBLK):
            raise ValueError(f"{self.name}: only device nodes have a device number")

    # -- constructors -----------------------------------------------------
    @classmethod
    def file(cls, name: str, data: bytes, perm: int = 0o644) -> Entry:
        return cls(name, stat.S_IFREG | perm, data)

    @classmethod
    def directory(cls, name: str, perm: int = 0o755, mtime: int = 0) -> Entry:
        return cls(name, stat.S_IFDIR | perm, mtime=mtime)

    @classmethod
    def symlink(cls, name: str, target: str) -> Entry:
        return cls(name, stat.S_IFLNK | 0o777, target.encode())

    @classmethod
    def chardev(cls, name: str, major: int, minor: int, perm: int = 0o600) -> Entry:
        return cls(name, stat.S_IFCHR | perm, rdev=(major, minor))

    @classmethod
    def blockdev(cls, name: str, major: int, minor: int, perm: int = 0o600) -> Entry:
        return cls(name, stat.S_IFBLK | perm, rdev=(major, minor))

    # -- views --------------------------------------------------------------
    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def target(self) -> str | None:
        """A symlink's target, else None."""
        return self.data.decode() if stat.S_ISLNK(self.mode) else None

    @property
    def parent(self) -> str | None:
        return self.name.rpartition("/")[0] or None


def with_parents(entries: Iterable[Entry], perm: int = 0o755) -> list[Entry]:
    """The entries, each preceded by any missing parent directory.

    The kernel unpacks members in order and does not create parents, so a
    directory must come before what it holds.
    """
    out: list[Entry] = []
    seen: set[str] = set()
    for entry in entries:
        missing: list[str] = []
        parent = entry.parent
        while parent is not None and parent not in seen:
            missing.append(parent)
            parent = parent.rpartition("/")[0] or None
        for name in reversed(missing):
            out.append(Entry.directory(name, perm))
            seen.add(name)
        out.append(entry)
        seen.add(entry.name)
    return out


def _header(ino: int, mode: int, nlink: int, filesize: int, rdev: tuple[int, int], namesize: int,
            mtime: int = 0) -> bytes:
    fields = (
        ino,
        mode,
        0,  # uid
        0,  # gid
        nlink,
        mtime,
        filesize,
        0,  # devmajor
        0,  # devminor
        rdev[0],
        rdev[1],
        namesize,
        0,  # check (only used by the "070702" crc format)
    )
    for value in fields:
        if not 0 <= value <= _MAX_FIELD:
            raise ValueError(f"cpio header field out of range: {value}")
    return MAGIC + b"".join(b"%08X" % value for value in fields)


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 4)


def _write_member(out: BinaryIO, ino: int, mode: int, nlink: int, name: str, data: bytes, rdev: tuple[int, int],
                  mtime: int = 0) -> int:
    encoded = name.encode() + b"\0"
    head = _header(ino, mode, nlink, len(data), rdev, len(encoded), mtime) + encoded
    chunk = head + _pad(len(head)) + data + _pad(len(data))
    out.write(chunk)
    return len(chunk)


def write_newc(entries: Iterable[Entry], out: BinaryIO) -> int:
    """Write the entries, in order, then the trailer; return the bytes written.

    Refuses (ValueError, before writing anything) a duplicate name or an
    entry whose parent directory is not an earlier entry: see with_parents().
    """
    members = list(entries)
    seen: dict[str, Entry] = {}
    for entry in members:
        if entry.name in seen:
            raise ValueError(f"duplicate cpio entry: {entry.name}")
        parent = entry.parent
        if parent is not None and not (parent in seen and seen[parent].is_dir):
            raise ValueError(f"{entry.name}: parent directory {parent} must come first")
        seen[entry.name] = entry

    written = 0
    for ino, entry in enumerate(members, start=1):
        nlink = 2 if entry.is_dir else 1
        written += _write_member(out, ino, entry.mode, nlink, entry.name, entry.data, entry.rdev, entry.mtime)
    written += _write_member(out, 0, 0, 1, TRAILER, b"", (0, 0))
    return written
