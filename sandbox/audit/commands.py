"""What the runtime audit runs each program with (pure once the table is read).

    load_commands() -> Commands              sandbox/audit/commands.toml
    commands.with_overrides(["sqlite3=:memory: 'select 1'"])
    commands.for_file("sqlite3") -> Command  the table's, else the default (--version)

A user's override is `NAME=ARGS`: NAME is a file name (or a path as the
report shows it), ARGS split as a shell would (shlex), not run by one.
"""
from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from sandbox.base.errors import SandboxError

COMMANDS_FILE = Path(__file__).with_name("commands.toml")


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...] = ()  # after the program
    shell: str = ""  # a /bin/sh line with the program as "$0", instead of args
    source: str = "default"  # default, table or user: where it came from

    def shown(self, program: str) -> str:
        """The command line as a person would type it."""
        if self.shell:
            return f"sh -c {shlex.quote(self.shell)} {program}"
        return shlex.join([program, *self.args])


@dataclass(frozen=True)
class Commands:
    default: Command
    by_name: dict[str, Command] = field(default_factory=dict)

    def for_file(self, name: str) -> Command:
        """The command for a file shown as `name` (a path or a file name):
        the whole name first, then its last part, then the default."""
        return self.by_name.get(name) or self.by_name.get(name.rsplit("/", 1)[-1]) or self.default

    def with_overrides(self, overrides: list[str]) -> Commands:
        table = dict(self.by_name)
        for text in overrides:
            name, args = parse_override(text)
            table[name] = Command(args, source="user")
        return replace(self, by_name=table)


def parse_override(text: str) -> tuple[str, tuple[str, ...]]:
    """`NAME=ARGS` -> (NAME, ARGS split as a shell would)."""
    name, sep, args = text.partition("=")
    if not sep or not name.strip():
        raise SandboxError(f"--command {text!r}: give NAME=ARGS (sqlite3=':memory: \"select 1\"')")
    try:
        return name.strip(), tuple(shlex.split(args))
    except ValueError as err:
        raise SandboxError(f"--command {text!r}: {err}") from None


def parse_commands(text: str, file: str) -> Commands:
    data = tomllib.loads(text)
    by_name = {}
    for name, entry in data.get("program", {}).items():
        args, shell = entry.get("args", []), entry.get("shell", "")
        if bool(args) == bool(shell) or not all(isinstance(a, str) for a in args) or not isinstance(shell, str):
            raise SandboxError(f"{file}: program.{name}: give args (a list of strings) or shell (a string)")
        by_name[name] = Command(tuple(args), shell, "table")
    return Commands(Command(tuple(data.get("default", ["--version"]))), by_name)


def load_commands(path: Path = COMMANDS_FILE) -> Commands:
    return parse_commands(path.read_text(), str(path))
