"""ext2/3/4 and squashfs images, read by Debian's own tools, no mount:

    ext_unpack(image, dest, limits)        debugfs -R 'rdump / DEST' (e2fsprogs)
    squashfs_unpack(image, dest, limits)   unsquashfs -d DEST -f (squashfs-tools)

Each counts the image's entries and bytes first (debugfs's superblock
stats, unsquashfs -lls) and refuses one past the limits before writing
anything. debugfs writes every name of a file with several hard links as
a copy of its own: relink_ext() lists each folder's inode numbers (`ls -p`,
one debugfs run) and makes them hard links again, so a tree walk reads the
file once, as from the other formats. A filesystem cannot hold a name with
"/" or "..", and a link is written as a link, so nothing lands outside dest (squashfs-tools 4.5.1
refuses the crafted duplicate names of CVE-2021-41072). settle() then
drops what is neither a file, a folder nor a link (devices, FIFOs) and
set-id bits, as the archive writer does.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from sandbox.base.errors import InputError
from sandbox.images.limits import ImageLimits

DEBUGFS_BANNER = re.compile(r"^debugfs \d")
EXT_STATS = re.compile(r"^(Inode count|Free inodes|Block count|Free blocks|Block size):\s+(\d+)$", re.M)
TOOL_SECONDS = 600.0


def _run(image: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=TOOL_SECONDS,
                              check=False)
    except FileNotFoundError:
        raise InputError(str(image), "image", f"{argv[0]} is not installed (just deps)") from None
    except subprocess.TimeoutExpired:
        raise InputError(str(image), "image", f"{argv[0]} took more than {TOOL_SECONDS:g} s") from None


def _complaint(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not DEBUGFS_BANNER.match(ln)]
    return lines[0] if lines else ""


def _within(image: Path, entries: int, size: int, limits: ImageLimits) -> None:
    if entries > limits.max_entries:
        raise InputError(str(image), "image", f"{entries} entries, more than {limits.max_entries}")
    if size > limits.max_bytes:
        raise InputError(str(image), "image", f"{size} bytes in use, more than {limits.max_bytes}")


def ext_unpack(image: Path, dest: Path, limits: ImageLimits) -> None:
    stats = _run(image, ["debugfs", "-R", "stats", str(image)])
    found = dict(EXT_STATS.findall(stats.stdout))
    if len(found) < 5:
        raise InputError(str(image), "ext", _complaint(stats.stderr) or "not a readable ext2/3/4 image")
    counts = {k: int(v) for k, v in found.items()}
    _within(image, counts["Inode count"] - counts["Free inodes"],
            (counts["Block count"] - counts["Free blocks"]) * counts["Block size"], limits)
    dest.mkdir(parents=True, exist_ok=True)
    done = _run(image, ["debugfs", "-R", f'rdump / "{dest}"', str(image)])  # quoted: a folder with blanks
    if complaint := _complaint(done.stderr):
        raise InputError(str(image), "ext", complaint)
    relink_ext(image, dest)
    settle(image, dest, limits)


LS_ENTRY = re.compile(r"^/(?P<inode>\d+)/(?P<mode>\d+)/\d+/\d+/(?P<name>[^/]+)/\d*/$")


def relink_ext(image: Path, dest: Path) -> None:
    """The names of one inode, written as copies by rdump, made hard links
    to the first again (folders whose names need quoting are left as they are)."""
    folders = [""] + sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_dir() and not p.is_symlink())
    folders = [f for f in folders if '"' not in f and "\n" not in f]
    commands = dest.parent / f".{dest.name}.debugfs"
    commands.write_text("".join(f'ls -p "/{f}"\n' for f in folders))
    try:
        listing = _run(image, ["debugfs", "-f", str(commands), str(image)]).stdout
    finally:
        commands.unlink()
    names: dict[int, list[Path]] = {}
    folder = dest
    for line in listing.splitlines():
        if line.startswith('debugfs: ls -p "/'):
            folder = dest / line[len('debugfs: ls -p "/'):-1]
        elif (entry := LS_ENTRY.match(line)) and entry["mode"].startswith("10"):  # a regular file
            names.setdefault(int(entry["inode"]), []).append(folder / entry["name"])
    for paths in names.values():
        first = paths[0]
        for other in paths[1:]:
            if first.is_file() and other.is_file() and not other.is_symlink():
                other.unlink()
                os.link(first, other)


def squashfs_unpack(image: Path, dest: Path, limits: ImageLimits) -> None:
    listing = _run(image, ["unsquashfs", "-lls", "-d", "", str(image)])
    if listing.returncode != 0:
        raise InputError(str(image), "squashfs", _complaint(listing.stderr) or "not a readable squashfs image")
    lines = [ln.split() for ln in listing.stdout.splitlines() if ln[:1] in "-dlcbps" and ln[:1]]
    size = sum(int(f[2]) for f in lines if f[0].startswith("-") and len(f) > 2 and f[2].isdigit())
    _within(image, len(lines), size, limits)
    done = _run(image, ["unsquashfs", "-no-progress", "-no-xattrs", "-f", "-d", str(dest), str(image)])
    if done.returncode != 0:
        raise InputError(str(image), "squashfs", _complaint(done.stderr) or f"unsquashfs exit {done.returncode}")
    settle(image, dest, limits)


def settle(image: Path, root: Path, limits: ImageLimits) -> None:
    """Only files, folders and links stay; no set-id bit; the limits hold."""
    entries = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            entries += 1
            if stat.S_ISREG(info.st_mode):
                size += info.st_size
                if info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    path.chmod(info.st_mode & 0o777)
            elif not (stat.S_ISDIR(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                path.unlink()
    _within(image, entries, size, limits)
