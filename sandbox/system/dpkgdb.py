"""dpkg's database for packages unpacked with `dpkg-deb -x` on the host, so
that `dpkg --configure -a` inside a guest of their architecture runs their
maintainer scripts (sandbox/system/image.py): each package "install ok
unpacked", its file list and control files under /var/lib/dpkg/info, its
conffiles set aside as <file>.dpkg-new with dpkg's own "newconffile" mark,
as `dpkg --unpack` leaves them. Pure but for reading the .debs."""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.base.errors import SandboxError

CONTROL_FILES = ("preinst", "postinst", "prerm", "postrm", "conffiles", "md5sums", "triggers",
                 "shlibs", "symbols", "templates", "config")


@dataclass(frozen=True)
class Unpacked:
    """One package as dpkg-deb reads it."""

    control: str  # the control paragraph, as `dpkg-deb -f` prints it
    paths: tuple[str, ...]  # its files and folders, "/." first, as a .list holds them
    conffiles: tuple[str, ...]

    def field(self, name: str) -> str:
        for line in self.control.splitlines():
            if line.startswith(f"{name}: "):
                return line.split(": ", 1)[1].strip()
        return ""

    @property
    def info_name(self) -> str:
        """dpkg names a Multi-Arch: same package's files <name>:<arch>."""
        name = self.field("Package")
        return f"{name}:{self.field('Architecture')}" if self.field("Multi-Arch") == "same" else name


def _run(argv: list[str]) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv[:2])} {Path(argv[-1]).name}: {proc.stderr.strip()[:200]}")
    return proc.stdout


def list_paths(listing: str) -> tuple[str, ...]:
    """`dpkg-deb -c`'s lines ("drwxr-xr-x root/root 0 date time ./usr/bin/") as
    a .list's paths ("/.", "/usr/bin"); a link's target is not a path."""
    paths = []
    for line in listing.splitlines():
        words = line.split(None, 5)
        if len(words) < 6:
            continue
        name = words[5].split(" -> ", 1)[0].split(" link to ", 1)[0]
        path = "/" + name.lstrip(".").strip("/")
        paths.append("/." if path == "/" else path)
    return tuple(paths)


def status_paragraph(package: Unpacked) -> str:
    """The package's control paragraph with its Status (after Package) and its
    Conffiles, as dpkg writes them for a package unpacked but not configured."""
    lines = []
    for line in package.control.rstrip("\n").splitlines():
        lines.append(line)
        if line.startswith("Package: "):
            lines.append("Status: install ok unpacked")
    if package.conffiles:
        lines.append("Conffiles:")
        lines += [f" {path} newconffile" for path in package.conffiles]
    return "\n".join(lines) + "\n"


def register(debs: list[Path], root: Path) -> list[Unpacked]:
    """Writes dpkg's database for the .debs already unpacked under root and
    sets their conffiles aside as <file>.dpkg-new."""
    info = root / "var" / "lib" / "dpkg" / "info"
    info.mkdir(parents=True, exist_ok=True)
    for sub in ("updates", "triggers", "alternatives"):
        (root / "var" / "lib" / "dpkg" / sub).mkdir(exist_ok=True)
    for name in ("available", "diversions", "statoverride"):
        (root / "var" / "lib" / "dpkg" / name).touch()
    (info / "format").write_text("1\n")
    packages = []
    with tempfile.TemporaryDirectory(prefix="y2038-dpkgdb-") as tmp:
        for deb in debs:
            control_dir = Path(tmp) / deb.name
            _run(["dpkg-deb", "-e", str(deb), str(control_dir)])
            conffiles = tuple(line.strip() for line in (control_dir / "conffiles").read_text().splitlines()
                              if line.strip().startswith("/")) if (control_dir / "conffiles").is_file() else ()
            package = Unpacked(_run(["dpkg-deb", "-f", str(deb)]), list_paths(_run(["dpkg-deb", "-c", str(deb)])),
                               conffiles)
            (info / f"{package.info_name}.list").write_text("".join(f"{p}\n" for p in package.paths))
            for name in CONTROL_FILES:
                if (control_dir / name).is_file() and name != "conffiles":
                    shutil.copy2(control_dir / name, info / f"{package.info_name}.{name}")
                elif name == "conffiles" and conffiles:
                    (info / f"{package.info_name}.conffiles").write_text("".join(f"{c}\n" for c in conffiles))
            for path in conffiles:
                here = root / path.lstrip("/")
                if here.is_file() or here.is_symlink():
                    here.rename(here.with_name(here.name + ".dpkg-new"))
            packages.append(package)
    (root / "var" / "lib" / "dpkg" / "status").write_text("\n".join(status_paragraph(p) for p in packages))
    return packages
