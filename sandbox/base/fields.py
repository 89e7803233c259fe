"""Reading TOML-shaped input: the one set of checks every reader shares.

A `Where` is the file and the dotted key path an error is reported at; every
check takes one and fails with one InputError naming both, for example

    scenarios/clock/rollover.toml: step[2].expect.time64: expected a table, got a list
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeGuard

from sandbox.base.errors import InputError

TYPE_NAMES: Mapping[type, str] = {bool: "a boolean", int: "an integer", float: "a number",
                                  str: "a string", list: "a list", dict: "a table"}


def type_name(raw: object) -> str:
    """'a string', 'a table', ...: how an error names the type it got."""
    return TYPE_NAMES.get(type(raw), type(raw).__name__)


def is_int(raw: object) -> TypeGuard[int]:
    return isinstance(raw, int) and not isinstance(raw, bool)


def is_number(raw: object) -> TypeGuard[int | float]:
    return isinstance(raw, (int, float)) and not isinstance(raw, bool)


@dataclass(frozen=True)
class Where:
    """The file and dotted key path an error is reported at."""

    file: str
    key: str = ""

    def at(self, name: str) -> Where:
        return Where(self.file, f"{self.key}.{name}" if self.key else name)

    def item(self, index: int) -> Where:
        return Where(self.file, f"{self.key}[{index}]")

    def error(self, message: str) -> InputError:
        return InputError(self.file, self.key or "(file)", message)

    def fail(self, message: str) -> NoReturn:
        raise self.error(message)


def check_keys(table: Mapping[str, object], known: frozenset[str] | tuple[str, ...], where: Where,
               what: str = "") -> None:
    for key in table:
        if key not in known:
            where.at(key).fail(f"unknown key '{key}'{what} (known: {', '.join(sorted(known))})")


def require(table: Mapping[str, object], key: str, where: Where) -> object:
    if key not in table:
        where.at(key).fail("missing (required)")
    return table[key]


def string(raw: object, where: Where) -> str:
    if not isinstance(raw, str):
        where.fail(f"expected a string, got {type_name(raw)}")
    if not raw.strip():
        where.fail("must not be empty")
    return raw


def table(raw: object, where: Where) -> Mapping[str, object]:
    if not isinstance(raw, dict):
        where.fail(f"expected a table, got {type_name(raw)}")
    return raw


def strings(raw: object, where: Where) -> tuple[str, ...]:
    """A list of strings (possibly empty)."""
    if not isinstance(raw, list):
        where.fail(f"expected a list of strings, got {type_name(raw)}")
    for index, item in enumerate(raw):
        if not isinstance(item, str):
            where.item(index).fail(f"expected a string, got {type_name(item)}")
    return tuple(raw)


def names(raw: object, where: Where, known: tuple[str, ...] | None, what: str) -> tuple[str, ...]:
    """A non-empty list of distinct names, each among `known` (None: any)."""
    if not isinstance(raw, list) or not raw:
        where.fail(f"expected a non-empty list of {what}s")
    for index, name in enumerate(raw):
        if not isinstance(name, str):
            where.item(index).fail(f"expected a {what} name, got {type_name(name)}")
        if known is not None and name not in known:
            where.item(index).fail(f"unknown {what} '{name}' (known: {', '.join(known)})")
        if name in raw[:index]:
            where.item(index).fail(f"{what} '{name}' listed twice")
    return tuple(raw)


def read_text(path: Path) -> str:
    """A file of ours as UTF-8 text; InputError naming it when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"cannot read: {err}") from None
