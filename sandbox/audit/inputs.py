"""What the user names, turned into the files to audit.

    expand(["./bin", "x.deb", "debian12-armhf:sqlite3"], workdir) -> Expanded

An input is, first match wins (KINDS):
- `<userland>:<package>`: the package's .deb, fetched through the
  userland's private apt state (sandbox/build/userland.py), then as a .deb;
  `<userland>:` alone is the userland's whole tree as the guest gets it;
- a directory: every ELF file under it (links not followed, a file with
  several hard links once; files that are not ELF are counted, not named);
- a .deb: its data read once as a stream and refused past MAX_DEB_FILES
  entries or MAX_DEB_BYTES unpacked (a 157 KB .deb can hold 1 GiB of
  zeros), then unpacked with `dpkg-deb -x` into workdir, then as a directory;
- a firmware image (tar, cpio, ext2/3/4, squashfs; sandbox/images/, by its
  magic bytes): unpacked into workdir without root or mounting, then as a
  directory (a root filesystem when it holds bin/sh or usr/bin/env);
- any other file: itself (not an ELF file: one line saying so).

An input that cannot be expanded (missing, unknown userland, a package apt
does not know) gives one Rejected and the others go on.
"""
from __future__ import annotations

import os
import re
import stat
import subprocess
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.audit.elf import has_elf_magic
from sandbox.audit.record import Origin, Rejected
from sandbox.base.errors import InputError, SandboxError
from sandbox.build.userland import build_userland, download_package, package_of, unpack_deb
from sandbox.images import image_format, unpack_image
from sandbox.scenario.userlands import Userlands, load_userlands

USERLAND_INPUT = re.compile(r"(?P<userland>[a-z0-9][a-z0-9-]*):(?P<package>[a-z0-9][a-z0-9+.-]*)?")
DEB_MAGIC = b"!<arch>\ndebian-binary"
MAX_DEB_FILES = 50_000
MAX_DEB_BYTES = 1 << 29
"""512 MiB: a .deb is unpacked into a temporary folder for reading its ELF files."""


@dataclass(frozen=True)
class Candidate:
    origin: Origin
    path: Path  # the file on the host
    tree: Path | None = None  # the directory input, or the unpacked image, origin.path is inside


@dataclass
class Expanded:
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    not_elf: int = 0  # files inside trees that are not ELF, skipped

    def add(self, other: Expanded) -> None:
        self.candidates += other.candidates
        self.rejected += other.rejected
        self.not_elf += other.not_elf


def walk(root: Path, text: str, package: str = "", tree: bool = False) -> Expanded:
    """Every ELF file under root, once per inode, in a stable order (tree:
    root is the user's own tree, each candidate names it)."""
    found = Expanded()
    seen: set[tuple[int, int]] = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            if info.st_size >= 4 and has_elf_magic(path):
                found.candidates.append(Candidate(Origin(text, path.relative_to(root).as_posix(), package), path,
                                                 root if tree else None))
            else:
                found.not_elf += 1
    return found


def _is_deb(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(DEB_MAGIC)) == DEB_MAGIC


def check_deb_size(deb: Path) -> None:
    """SandboxError when the .deb unpacks to more than MAX_DEB_FILES entries or
    MAX_DEB_BYTES: counted from `dpkg-deb --fsys-tarfile`'s stream, which is
    stopped at the limit, before anything is written."""
    proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    entries = size = 0
    try:
        assert proc.stdout is not None
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            for member in tar:
                entries, size = entries + 1, size + max(member.size, 0)
                if entries > MAX_DEB_FILES or size > MAX_DEB_BYTES:
                    raise SandboxError(f"unpacks to more than {MAX_DEB_FILES} entries or {MAX_DEB_BYTES >> 20} MiB "
                                       f"(seen: {entries} entries, {size >> 20} MiB): not unpacked")
    except tarfile.TarError as err:
        raise SandboxError(f"not a .deb dpkg-deb can read: {err}") from None
    finally:
        proc.kill()
        proc.wait()


def _deb(deb: Path, text: str, workdir: Path) -> Expanded:
    check_deb_size(deb)
    package = package_of(deb)
    root = workdir / f"deb-{len(list(workdir.iterdir()))}"
    unpack_deb(deb, root)
    return walk(root, text, f"{package.name}={package.version}")


def _userland_input(text: str, workdir: Path, userlands: Callable[[], Userlands]) -> Expanded:
    match = USERLAND_INPUT.fullmatch(text)
    assert match is not None
    table = userlands()
    userland = table.get(match["userland"])
    if userland is None:
        raise SandboxError(f"no userland '{match['userland']}' (rootfs/userlands.toml: {', '.join(table.by_name)})")
    if not match["package"]:
        return walk(build_userland(userland, table).root, text)
    into = workdir / f"download-{len(list(workdir.iterdir()))}"
    into.mkdir()
    return _deb(download_package(userland, table, match["package"], into), text, workdir)


def _path_input(text: str, workdir: Path) -> Expanded:
    path = Path(text)
    if not path.exists():
        raise SandboxError("no such file or directory")
    if path.is_dir():
        return walk(path, text, tree=True)
    if not path.is_file():
        raise SandboxError("not a regular file or directory")
    if _is_deb(path):
        return _deb(path, text, workdir)
    if not has_elf_magic(path) and image_format(path) is not None:
        root = unpack_image(path, workdir / f"image-{len(list(workdir.iterdir()))}")
        return walk(root, text, tree=True)
    return Expanded(candidates=[Candidate(Origin(text, ""), path)])


def expand_one(text: str, workdir: Path, userlands: Callable[[], Userlands] = load_userlands) -> Expanded:
    """One input; its failure is one Rejected line naming it."""
    try:
        if USERLAND_INPUT.fullmatch(text) and not Path(text).exists():
            return _userland_input(text, workdir, userlands)
        return _path_input(text, workdir)
    except InputError as err:  # an image: the member at fault, or "image"
        return Expanded(rejected=[Rejected(text, err.message if err.key == "image" else f"{err.key}: {err.message}")])
    except (SandboxError, OSError) as err:
        message = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        return Expanded(rejected=[Rejected(text, message)])


def expand(inputs: list[str], workdir: Path, userlands: Callable[[], Userlands] = load_userlands) -> Expanded:
    found = Expanded()
    for text in inputs:
        found.add(expand_one(text, workdir, userlands))
    return found
