"""Errors the user sees as one line."""
from __future__ import annotations


class SandboxError(Exception):
    """A failure the user can act on; printed as one line, no traceback."""


class InputError(SandboxError):
    """Bad input: names the file and the key at fault."""

    def __init__(self, file: str, key: str, message: str) -> None:
        self.file = file
        self.key = key
        self.message = message
        super().__init__(f"{file}: {key}: {message}")
