"""Paths the user typed, taken from the folder they typed them in.

just runs every recipe from the repository root; the justfile's `sandbox`
line passes the folder `just` was typed in (`invocation_directory()`) as
CALLER_DIR, so `just run ../mine.toml` in a subfolder means that folder's
`../mine.toml`, not the repository's."""
from __future__ import annotations

import os
from pathlib import Path

from sandbox.base import paths

CALLER_DIR = "Y2038_CALLER_DIR"


def caller_path(text: str) -> Path:
    """A path the user typed, relative to the folder they typed it in: the
    caller's folder when `just` moved to the repository root, else (Python
    run directly, or `just --working-directory DIR`) the current folder."""
    path = Path(text)
    caller = os.environ.get(CALLER_DIR)
    if path.is_absolute() or not caller or Path.cwd() != paths.REPO:
        return path
    return Path(caller) / path


def caller_input(text: str) -> str:
    """A rehearse input: a file or folder from the caller's folder when one is
    there, else as typed (<userland>:<package> is no path)."""
    path = caller_path(text)
    return str(path) if os.path.lexists(path) else text
