"""Kernel source trees, as data: which Debian linux-source package, where
its tarball is, which folder of kernel-series/ holds its patches, and which
machines it is built for.

The default tree, 6.1, is what every kernel of the sandbox was built from
before 6.12 came: its build folders keep their names (no suffix) and its
cache keys their formula (the Debian version, which differs between the
trees, already tells two trees' kernels apart). A scenario names its tree
with the top-level key `tree` (default: the session's, `--tree`, itself 6.1
by default); the config fragments (kernel-series/config/) are shared.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from sandbox.base import paths
from sandbox.base.errors import SandboxError


@dataclass(frozen=True)
class Tree:
    name: str  # "6.1", "6.12": what `tree = ...` and `--tree` say
    package: str  # the Debian package shipping the tarball
    series_subfolder: str  # under kernel-series/: "" for 6.1, "6.12"
    machines: tuple[str, ...]  # the machines its kernels are built and booted for
    build_suffix: str  # after "<machine>-<variant>" in build and kernel folder names

    @property
    def tarball(self) -> Path:
        return Path("/usr/src") / f"{self.package}.tar.xz"

    @property
    def series_folder(self) -> Path:
        """Its patches and `series` file (read at call time: tests move kernel-series/)."""
        return paths.KERNEL_SERIES / self.series_subfolder if self.series_subfolder else paths.KERNEL_SERIES

    def folder_name(self, machine: str, variant: str) -> str:
        """'x86_64-series' for 6.1 (as before the trees), 'x86_64-series-6.12' for 6.12."""
        return f"{machine}-{variant}{self.build_suffix}"


DEFAULT = "6.1"

TREES: Mapping[str, Tree] = MappingProxyType({
    t.name: t
    for t in (
        Tree("6.1", "linux-source-6.1", "", ("x86_64", "i386", "armhf"), ""),
        # i386 on 6.12: the series compiles there (32-bit-only code checked),
        # but no kernel is built nor booted: the suite on 6.12 is x86_64 and armhf.
        Tree("6.12", "linux-source-6.12", "6.12", ("x86_64", "armhf"), "-6.12"),
    )
})


def unknown(name: str) -> str:
    """The one-line reason a tree name is refused, wherever it was given."""
    return f"unknown kernel tree '{name}' (known: {', '.join(TREES)})"


def tree(name: str) -> Tree:
    try:
        return TREES[name]
    except KeyError:
        raise SandboxError(unknown(name)) from None


def not_built_for(name: str, machine: str) -> str | None:
    """Why the tree has no kernel for this machine, or None when it has."""
    chosen = tree(name)
    if machine in chosen.machines:
        return None
    return f"the {chosen.name} tree is not built for {machine} (only {', '.join(chosen.machines)})"
