"""One image, whatever its format, unpacked into a folder.

    unpack_image(path, dest, limits) -> the root folder of its files

Formats (sandbox/images/formats.py, by magic bytes): a folder (returned as
is); tar and cpio (newc, odc), plain or inside gzip, xz, zstd or bzip2;
ext2/3/4 (debugfs); squashfs (unsquashfs). Nothing is mounted and nothing
needs root. What cannot be read is an InputError naming the file: the key
"image" for the file as a whole, a member's name for a member at fault.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import subprocess
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, cast

from sandbox.base.errors import InputError
from sandbox.images.archives import cpio_members, tar_members
from sandbox.images.filesystems import ext_unpack, squashfs_unpack
from sandbox.images.formats import ARCHIVES, COMPRESSIONS, HEAD, read_head, sniff
from sandbox.images.limits import ImageLimits
from sandbox.images.members import Member, Writer

READERS: dict[str, Callable[[IO[bytes]], Iterator[Member]]] = {"tar": tar_members, "cpio": cpio_members}
FILESYSTEMS: dict[str, Callable[[Path, Path, ImageLimits], None]] = {"ext": ext_unpack,
                                                                     "squashfs": squashfs_unpack}
STREAM_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error, ValueError)


@contextmanager
def _zstd(path: Path) -> Iterator[IO[bytes]]:
    try:
        child = subprocess.Popen(["zstd", "-dcq", "--", str(path)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
    except FileNotFoundError:
        raise InputError(str(path), "image", "zstd is not installed (just deps)") from None
    assert child.stdout is not None
    try:
        yield child.stdout
    finally:
        child.stdout.close()
        child.kill()
        child.wait()


@contextmanager
def _opened(path: Path, compression: str) -> Iterator[IO[bytes]]:
    if compression == "zst":
        with _zstd(path) as stream:
            yield stream
        return
    openers: dict[str, Callable[[Path], IO[bytes]]] = {
        "": lambda p: p.open("rb"), "gz": lambda p: cast(IO[bytes], gzip.open(p, "rb")),  # GzipFile: a binary stream
        "xz": lambda p: lzma.open(p, "rb"), "bz2": lambda p: bz2.open(p, "rb")}
    with openers[compression](path) as stream:
        yield stream


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read to find its format."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]  # io gives a bytearray
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n], self.head = self.head[:n], self.head[n:]
            return n
        data = self.rest.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def image_format(path: Path) -> str | None:
    """"folder", "tar", "cpio", "ext", "squashfs", a compressed stream as
    "gz" (its content is found when it is read), or None."""
    if path.is_dir():
        return "folder"
    return sniff(read_head(path))


def _archive(path: Path, dest: Path, limits: ImageLimits, compression: str) -> None:
    writer = Writer(path, dest, limits)
    try:
        with _opened(path, compression) as raw:
            head = raw.read(HEAD)
            kind = sniff(head)
            if kind not in ARCHIVES:
                what = f"{compression}-compressed " if compression else ""
                raise InputError(str(path), "image", f"a {what}stream holding neither a tar nor a cpio archive")
            stream = io.BufferedReader(_Prefixed(head, raw), 1 << 20)
            for member in READERS[kind](stream):
                writer.add(member)
    except InputError:
        raise
    except STREAM_ERRORS as err:
        raise InputError(str(path), "image", str(err) or type(err).__name__) from None


def unpack_image(path: Path, dest: Path, limits: ImageLimits = ImageLimits()) -> Path:
    """The folder holding the image's files: path itself for a folder,
    else dest (created; it must not hold anything yet)."""
    try:
        kind = image_format(path)
    except OSError as err:
        raise InputError(str(path), "image", err.strerror or str(err)) from None
    if kind == "folder":
        return path
    if kind is None:
        raise InputError(str(path), "image", "not an image: no tar, cpio, ext2/3/4, squashfs, gzip, xz, zstd "
                                             "or bzip2 magic")
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise InputError(str(dest), "dest", "not empty")
    if kind in FILESYSTEMS:
        FILESYSTEMS[kind](path, dest, limits)
    else:
        _archive(path, dest, limits, kind if kind in COMPRESSIONS else "")
    return dest
