"""Reading an evidence folder someone may have sent: the one way any reader
of a results folder opens a file in it (sandbox/report/, tree-diff).

    read_bytes(folder, name) -> bytes | None     None: no such file
    read_text(folder, name)  -> str | None       UTF-8, bad bytes replaced
    read_json(folder, name)  -> object | None    bounded JSON (loads)
    loads(text, file)        -> object           the JSON parser every reader shares
    plain_name(raw, file, key) -> str            a file name taken from a file

What a folder cannot make us do, each refused with one InputError naming
the file and the key (exit 2):

- read outside it: `name` is one plain name (no '/', no '.' or '..', not
  absolute, no NUL), checked whether it is ours or came from a JSON file
  (charts.json's "file"); the file is opened with O_NOFOLLOW relative to
  the folder, itself opened with O_DIRECTORY|O_NOFOLLOW, so a symbolic link
  (to /etc/shadow, to /dev/zero) is refused, never followed;
- block or read without end: opened with O_NONBLOCK and checked with
  fstat, so a FIFO, a device or a socket is refused before a byte is read;
  a regular file is read to at most its kind's cap in LIMITS (named in the
  error), never further, even if it grows while read;
- exhaust the stack or the CPU when parsed: JSON nested more than
  JSON_DEPTH deep is refused before it is parsed (a 200,000-deep array
  cannot reach the recursive parser), NaN and Infinity (not JSON, and not
  what a run writes) and numbers past 64 bits (INT_DIGITS, a float's range)
  are refused with the key they sit at.

Pure but for the one open and bounded read of each file.
"""
from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.base import evidence as files
from sandbox.base.errors import InputError

MIB = 1 << 20
LIMITS: dict[str, int] = {
    files.RUN: 64 * MIB,            # each command's stdout and stderr (a guest's output is capped at ~10 MB)
    files.OBSERVATIONS: 256 * MIB,  # a probe of 100,000 calls writes ~30 MB
    files.VERDICTS: 64 * MIB,
    files.FACTS: 1 * MIB,           # ours: 1-2 KB
    files.SESSION: 4 * MIB,         # the host's package versions: ~5 KB
    files.CHARTS: 1 * MIB,          # an index of a few charts
    files.SCENARIO_COPY: 1 * MIB,   # what a scenario file may be (sandbox/scenario/guards.py MAX_FILE_BYTES)
    "chart": 16 * MIB,              # one PNG: ours are 60-120 KB
}
"""The most bytes read of each kind of evidence file ("chart": chart-<n>.png)."""
JSON_DEPTH = 64
"""Lists and objects nested deeper are refused (a run's files reach 5)."""
INT_DIGITS = 20
"""Digits of the longest integer read (2**64 has 20): a 309-digit one is past
a float's range (math.isfinite raises) and one of 4,300 past int()'s."""

_CHART = re.compile(r"chart-[0-9]{1,4}\.png")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def limit_of(name: str) -> int:
    """The cap of a file of this name (a name not in LIMITS: the smallest)."""
    return LIMITS["chart"] if _CHART.fullmatch(name) else LIMITS.get(name, min(LIMITS.values()))


def plain_name(raw: object, file: str, key: str) -> str:
    """`raw` as one file name inside the folder, or InputError naming file and key."""
    if not isinstance(raw, str):
        raise InputError(file, key, f"expected a file name, got {type(raw).__name__}")
    if not raw or raw in (".", "..") or "/" in raw or "\0" in raw:
        raise InputError(file, key, f"{raw!r} is not one plain file name inside the folder")
    return raw


def kind_of(mode: int) -> str:
    """'a FIFO', 'a symbolic link', ... ('' for a regular file)."""
    if stat.S_ISREG(mode):
        return ""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def regular(folder: Path, name: str) -> bool:
    """Whether `name` is a regular file in `folder` (a symbolic link is not):
    what a page may link to."""
    try:
        return not kind_of(os.lstat(folder / plain_name(name, str(folder), "file")).st_mode)
    except OSError:
        return False


def read_bytes(folder: Path, name: str, limit: int | None = None) -> bytes | None:
    """The bytes of regular file `name` in `folder`, at most its cap; None when
    there is no such file (or no such folder)."""
    where = str(folder / plain_name(name, str(folder), "file"))
    cap = limit_of(name) if limit is None else limit
    try:
        directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise InputError(str(folder), "folder", _why(err, "not a folder of evidence")) from None
    try:
        try:
            fd = os.open(name, _OPEN_FLAGS, dir_fd=directory)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise InputError(where, "file", _why(err, _kind_at(directory, name))) from None
        try:
            return _bounded(fd, where, cap)
        finally:
            os.close(fd)
    finally:
        os.close(directory)


def _kind_at(directory: int, name: str) -> str:
    try:
        return kind_of(os.lstat(name, dir_fd=directory).st_mode) or "a regular file"
    except OSError:
        return "not readable"


def _why(err: OSError, kind: str) -> str:
    if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # O_NOFOLLOW on a link
        return f"{kind}: evidence is read only from regular files inside the folder, never through a link"
    return f"cannot read: {err.strerror or err}"


