"""Kconfig fragments: what they request and whether the final .config kept it.

Pure functions over text; the kernel build calls them around olddefconfig.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


@dataclass(frozen=True)
class Request:
    """One option a fragment asks for; value "n" means "not set"."""

    option: str
    value: str
    source: str  # "file:line", for the error message


@dataclass(frozen=True)
class Mismatch:
    request: Request
    actual: str  # "n" when the option is absent or not set

    def __str__(self) -> str:
        r = self.request
        return f"{r.option}={r.value} (got {self.actual}) from {r.source}"


def parse_config(text: str, source: str = "") -> list[Request]:
    """Requests in a fragment or a .config, in order; later lines win."""
    requests = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := _SET.match(line):
            requests.append(Request(m[1], m[2], f"{source}:{number}"))
        elif m := _UNSET.match(line):
            requests.append(Request(m[1], "n", f"{source}:{number}"))
    return requests


def options(text: str, source: str = "") -> dict[str, str]:
    """A .config (or a fragment) as {option: value}; later lines win."""
    return {r.option: r.value for r in parse_config(text, source)}


def parse_fragments(paths: list[Path]) -> list[Request]:
    """Every request of the fragments, the last one for each option winning."""
    final: dict[str, Request] = {}
    for path in paths:
        for request in parse_config(path.read_text(), str(path)):
            final[request.option] = request
    return list(final.values())


def mismatches(requests: list[Request], config_text: str) -> list[Mismatch]:
    """The requests that the final .config does not honour."""
    actual = options(config_text)
    return [
        Mismatch(r, actual.get(r.option, "n"))
        for r in requests
        if actual.get(r.option, "n") != r.value
    ]
