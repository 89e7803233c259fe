"""An image's format from its first bytes (never its name).

    sniff(head) -> a FORMATS name, or None
"""
from __future__ import annotations

from pathlib import Path

FORMATS: tuple[tuple[str, int, bytes], ...] = (
    # name, offset, magic
    ("gz", 0, b"\x1f\x8b"),
    ("xz", 0, b"\xfd7zXZ\x00"),
    ("zst", 0, b"\x28\xb5\x2f\xfd"),
    ("bz2", 0, b"BZh"),
    ("squashfs", 0, b"hsqs"),  # little-endian squashfs 4 (mksquashfs, every Linux)
    ("cpio", 0, b"070701"),  # newc: what the kernel reads as an initramfs
    ("cpio", 0, b"070702"),  # newc with checksums
    ("cpio", 0, b"070707"),  # odc (POSIX.1 portable)
    ("tar", 257, b"ustar"),  # POSIX ustar and GNU tar
    ("ext", 1080, b"\x53\xef"),  # ext2/3/4 superblock s_magic 0xEF53
)
COMPRESSIONS = ("gz", "xz", "zst", "bz2")
"""Streams around a tar or cpio archive (tar.gz, cpio.xz, ...)."""
ARCHIVES = ("tar", "cpio")
HEAD = 1082  # enough bytes for every magic above


def sniff(head: bytes) -> str | None:
    for name, offset, magic in FORMATS:
        if head[offset:offset + len(magic)] == magic:
            return name
    return None


def read_head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(HEAD)
