"""How much one image may unpack to: a decompression bomb or a hostile
archive stops with a one-line error, not a full disk."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImageLimits:
    max_entries: int = 300_000  # files, folders and links (a Debian 12 root: about 20,000)
    max_bytes: int = 8 << 30  # the files' contents, unpacked
