"""A bootable Debian system image, cached by the exact package versions:

    build_system_image(spec, systems) -> SystemImage(image, packages, ...)

1. The packages' closure from the userlands' private apt state
   (sandbox/build/userland.py; the host's sources untouched).
2. Each .deb unpacked with `dpkg-deb -x`, documentation dropped, /usr
   merged, dpkg's database written as `dpkg --unpack` leaves it
   (sandbox/system/dpkgdb.py), our site files and TLS certificates added.
3. That tree as an ext4 image, booted under an overlay in a guest of the
   system's architecture with the "system" kernel, `dpkg --configure -a`
   run there (sandbox/system/configure.py); the overlay's upper layer comes
   back and is laid over the tree.
4. The configured tree as the final ext4 image (256-byte inodes: file
   times past 2038), with packages.txt and configure.log beside it.
"""
from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.paths import cache_dir
from sandbox.base.progress import say, step
from sandbox.build import userland as userlands_build
from sandbox.build.userland import Package, image_command
from sandbox.guest.target import prepare_target
from sandbox.system import dpkgdb, tree
from sandbox.system.catalogue import SITE_FOLDER, SystemSpec, Systems
from sandbox.system.configure import configure
from sandbox.scenario.userlands import load_userlands
from sandbox.system.machine import SystemBoot, machine_for_arch

RECIPE = "1"  # bump when the way an image is made changes
KERNEL_VARIANT = "system"
IMAGE_NAME = "system.ext4"
CERTIFICATES = (("tls-2040", "2040-06-01"), ("tls-2051", "2051-06-01"))  # (name, notAfter): past 2038, past 2050


@dataclass(frozen=True)
class SystemImage:
    spec: SystemSpec
    key: str
    image: Path
    packages: tuple[Package, ...]
    build: dict[str, float]  # wall seconds of each build step (when built now), else empty

    def record(self) -> dict[str, object]:
        return {"name": self.spec.name, "suite": self.spec.suite, "arch": self.spec.arch, "key": self.key,
                "image": str(self.image), "image_bytes": self.image.stat().st_size,
                "packages": [str(p) for p in self.packages]}


def _site_digest(site: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(site.rglob("*")):
        digest.update(str(path.relative_to(site)).encode())
        digest.update(os.readlink(path).encode() if path.is_symlink() else
                      path.read_bytes() if path.is_file() else b"/")
    return digest.hexdigest()[:16]


def image_key(spec: SystemSpec, packages: list[Package], drop: tuple[str, ...], site: str) -> str:
    text = json.dumps({"recipe": RECIPE, "name": spec.name, "packages": sorted(map(str, packages)),
                       "drop": list(drop), "site": site, "certificates": CERTIFICATES})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _certificates(root: Path) -> None:
    """Self-signed certificates for the TLS servers, valid from now until
    each CERTIFICATES date (one ends past 2038, one past 2050: GeneralizedTime)."""
    folder = root / "etc" / "y2038"
    folder.mkdir(parents=True, exist_ok=True)
    today = datetime.date.today()
    for name, until in CERTIFICATES:
        days = (datetime.date.fromisoformat(until) - today).days
        done = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj",
                               f"/CN=y2038-system {name}", "-days", str(days),
                               "-keyout", str(folder / f"{name}.key"), "-out", str(folder / f"{name}.crt")],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SandboxError(f"openssl req for {name}: {done.stderr.strip()[-200:]}")


def _mke2fs(root: Path, image: Path, label: str) -> None:
    used = int(subprocess.run(["du", "-sm", "--apparent-size", str(root)], capture_output=True, text=True,
                              check=True).stdout.split()[0])
    size = used * 5 // 4 + 32
    done = subprocess.run(image_command(root, image, size, label), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SandboxError(f"mke2fs of {label}: {(done.stderr or done.stdout).strip()}")


def _stage(spec: SystemSpec, systems: Systems, debs: list[Path], root: Path) -> None:
    for deb in debs:
        userlands_build.unpack_deb(deb, root)
    for path in systems.drop:
        shutil.rmtree(root / path, ignore_errors=True)
    tree.merge_usr(root)
    dpkgdb.register(debs, root)
    tree.add_site(root, SITE_FOLDER)
    _certificates(root)


def stage(spec: SystemSpec, systems: Systems, debs: list[Path], staged: Path) -> float:
    """The unconfigured tree and its ext4 image in `staged` (kept until the
    image is made, so that a build stopped later starts from here); the
    wall seconds it took (0 when it was there)."""
    if (staged / "unconfigured.ext4").is_file():
        return 0.0
    start = time.monotonic()
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    _stage(spec, systems, debs, staged / "root")
    _mke2fs(staged / "root", staged / "unconfigured.tmp", spec.name)
    os.rename(staged / "unconfigured.tmp", staged / "unconfigured.ext4")
    return time.monotonic() - start


def _build(spec: SystemSpec, systems: Systems, debs: list[Path], packages: list[Package], folder: Path) -> dict[str, float]:
    timings: dict[str, float] = {}
    staged = folder.with_name(f".{folder.name}.staged")
    timings["unpack"] = stage(spec, systems, debs, staged)
    root = staged / "root"
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        start = time.monotonic()
        machine = machine_for_arch(spec.arch, f"system {spec.name}")
        target = prepare_target(machine, KERNEL_VARIANT)
        timings["kernel"] = time.monotonic() - start
        start = time.monotonic()
        boot = SystemBoot(target, staged / "unconfigured.ext4",
                          "configure", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
                          tmp / "configure")
        log = configure(boot, tree.POLICY_RC_D, tmp / "upper.tar.gz")
        timings["configure"] = time.monotonic() - start
        start = time.monotonic()
        tree.apply_upper(root, tmp / "upper.tar.gz")
        _mke2fs(root, tmp / IMAGE_NAME, spec.name)
        timings["image"] = time.monotonic() - start
        (tmp / "configure.log").write_text(log)
        (tmp / "packages.txt").write_text("".join(f"{p}\n" for p in packages))
        (tmp / "build.json").write_text(json.dumps({k: round(v, 1) for k, v in timings.items()}) + "\n")
        os.rename(tmp, folder)
        shutil.rmtree(staged, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return timings


def image_folder(spec: SystemSpec, systems: Systems) -> tuple[Path, list[Path], list[Package]]:
    """Where the image of these exact package versions is kept, and the .debs."""
    userland = spec.userland()
    state = userlands_build.prepare_state(userland, load_userlands())
    debs, packages = userlands_build.resolved(userland, state)
    key = image_key(spec, packages, systems.drop, _site_digest(SITE_FOLDER))
    root = cache_dir() / "systems"
    root.mkdir(parents=True, exist_ok=True)
    return root / f"{spec.name}-{key}", debs, packages


def build_system_image(spec: SystemSpec, systems: Systems) -> SystemImage:
    """The system image from the cache, or built first (minutes: a kernel,
    then the maintainer scripts under TCG)."""
    folder, debs, packages = image_folder(spec, systems)
    root, key = folder.parent, folder.name.rsplit("-", 1)[1]
    timings: dict[str, float] = {}
    with (root / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not folder.is_dir():
            with step(f"building system {spec.name} ({len(debs)} packages) into {folder}"):
                timings = _build(spec, systems, debs, packages, folder)
    image = folder / IMAGE_NAME
    say(f"system {spec.name}: {len(packages)} packages, {image.stat().st_size // 2**20} MiB image")
    return SystemImage(spec, key, image, tuple(packages), timings)
