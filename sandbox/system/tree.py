"""The system's tree on the host, before and after its configuration (pure file
work): merged /usr, our own site files, and the configuration's upper layer
(a tar of the overlay's tmpfs) laid over the tree, whiteouts included."""
from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

MERGED = ("bin", "sbin", "lib")
MACHINE_ID = "79323033382d73797374656d2d303031"  # fixed: no first boot, the same system every run
POLICY_RC_D = "usr/sbin/policy-rc.d"  # "start nothing" while the maintainer scripts run


def merge_usr(root: Path) -> list[str]:
    """/bin, /sbin and /lib moved into /usr and replaced by links, as Debian 12
    and 13 systems are laid out; a folder with a file in both places stays.
    Returns the folders merged."""
    merged = []
    for name in MERGED:
        top, usr = root / name, root / "usr" / name
        if top.is_symlink() or not top.is_dir() or _clashes(top, usr):
            continue
        _move_into(top, usr)
        top.symlink_to(f"usr/{name}")
        merged.append(name)
    return merged


def _clashes(source: Path, dest: Path) -> bool:
    """Whether moving source's entries into dest would replace anything."""
    for entry in os.listdir(source):
        here, there = source / entry, dest / entry
        if not (there.exists() or there.is_symlink()):
            continue
        both_dirs = here.is_dir() and not here.is_symlink() and there.is_dir() and not there.is_symlink()
        if not both_dirs or _clashes(here, there):
            return True
    return False


def _move_into(source: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in os.listdir(source):
        here, there = source / entry, dest / entry
        if there.is_dir() and not there.is_symlink():
            _move_into(here, there)
        else:
            os.rename(here, there)
    source.rmdir()


def add_site(root: Path, site: Path) -> None:
    """Our files (rootfs/system/: the periodic job, the TLS servers) over the
    tree, and the fixed machine id."""
    shutil.copytree(site, root, symlinks=True, dirs_exist_ok=True)
    (root / "etc" / "machine-id").write_text(MACHINE_ID + "\n")
    (root / "etc" / "hostname").write_text("y2038-system\n")
    for name in ("proc", "sys", "dev", "run", "tmp"):
        (root / name).mkdir(exist_ok=True)


def apply_upper(root: Path, upper_tar: Path) -> int:
    """The overlay's upper layer (a tar of it) laid over the tree: files
    replace, a whiteout (a character device 0:0) removes. Returns how many
    entries it held."""
    count = 0
    with tarfile.open(upper_tar) as tar:
        for member in tar:
            count += 1
            name = os.path.normpath(member.name).lstrip("./")
            if not name or name.startswith(".."):
                continue
            target = root / name
            if member.ischr() and member.devmajor == 0 and member.devminor == 0:
                _remove(target)
                continue
            if target.is_symlink() or (target.exists() and not (member.isdir() and target.is_dir())):
                _remove(target)
            tar.extract(member, root, numeric_owner=True)
    return count


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
