"""The guest agent's line protocol, apart from the kernel console.

Host to guest, one line per command:
    RUN <id> <base64 of a shell command>
Guest to host:
    @@Y2038 READY <kernel release>          once, when the agent starts
    @@Y2038 BEGIN <id>                      then base64 of stdout
    @@Y2038 STDERR <id>                     then base64 of stderr
    @@Y2038 END <id> <exit code>
Anything else on the line is noise: kept, never fatal. Parsing is a pure
state machine over lines, so it is tested with captured transcripts.
"""
from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Iterable, Union

MARK = "@@Y2038"


class ProtocolError(Exception):
    """The agent said something that breaks the framing."""


@dataclass(frozen=True)
class Ready:
    release: str


@dataclass(frozen=True)
class Reply:
    id: int
    stdout: bytes
    stderr: bytes
    exit_code: int

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


@dataclass(frozen=True)
class Noise:
    line: str


Event = Union[Ready, Reply, Noise]


def encode_run(command_id: int, command: str) -> bytes:
    payload = base64.b64encode(command.encode()).decode()
    return f"RUN {command_id} {payload}\n".encode()


def _decode(chunks: list[str], command_id: int, part: str) -> bytes:
    try:
        return base64.b64decode("".join(chunks), validate=True)
    except (binascii.Error, ValueError) as err:
        raise ProtocolError(f"reply {command_id}: bad base64 in {part}: {err}") from None


@dataclass
class FrameParser:
    """Feed it lines; it returns an event when one is complete."""

    _id: int | None = None
    _part: str = ""
    _out: list[str] = field(default_factory=list)
    _err: list[str] = field(default_factory=list)

    def feed(self, raw: str) -> Event | None:
        line = raw.strip("\r\n\0 ")
        words = line.split()
        if not words or words[0] != MARK or len(words) < 2:
            return self._payload(line)
        kind, args = words[1], words[2:]
        handler = {"READY": self._ready, "BEGIN": self._begin,
                   "STDERR": self._stderr, "END": self._end}.get(kind)
        if handler is None:
            return Noise(line)
        return handler(args, line)

    def _payload(self, line: str) -> Event | None:
        if self._id is None:
            return Noise(line) if line else None
        if line:
            (self._out if self._part == "stdout" else self._err).append(line)
        return None

    def _ready(self, args: list[str], line: str) -> Event:
        return Ready(" ".join(args))

    def _begin(self, args: list[str], line: str) -> Event | None:
        if args == ["-"]:  # the agent could not read the command's id
            raise ProtocolError("agent rejected a malformed RUN line")
        if len(args) != 1 or not args[0].isdigit():
            raise ProtocolError(f"malformed frame: {line!r}")
        self._id, self._part, self._out, self._err = int(args[0]), "stdout", [], []
        return None

    def _stderr(self, args: list[str], line: str) -> Event | None:
        if self._id is None or args != [str(self._id)]:
            raise ProtocolError(f"STDERR outside its reply: {line!r}")
        self._part = "stderr"
        return None

    def _end(self, args: list[str], line: str) -> Event:
        if len(args) != 2 or not args[1].lstrip("-").isdigit():
            raise ProtocolError(f"malformed frame: {line!r}")
        if args[0] == "-":  # the agent could not read the command line
            raise ProtocolError("agent rejected a malformed RUN line")
        if self._id is None or args[0] != str(self._id):
            raise ProtocolError(f"END without its BEGIN: {line!r}")
        reply = Reply(self._id, _decode(self._out, self._id, "stdout"),
                      _decode(self._err, self._id, "stderr"), int(args[1]))
        self._id = None
        return reply


def parse_transcript(lines: Iterable[str]) -> list[Event]:
    """Every event in a captured agent transcript, in order."""
    parser = FrameParser()
    return [e for e in map(parser.feed, lines) if e is not None]
