"""Errors the user sees as one line."""
from __future__ import annotations

import re
import signal

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """The text with every control character escaped (\\x1b, \\n, \\u202e):
    what a hostile file name or key holds must not reach the terminal raw."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


_CONTROL_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
LINE_SHOWN = 500
"""Characters of one printed line; the rest is cut (a 900 KB title or stdin is not printed whole)."""
MESSAGE_SHOWN = 1000
"""Characters of one error line."""


def cut(line: str, limit: int = LINE_SHOWN) -> str:
    """The line, or its first `limit` characters and how many were left out."""
    return line if len(line) <= limit else f"{line[:limit]}... ({len(line) - limit} more characters)"


def shown(text: str, limit: int = LINE_SHOWN) -> str:
    """Text for a terminal or report.txt: control characters escaped but
    newlines and tabs, each line cut at `limit` characters (what a scenario's
    args, argv, stdin or title hold must not reach the terminal raw or whole)."""
    escaped = _CONTROL_IN_TEXT.sub(lambda m: repr(m.group())[1:-1], text)
    return "\n".join(cut(line, limit) for line in escaped.split("\n"))


class SandboxError(Exception):
    """A failure the user can act on; printed as one line, no traceback."""


class InputError(SandboxError):
    """Bad input: names the file and the key at fault."""

    def __init__(self, file: str, key: str, message: str) -> None:
        self.file = file
        self.key = key
        self.message = message
        super().__init__(cut(printable(f"{file}: {key}: {message}"), MESSAGE_SHOWN))


class Interrupted(KeyboardInterrupt):
    """A signal (SIGINT, SIGTERM, SIGHUP) asked the run to stop: raised in the
    main thread so that every `with` block unwinds and stops its QEMU."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)
