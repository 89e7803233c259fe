"""--kernel-tree PATH without building: the tree checked, its config merged
with our fragments, the cache key, the mirror, the options, a failed build's
one line (sandbox/build/kernel_tree.py, sandbox/app/cli.py)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sandbox.app import cli, kernel_args
from sandbox.base.errors import SandboxError
from sandbox.base.machines import MACHINES, Machine
from sandbox.build import kernel_tree
from sandbox.build.own_kernel import OwnKernel
from sandbox.build.kernel_tree import (check_tree, fragments_for, machine_of_config, merge_config,
                                       tree_identity, tree_key)

MAKEFILE = "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n"


def a_tree(root: Path, makefile: str = MAKEFILE) -> Path:
    (root / "kernel").mkdir(parents=True)
    (root / "Makefile").write_text(makefile)
    (root / "kernel" / "time.c").write_text("int x;\n")
    return root


def test_a_tree_is_a_folder_with_a_versioned_makefile(tmp_path: Path) -> None:
    assert check_tree(a_tree(tmp_path / "linux")) == "6.1"
    with pytest.raises(SandboxError, match=r"^--kernel-tree .*/gone: no such folder$"):
        check_tree(tmp_path / "gone")
    for bad, makefile in (("plain", "all:\n\techo hi\n"), ("half", "VERSION = 6\n")):
        with pytest.raises(SandboxError, match=rf"{bad}: not a Linux kernel tree \(no Makefile with VERSION"):
            check_tree(a_tree(tmp_path / bad, makefile))
    (tmp_path / "file").write_text(MAKEFILE)
    with pytest.raises(SandboxError, match="file: not a Linux kernel tree"):
        check_tree(tmp_path / "file")


def test_a_tree_built_in_place_is_refused(tmp_path: Path) -> None:
    tree = a_tree(tmp_path / "linux")
    (tree / "arch/x86/include/generated").mkdir(parents=True)
    with pytest.raises(SandboxError, match=r"built in place \(arch/x86/include/generated\).*--kernel IMAGE"):
        check_tree(tree)


def test_our_fragments_are_common_and_the_machine_never_the_series() -> None:
    for name, m in MACHINES.items():
        assert [p.name for p in fragments_for(m)] == ["common.config", m.kernel.config_fragment]


def test_the_machine_of_a_config() -> None:
    assert machine_of_config("CONFIG_X86_64=y\nCONFIG_X86=y\n") == "x86_64"
    assert machine_of_config("CONFIG_X86_32=y\n# CONFIG_X86_64 is not set\n") == "i386"
    assert machine_of_config("CONFIG_ARM=y\n") == "armhf"
    assert machine_of_config("CONFIG_ARM64=y\n") is None


def test_our_options_are_set_on_top_of_the_trees_config() -> None:
    base = "CONFIG_X86_64=y\n# CONFIG_TMPFS is not set\nCONFIG_SYSVIPC=y\nCONFIG_HZ_1000=y\n"
    merged = merge_config(base, [("common.config", "CONFIG_TMPFS=y\n# CONFIG_SYSVIPC is not set\nCONFIG_FUTEX=y\n"),
                                 ("x86_64.config", "CONFIG_FUTEX=n\nCONFIG_PVH=y\n")])
    assert merged.splitlines() == ["CONFIG_X86_64=y", "CONFIG_HZ_1000=y", "CONFIG_TMPFS=y",
                                   "# CONFIG_SYSVIPC is not set", "# CONFIG_FUTEX is not set", "CONFIG_PVH=y"]
    # a choice: ours is read after the base's, so it wins (kconfig keeps the last =y)
    assert merge_config("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\n",
                        [("c", "CONFIG_HZ_100=y\n")]).splitlines() == ["CONFIG_HZ_250=y", "CONFIG_HZ_100=y"]
    assert merge_config("", [("c", "CONFIG_A=y\n")]) == "CONFIG_A=y\n"


def test_each_input_changes_the_key_nothing_else_does() -> None:
    frags = [("common.config", "CONFIG_A=y\n"), ("x86_64.config", "CONFIG_B=y\n")]
    key = tree_key("git:1", "x86_64", None, frags)
    assert key == tree_key("git:1", "x86_64", None, list(frags))
    others = {tree_key("git:2", "x86_64", None, frags), tree_key("git:1", "i386", None, frags),
              tree_key("git:1", "x86_64", "", frags), tree_key("git:1", "x86_64", "CONFIG_C=y\n", frags),
              tree_key("git:1", "x86_64", None, [frags[0], ("x86_64.config", "CONFIG_B=n\n")])}
    assert key not in others and len(others) == 5


def test_a_plain_trees_identity_follows_its_files(tmp_path: Path) -> None:
    tree = a_tree(tmp_path / "linux")
    before = tree_identity(tree)
    assert before.startswith("mtime:") and tree_identity(tree) == before
    os.utime(tree / "kernel" / "time.c", ns=(1, 10**19))
    assert tree_identity(tree) != before


def test_a_git_trees_identity_is_head_and_its_changes_read_only(tmp_path: Path) -> None:
    tree = a_tree(tmp_path / "linux")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    index = (tree / ".git" / "index").stat().st_mtime_ns
    clean = tree_identity(tree)
    assert clean.startswith("git:") and tree_identity(tree) == clean
    (tree / "kernel" / "time.c").write_text("int y;\n")
    dirty = tree_identity(tree)
    (tree / "kernel" / "new.c").write_text("int z;\n")
    assert len({clean, dirty, tree_identity(tree)}) == 3
    assert (tree / ".git" / "index").stat().st_mtime_ns == index  # the user's index untouched


def test_a_tree_with_a_config_is_built_from_a_mirror_without_it(tmp_path: Path) -> None:
    tree = a_tree(tmp_path / "linux")
    (tree / ".config").write_text("CONFIG_X86_64=y\n")
    (tree / ".git").mkdir()
    mirror = kernel_tree._mirror(tree, tmp_path / "mirror", "id1")
    assert (mirror / "kernel" / "time.c").resolve() == tree / "kernel" / "time.c"
    assert not (mirror / ".config").exists() and not (mirror / ".git").exists()
    (tree / "kernel" / "new.c").write_text("")
    kernel_tree._mirror(tree, mirror, "id1")
    assert not (mirror / "kernel" / "new.c").exists()  # same identity: kept
    kernel_tree._mirror(tree, mirror, "id2")
    assert (mirror / "kernel" / "new.c").is_symlink()


def test_a_config_for_another_machine_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path / "cache"))
    tree = a_tree(tmp_path / "linux")
    (tree / ".config").write_text("CONFIG_ARM=y\n")
    with pytest.raises(SandboxError, match=r"linux: its \.config is for armhf, not x86_64$"):
        kernel_tree.build_tree(tree, MACHINES["x86_64"])
    (tree / ".config").write_text("CONFIG_ARM64=y\n")
    with pytest.raises(SandboxError, match=r"linux: its \.config is for no machine here$"):
        kernel_tree.build_tree(tree, None)


def test_rehearse_builds_for_the_machine_of_the_trees_config(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path / "cache"))
    tree = a_tree(tmp_path / "linux")
    (tree / ".config").write_text("CONFIG_X86_32=y\n")
    made: list[tuple[Path, tuple[str, ...]]] = []

    def make(source: Path, build: Path, machine: object, *targets: str, **_: object) -> None:
        made.append((source, targets))
        raise SandboxError("'make' failed")
    monkeypatch.setattr(kernel_tree, "_make", make)
    with pytest.raises(SandboxError, match="the kernel build failed"):
        kernel_tree.build_tree(tree, None)
    build = next((tmp_path / "cache" / "build").glob("i386-tree-*"))
    assert made[0][1] == ("olddefconfig",) and made[0][0] != tree  # its .config: from the mirror
    assert (build / ".config").read_text().startswith("CONFIG_X86_32=y\n")
    assert not (made[0][0] / ".config").exists() and (tree / ".config").is_file()


def test_a_failed_build_is_one_line_naming_the_tree_and_the_log(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path / "cache"))
    tree = a_tree(tmp_path / "linux")
    made: list[tuple[Path, tuple[str, ...]]] = []

    def make(source: Path, build: Path, machine: object, *targets: str, **_: object) -> None:
        made.append((source, targets))
        if targets == ("tinyconfig",):
            (build / ".config").write_text("CONFIG_X86_64=y\n")
        if targets == ("vmlinux",):
            raise SandboxError("'make' failed with exit code 2: see log")
    monkeypatch.setattr(kernel_tree, "_make", make)
    with pytest.raises(SandboxError) as err:
        kernel_tree.build_tree(tree, MACHINES["x86_64"])
    assert [t for _, t in made] == [("tinyconfig",), ("olddefconfig",), ("vmlinux",)]
    assert all(source == tree for source, _ in made)  # no .config: the tree itself, only read
    assert str(err.value).startswith(f"--kernel-tree {tree}: the kernel build failed (log: {tmp_path}/cache/build/")
    assert "\n" not in str(err.value) and sorted(p.name for p in tree.iterdir()) == ["Makefile", "kernel"]
    config = next((tmp_path / "cache" / "build").glob("x86_64-tree-*/.config")).read_text()
    assert config.startswith("CONFIG_X86_64=y\n") and "CONFIG_SERIAL_8250_CONSOLE=y" in config


@pytest.mark.parametrize("verb,extra,machine", [("run", ["--machine", "i386", "a.toml"], "i386"),
                                                ("rehearse", ["--machine", "armhf", "x"], "armhf"),
                                                ("rehearse", ["--kernel-machine", "armhf", "x"], "armhf"),
                                                ("rehearse", ["x"], None),
                                                ("system", ["debian12-armhf"], None)])
def test_every_booting_verb_takes_kernel_tree(verb: str, extra: list[str], machine: str | None,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[Path, str | None]] = []

    def build_tree(tree: Path, m: Machine | None) -> str:
        built.append((tree, m and m.name))
        return "own"

    monkeypatch.setattr(kernel_args, "build_tree", build_tree)
    args = cli.parser().parse_args([verb, "--kernel-tree", "/src/linux", *extra])
    assert kernel_args.own_kernel_of(args) == "own" and built == [(Path("/src/linux"), machine)]


def test_kernel_tree_or_an_image_not_both() -> None:
    args = cli.parser().parse_args(["run", "--kernel-tree", "/src/linux", "--kernel", "bzImage", "a.toml"])
    with pytest.raises(SandboxError, match="--kernel-tree PATH replaces --kernel IMAGE"):
        kernel_args.own_kernel_of(args)


def test_the_kernel_is_named_with_its_tree(tmp_path: Path) -> None:
    own = OwnKernel(tmp_path / "vmlinux", tmp_path / "config", "x86_64", False, True, tree=Path("/src/linux"))
    assert own.describe().splitlines()[0] == "own kernel built from /src/linux (no series: time32 calls not logged)"


def test_an_incbin_object_is_made_again_without_ccache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """armhf's piggy.o .incbin's the compressed Image, which ccache never
    hashes: a hit once booted a v1 kernel's payload from a v2 zImage."""
    from sandbox.build import kernel
    piggy = tmp_path / "arch/arm/boot/compressed/piggy.o"
    piggy.parent.mkdir(parents=True)
    piggy.write_bytes(b"stale")
    made: list[tuple[tuple[str, ...], dict[str, str] | None, bool]] = []

    def make(source: Path, build: Path, machine: object, *targets: str, env: dict[str, str] | None = None,
             **_: object) -> None:
        made.append((targets, env, piggy.exists()))
    monkeypatch.setattr(kernel, "_make", make)
    kernel.make_image(tmp_path / "src", tmp_path, MACHINES["armhf"], tmp_path / "log")
    assert made == [(("zImage",), None, True), (("zImage",), {"CCACHE_DISABLE": "1"}, False)]
    made.clear()
    kernel.make_image(tmp_path / "src", tmp_path, MACHINES["x86_64"], tmp_path / "log")
    assert made == [(("vmlinux",), None, False)]