def _bounded(fd: int, where: str, cap: int) -> bytes:
    info = os.fstat(fd)
    kind = kind_of(info.st_mode)
    if kind:
        raise InputError(where, "file", f"{kind}, not a regular file: evidence is read only from regular files")
    if info.st_size > cap:
        raise InputError(where, "file", f"{info.st_size} bytes, past the cap of {cap} bytes for this file")
    chunks, size = [], 0
    while size <= cap:
        chunk = os.read(fd, min(1 << 20, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > cap:  # it grew while read
        raise InputError(where, "file", f"more than the cap of {cap} bytes for this file")
    return b"".join(chunks)


def read_text(folder: Path, name: str) -> str | None:
    data = read_bytes(folder, name)
    return None if data is None else data.decode("utf-8", "replace")


def read_json(folder: Path, name: str) -> Any:
    """The JSON document of `name` (None when there is no such file);
    InputError when it is not whole, bounded JSON."""
    data = read_bytes(folder, name)
    return None if data is None else loads(data.decode("utf-8", "replace"), str(folder / name))


class NotJson(InputError):
    """Text that is not JSON at all (a torn line, a file cut short): damage a
    reader may name and go on past, where a refused value is not."""


class _Refused:
    """A value the bounded parser stands in for what it refuses, to find its key."""

    def __init__(self, why: str) -> None:
        self.why = why


class _Stop(ValueError):
    pass


def _raise(_: str) -> Any:
    raise _Stop


def _int(text: str) -> int:
    if len(text.lstrip("-")) > INT_DIGITS:
        raise _Stop
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Stop
    return value


def _marked_int(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    return _Refused(f"an integer of {digits} digits, past the {INT_DIGITS} of 64 bits") if digits > INT_DIGITS \
        else int(text)


def _marked_float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text} is past a float's range")


def _marked_constant(text: str) -> _Refused:
    return _Refused(f"{text} is not a JSON number (JSON has no NaN or Infinity)")


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def too_deep(text: str, limit: int = JSON_DEPTH) -> int | None:
    """The character where `text` nests deeper than `limit` lists or objects
    (strings skipped), or None: found without recursion, before any parser."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for token in _TOKENS.finditer(text):
        c = token.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return token.start()
        elif c in "]}":
            depth -= 1
    return None


def loads(text: str, file: str, key: str = "json") -> Any:
    """JSON, bounded: at most JSON_DEPTH deep, no NaN or Infinity, integers of
    at most INT_DIGITS digits; else one InputError naming the file and the key
    (`key`: where the text sits, a line of a .jsonl)."""
    at = too_deep(text)
    if at is not None:
        raise InputError(file, key, f"nested more than {JSON_DEPTH} lists or objects deep (at character {at})")
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_raise)
    except _Stop:
        raise _refusal(text, file, key) from None
    except RecursionError:  # not reached past too_deep; kept so that no document can give a traceback
        raise InputError(file, key, f"nested more than {JSON_DEPTH} lists or objects deep") from None
    except ValueError as err:
        raise NotJson(file, key, f"not JSON: {err}") from None


def _refusal(text: str, file: str, key: str) -> InputError:
    """The error of the first refused value, with its key (parsed again, marking it)."""
    document = json.loads(text, parse_int=_marked_int, parse_float=_marked_float, parse_constant=_marked_constant)
    found = first(document, lambda value: isinstance(value, _Refused))
    if found is None:  # cannot happen: the first parse stopped on one
        return InputError(file, key, "a value past the bounds of evidence")
    path, value = found
    return InputError(file, f"{key}{path}" if key != "json" or not path else path.lstrip("."), value.why)


def first(document: Any, test: Callable[[Any], bool]) -> tuple[str, Any] | None:
    """(its key path, e.g. '.charts[0].file', the value) of the first value
    passing `test`, walked without recursion."""
    pending: list[tuple[str, Any]] = [("", document)]
    while pending:
        path, value = pending.pop()
        if test(value):
            return path, value
        if isinstance(value, dict):
            pending += reversed([(f"{path}.{k}", v) for k, v in value.items()])
        elif isinstance(value, list):
            pending += reversed([(f"{path}[{i}]", v) for i, v in enumerate(value)])
    return None


def damage(name: str, data: bytes | None) -> str:
    """Why a JSON file of a run, read as `data` (None: missing), is not a whole
    document ("" when it is): what a run killed while writing leaves."""
    if data is None:
        return f"{name} is missing"
    if not data:
        return f"{name} is empty"
    if not data.strip(b"\0"):
        return f"{name} holds only NUL bytes ({len(data)})"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{name} is not UTF-8 text"
    if too_deep(text) is not None:
        return ""  # whole or not, loads() refuses it
    try:
        json.loads(text, parse_int=len, parse_float=len, parse_constant=len)  # the syntax only: no int() of 5,000 digits
    except json.JSONDecodeError as err:
        ended = text.rstrip().endswith(("}", "]"))  # a document cut short ends inside it
        where = f"{err.msg} at character {err.pos}" if ended else "it ends early (truncated)"
        return f"{name} is not whole JSON: {where}"
    return ""
