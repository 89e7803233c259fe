"""Archive members written under one folder, and nothing outside it.

    Member(name, kind, ...)       one entry of a tar or cpio archive
    Writer(image, dest, limits)   .add(member) for each, in archive order

A member's name is made relative ("./bin/sh" is "bin/sh"); an absolute name
or one with a ".." part is refused. Symbolic links are kept as the image
has them (an absolute target is right inside the image's own root), but
nothing is ever written through one: a member whose folder is a link on
the host is refused, and a member replacing a link replaces the link
itself. A hard link must name an earlier regular file of the archive.
Devices, FIFOs and sockets are skipped (counted). Set-id bits are dropped;
every file is readable by its owner. Every refusal is an InputError
naming the image and the member.
"""
from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sandbox.base.errors import InputError
from sandbox.images.limits import ImageLimits

FILE, DIRECTORY, SYMLINK, HARDLINK, OTHER = "file", "directory", "symlink", "hardlink", "other"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    name: str  # as the archive spells it
    kind: str  # FILE, DIRECTORY, SYMLINK, HARDLINK, OTHER
    mode: int = 0o644  # permission bits
    size: int = 0  # a file's length
    data: IO[bytes] | None = None  # a file's contents, read from the archive
    target: str = ""  # a symbolic link's target, or a hard link's member name


def clean_name(raw: str) -> str | None:
    """The member's path relative to the image root; None for the root
    itself; ValueError for a name that leaves it."""
    if raw.startswith("/"):
        raise ValueError("absolute name")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError("'..' in the name")
    return "/".join(parts) or None


class Writer:
    def __init__(self, image: Path, dest: Path, limits: ImageLimits) -> None:
        self.image = image
        self.dest = dest
        self.limits = limits
        self.entries = 0
        self.bytes = 0
        self.skipped = 0  # devices, FIFOs, sockets

    def refuse(self, name: str, message: str) -> InputError:
        return InputError(str(self.image), name, message)

    def add(self, member: Member) -> None:
        try:
            name = clean_name(member.name)
        except ValueError as err:
            raise self.refuse(member.name, f"leaves the image ({err})") from None
        if name is None:
            return
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise self.refuse(name, f"more than {self.limits.max_entries} entries")
        if member.kind == OTHER:
            self.skipped += 1
            return
        path = self._folder_of(name) / name.rsplit("/", 1)[-1]
        if member.kind == DIRECTORY:
            self._directory(name, path, member.mode)
        elif member.kind == FILE:
            self._file(name, path, member)
        elif member.kind == SYMLINK:
            self._clear(name, path)
            os.symlink(member.target, path)
        elif member.kind == HARDLINK:
            self._hardlink(name, path, member.target)

    def _folder_of(self, name: str, make: bool = True) -> Path:
        """The member's folder, made where missing; never through a link."""
        folder = self.dest
        for part in name.split("/")[:-1]:
            folder = folder / part
            try:
                info = folder.lstat()
            except FileNotFoundError:
                if not make:
                    raise self.refuse(name, "no such file earlier in the image") from None
                folder.mkdir(0o755)
                continue
            if not stat.S_ISDIR(info.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a folder"
                raise self.refuse(name, f"its folder {folder.relative_to(self.dest)} is {what}")
        return folder

    def _clear(self, name: str, path: Path) -> None:
        """Room for a new member at path: a link or file there goes, a folder is refused."""
        try:
            info = path.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            raise self.refuse(name, "replaces a folder")
        path.unlink()

    def _directory(self, name: str, path: Path, mode: int) -> None:
        try:
            info = path.lstat()
        except FileNotFoundError:
            path.mkdir(0o700)
            info = path.lstat()
        if not stat.S_ISDIR(info.st_mode):
            raise self.refuse(name, "a folder where a file or link is")
        path.chmod((mode & 0o1777) | 0o700)

    def _file(self, name: str, path: Path, member: Member) -> None:
        if self.bytes + member.size > self.limits.max_bytes:
            raise self.refuse(name, f"unpacks to more than {self.limits.max_bytes} bytes")
        if path.is_symlink() or (path.exists() and not path.is_file()):
            self._clear(name, path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            if member.data is not None:
                shutil.copyfileobj(member.data, out, CHUNK)
            written = out.tell()
        self.bytes += written
        if self.bytes > self.limits.max_bytes:
            raise self.refuse(name, f"unpacks to more than {self.limits.max_bytes} bytes")
        path.chmod((member.mode & 0o777) | 0o600)

    def _hardlink(self, name: str, path: Path, target: str) -> None:
        try:
            source_name = clean_name(target)
        except ValueError as err:
            raise self.refuse(name, f"hard link leaves the image ({err})") from None
        if source_name is None:
            raise self.refuse(name, "hard link to the image's root")
        source = self._folder_of(source_name, make=False) / source_name.rsplit("/", 1)[-1]
        if not (source.is_file() and not source.is_symlink()):
            raise self.refuse(name, f"hard link to {source_name}, not an earlier file of the image")
        if source == path:
            return
        self._clear(name, path)
        os.link(source, path, follow_symlinks=False)
