"""Firmware images as inputs (sandbox/images/): one small tree packed as
every format unpacks to the same files; hostile archives are refused with
one line naming the image and the member, and nothing lands outside the
destination. Images are made here with Debian's own tools.
"""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
from image_packers import PACKERS, pack

from sandbox.audit.inputs import expand
from sandbox.base.errors import InputError
from sandbox.build import cpio
from sandbox.images import ImageLimits, image_format, unpack_image


def make_tree(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc/motd").write_text("hello\n")
    (root / "bin/prog").write_bytes(Path("/bin/true").read_bytes())
    (root / "bin/prog").chmod(0o755)
    os.link(root / "bin/prog", root / "bin/prog-again")
    os.symlink("/etc/motd", root / "bin/absolute-link")
    os.symlink("../etc/motd", root / "bin/relative-link")
    return root


def listing(root: Path) -> list[tuple[str, str]]:
    """(path, what it is): a file's bytes' length and head, a link's target."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel.startswith("lost+found"):
                continue
            if path.is_symlink():
                found.append((rel, "-> " + os.readlink(path)))
            elif path.is_dir():
                found.append((rel, "folder"))
            else:
                data = path.read_bytes()
                found.append((rel, f"{len(data)} {data[:8].hex()} {path.stat().st_mode & 0o777:o}"))
    return sorted(found)




@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("images")
    tree = make_tree(base / "tree")
    images = {"folder": tree}
    for name in PACKERS:
        images[name] = pack(tree, name, base / f"image-{name.replace('.', '-')}")
    return images


@pytest.mark.parametrize("name", list(PACKERS))
def test_every_format_gives_the_same_files(packed: dict[str, Path], name: str, tmp_path: Path) -> None:
    root = unpack_image(packed[name], tmp_path / "out dir")  # a blank: debugfs's command line quotes it
    assert root == tmp_path / "out dir"
    assert listing(root) == listing(packed["folder"])
    assert os.readlink(root / "bin/absolute-link") == "/etc/motd"  # kept as the image has it
    # a file with two names is one file, as a tree walk must count it (debugfs writes copies: relinked)
    assert (root / "bin/prog").stat().st_ino == (root / "bin/prog-again").stat().st_ino


def test_a_folder_is_returned_as_is(packed: dict[str, Path], tmp_path: Path) -> None:
    assert unpack_image(packed["folder"], tmp_path / "unused") == packed["folder"]
    assert not (tmp_path / "unused").exists()


def test_the_format_comes_from_the_bytes_not_the_name(packed: dict[str, Path]) -> None:
    kinds = {name: image_format(path) for name, path in packed.items()}
    assert kinds == {"folder": "folder", "tar": "tar", "tar.gz": "gz", "tar.xz": "xz", "tar.zst": "zst",
                     "cpio": "cpio", "cpio.gz": "gz", "cpio.xz": "xz", "cpio-odc": "cpio", "ext2": "ext",
                     "ext4": "ext", "squashfs": "squashfs"}
    assert image_format(Path("/bin/true")) is None


def tar_of(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for info, data in members:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data else None)
    return out.getvalue()


def info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, link
    return member


HOSTILE_TARS = {
    "dot-dot": ([(info("../escaped"), b"x")], "../escaped: leaves the image ('..' in the name)"),
    "absolute": ([(info("/tmp/escaped"), b"x")], "/tmp/escaped: leaves the image (absolute name)"),
    "through-a-link": ([(info("out", tarfile.SYMTYPE, "/tmp"), b""), (info("out/escaped"), b"x")],
                       "out/escaped: its folder out is a symbolic link"),
    "relative-link": ([(info("up", tarfile.SYMTYPE, "../.."), b""), (info("up/escaped"), b"x")],
                      "up/escaped: its folder up is a symbolic link"),
    "hard-link-out": ([(info("passwd", tarfile.LNKTYPE, "../../etc/passwd"), b"")],
                      "passwd: hard link leaves the image ('..' in the name)"),
    "hard-link-to-link": ([(info("l", tarfile.SYMTYPE, "/etc/passwd"), b""),
                           (info("h", tarfile.LNKTYPE, "l"), b"")],
                          "h: hard link to l, not an earlier file of the image"),
}


@pytest.mark.parametrize("case", list(HOSTILE_TARS))
def test_a_hostile_tar_is_refused_and_nothing_leaves(case: str, tmp_path: Path) -> None:
    members, message = HOSTILE_TARS[case]
    image = tmp_path / "hostile.tar"
    image.write_bytes(tar_of(members))
    dest = tmp_path / "deep" / "dest"
    with pytest.raises(InputError) as caught:
        unpack_image(image, dest)
    assert str(caught.value) == f"{image}: {message}"
    assert "\n" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "hostile.tar"]
    assert not (tmp_path / "escaped").exists() and not Path("/tmp/escaped").exists()


def newc(members: list[tuple[str, int, bytes]]) -> bytes:
    """A newc archive as given, order and names unchecked (a hostile one)."""
    out = io.BytesIO()
    for ino, (name, mode, data) in enumerate(members + [(cpio.TRAILER, 0, b"")], start=1):
        cpio._write_member(out, ino, mode, 1, name, data, (0, 0))
    return out.getvalue()


def test_a_hostile_cpio_is_refused(tmp_path: Path) -> None:
    image = tmp_path / "hostile.cpio"
    image.write_bytes(newc([("out", 0o120777, b"/tmp"), ("out/escaped", 0o100644, b"x")]))
    with pytest.raises(InputError, match=r"hostile.cpio: out/escaped: its folder out is a symbolic link$"):
        unpack_image(image, tmp_path / "dest")
    image.write_bytes(newc([("../escaped", 0o100644, b"x")]))
    with pytest.raises(InputError, match=r"hostile.cpio: \.\./escaped: leaves the image"):
        unpack_image(image, tmp_path / "dest2")
    image.write_bytes(newc([("big", 0o100644, b"x")])[:60])
    with pytest.raises(InputError, match=r"hostile.cpio: image: the archive ends inside a header$"):
        unpack_image(image, tmp_path / "dest3")
    assert not (tmp_path / "escaped").exists() and not Path("/tmp/escaped").exists()


def test_an_image_past_the_limits_is_refused(packed: dict[str, Path], tmp_path: Path) -> None:
    few = ImageLimits(max_entries=3)
    small = ImageLimits(max_bytes=1000)
    with pytest.raises(InputError, match=r"image-tar-gz: .*more than 3 entries$"):
        unpack_image(packed["tar.gz"], tmp_path / "a", few)
    with pytest.raises(InputError, match=r"image-cpio: bin/prog(-again)?: unpacks to more than 1000 bytes$"):
        unpack_image(packed["cpio"], tmp_path / "b", small)
    with pytest.raises(InputError, match=r"image-ext4: image: \d+ entries, more than 3$"):
        unpack_image(packed["ext4"], tmp_path / "c", few)
    with pytest.raises(InputError, match=r"image-squashfs: image: \d+ bytes in use, more than 1000$"):
        unpack_image(packed["squashfs"], tmp_path / "d", small)
    assert not any((tmp_path / "c").iterdir()) and not any((tmp_path / "d").iterdir())  # counted first


def test_what_cannot_be_read_is_one_line(packed: dict[str, Path], tmp_path: Path) -> None:
    cut = tmp_path / "cut.tar.xz"
    cut.write_bytes(packed["tar.xz"].read_bytes()[:200])
    plain = tmp_path / "plain.gz"
    plain.write_bytes(subprocess.run(["gzip", "-c"], input=b"just text\n" * 100, capture_output=True,
                                     check=True).stdout)
    broken_ext = tmp_path / "broken.ext4"
    broken_ext.write_bytes(packed["ext4"].read_bytes()[:2048])
    cases = {cut: "image: ", plain: "image: a gz-compressed stream holding neither a tar nor a cpio archive",
             broken_ext: "ext: ", Path("/bin/true"): "image: not an image"}
    for n, (image, start) in enumerate(cases.items()):
        with pytest.raises(InputError) as caught:
            unpack_image(image, tmp_path / f"out-{n}")
        assert str(caught.value).startswith(f"{image}: {start}"), str(caught.value)
        assert "\n" not in str(caught.value)


def test_rehearse_reads_an_image_as_a_tree(packed: dict[str, Path], tmp_path: Path) -> None:
    found = expand([str(packed["squashfs"]), str(packed["tar.zst"])], tmp_path)
    assert [(c.origin.input, c.origin.path) for c in found.candidates] == [
        (str(packed["squashfs"]), "bin/prog"), (str(packed["tar.zst"]), "bin/prog")]
    assert all(c.tree is not None and (c.tree / "etc/motd").is_file() for c in found.candidates)
    hostile = tmp_path / "hostile.tar"
    hostile.write_bytes(tar_of(HOSTILE_TARS["dot-dot"][0]))
    refused = expand([str(hostile)], tmp_path)
    assert [r.line() for r in refused.rejected] == [f"{hostile}: ../escaped: leaves the image ('..' in the name)"]
