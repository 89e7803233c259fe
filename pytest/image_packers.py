"""How the tests pack a root filesystem tree into each image format the
sandbox reads (sandbox/images/): a shell command per format, run in the
tree, `{out}` the image's path and `{size}` an ext image's size."""
from __future__ import annotations

import subprocess
from pathlib import Path

PACKERS = {
    "tar": "tar cf {out} .",
    "tar.gz": "tar czf {out} .",
    "tar.xz": "tar cJf {out} .",
    "tar.zst": "tar --zstd -cf {out} .",
    "cpio": "find . | cpio -o -H newc --quiet > {out}",
    "cpio.gz": "find . | cpio -o -H newc --quiet | gzip > {out}",
    "cpio.xz": "find . | cpio -o -H newc --quiet | xz > {out}",
    "cpio-odc": "find . | cpio -o -H odc --quiet > {out}",
    "ext2": "mke2fs -q -t ext2 -d . {out} {size}",
    "ext4": "mke2fs -q -t ext4 -d . {out} {size}",
    "squashfs": "mksquashfs . {out} -quiet -noappend -comp xz",
}


def pack(tree: Path, name: str, out: Path, size: str = "8M") -> Path:
    """The tree packed as format `name` into `out` (no suffix needed: the
    sandbox finds the format by its magic)."""
    subprocess.run(["sh", "-ec", PACKERS[name].format(out=out, size=size)], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)
    return out
