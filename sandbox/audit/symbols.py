"""The C library's 32-bit time interfaces and their 64-bit names, read from
sandbox/audit/time-symbols.toml (the data and its sources), and the one
question asked of them: which of a file's symbols say 32-bit time_t, which
say 64-bit.
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SYMBOLS_FILE = Path(__file__).with_name("time-symbols.toml")
OTHERS_FILE = Path(__file__).with_name("others-time-symbols.toml")  # lintian's and OE-core's, to compare
_TIME64_SUFFIX = re.compile(r"__\w+_time64")  # musl's and glibc's *_time64 names


@dataclass(frozen=True)
class TimeSymbols:
    time32: frozenset[str]  # names a 32-bit time_t program binds
    time64: frozenset[str]  # names only a 64-bit time_t program binds
    indirect: frozenset[str]  # time32 names that carry a time only for some requests
    raw: frozenset[str]  # system calls by number (syscall)

    def time32_used(self, names: Iterable[str]) -> tuple[str, ...]:
        """The time32 names among `names`: those that surely carry a time first."""
        found = {n for n in names if n in self.time32}
        return tuple(sorted(found, key=lambda n: (n in self.indirect, n)))

    def time64_used(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(n for n in set(names) if n in self.time64 or _TIME64_SUFFIX.fullmatch(n)))

    def raw_used(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(set(names) & self.raw))


def parse_symbols(document: dict) -> TimeSymbols:
    glibc, musl = document["glibc"], document["musl"]
    time32 = (set(glibc["redirects"]) | set(glibc["large-file"].values()) | set(glibc["legacy"]["names"])
              | set(musl["time32"]))
    time64 = set(glibc["redirects"].values()) | set(musl["redirects"].values())
    return TimeSymbols(frozenset(time32), frozenset(time64), frozenset(glibc["indirect"]["names"]),
                       frozenset(document["raw"]["names"]))


def load_symbols(path: Path = SYMBOLS_FILE) -> TimeSymbols:
    return parse_symbols(tomllib.loads(path.read_text()))


def load_others(path: Path = OTHERS_FILE) -> dict[str, frozenset[str]]:
    """Other tools' time32 lists by tool name (lintian, oe-core)."""
    return {tool: frozenset(table["names"]) for tool, table in tomllib.loads(path.read_text()).items()}


@dataclass(frozen=True)
class Comparison:
    tool: str
    misses: tuple[str, ...]  # time32 names of ours the tool does not know
    extra: tuple[str, ...]  # names it flags that glibc 2.36 gives no 64-bit time name


def compare(ours: TimeSymbols, tool: str, theirs: frozenset[str]) -> Comparison:
    return Comparison(tool, tuple(sorted(ours.time32 - theirs)), tuple(sorted(theirs - ours.time32)))
