"""Kernel variants, as data: which sources and which extra config fragments.

Every kernel is tinyconfig + common.config + the machine's fragment; a
variant says whether kernel-series/series is applied and which fragments
(under kernel-series/config/) follow. A scenario names its variant with the
top-level key `kernel` (default "series").
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Variant:
    name: str
    series: bool  # apply kernel-series/series on top of Debian's tree
    fragments: tuple[str, ...]  # after common.config and the machine's fragment
    about: str


DEFAULT = "series"

VARIANTS: Mapping[str, Variant] = MappingProxyType({
    v.name: v
    for v in (
        Variant("series", True, ("series.config", "kunit.config"),
                "Debian's tree + kernel-series/, with the time32 policy and the KUnit tests"),
        Variant("pristine", False, (),
                "Debian's tree as shipped: what the series changes, seen from before"),
        Variant("strict", True, ("strict.config",),
                "the series with COMPAT_32BIT_TIME=n: no 32-bit time syscalls at all"),
    )
})
