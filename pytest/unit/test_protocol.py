"""The agent protocol, fed with captured transcripts (pytest/data/agent/)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from sandbox.guest.protocol import FrameParser, Noise, ProtocolError, Ready, Reply, encode_run, parse_transcript

DATA = Path(__file__).resolve().parent.parent / "data" / "agent"


def transcript(name: str) -> list[str]:
    return (DATA / name).read_bytes().decode("utf-8", "replace").split("\n")


def replies(events: list) -> list[Reply]:
    return [e for e in events if isinstance(e, Reply)]


def test_normal_transcript_gives_ready_then_every_reply_in_order() -> None:
    events = parse_transcript(transcript("normal.log"))
    assert events[0] == Ready("6.1.192+")
    got = replies(events)
    assert [r.id for r in got] == list(range(1, len(got) + 1))
    assert all(r.exit_code == 0 for r in got)
    first = [json.loads(line) for line in got[0].text.splitlines()]
    assert [(o["flavour"], o["call"]) for o in first] == [
        ("time32-syscall", "time"), ("time32-syscall", "gettimeofday"),
        ("time32-syscall", "clock_gettime")]
    assert not [e for e in events if isinstance(e, Noise)]


def test_garbage_between_frames_is_noise_and_replies_survive_intact() -> None:
    clean = replies(parse_transcript(transcript("normal.log")))
    events = parse_transcript(transcript("garbage.log"))
    assert replies(events) == clean
    noise = [e.line for e in events if isinstance(e, Noise)]
    assert "@@Y2038 HELLO 7" in noise and "RUN 9 ZWNobyBoaQ==" in noise
    assert len(noise) >= 6


@pytest.mark.parametrize("name", ["panic.log", "hang.log"])
def test_a_guest_that_stops_answering_leaves_no_half_reply(name: str) -> None:
    parser = FrameParser()
    events = [e for e in map(parser.feed, transcript(name)) if e]
    assert events == [Ready("6.1.192+")]
    half = ["@@Y2038 BEGIN 1", "aGVs", ""]  # the line goes quiet mid-reply
    assert [parser.feed(line) for line in half] == [None, None, None]
    # the reply is still open, not lost: its end completes it
    assert parser.feed("@@Y2038 STDERR 1") is None
    assert parser.feed("@@Y2038 END 1 0") == Reply(1, b"hel", b"", 0)


def test_garbage_inside_a_frame_is_an_error_not_a_wrong_answer() -> None:
    lines = ["@@Y2038 BEGIN 4", "aGVsbG8K", "\x00\xff noise", "@@Y2038 STDERR 4", "@@Y2038 END 4 0"]
    with pytest.raises(ProtocolError, match="reply 4: bad base64 in stdout"):
        parse_transcript(lines)


@pytest.mark.parametrize("lines, message", [
    (["@@Y2038 END 3 0"], "END without its BEGIN"),
    (["@@Y2038 BEGIN 1", "@@Y2038 STDERR 2"], "STDERR outside its reply"),
    (["@@Y2038 BEGIN x"], "malformed frame"),
    (["@@Y2038 BEGIN 1", "@@Y2038 END 1 zero"], "malformed frame"),
    (["@@Y2038 BEGIN -", "@@Y2038 STDERR -", "@@Y2038 END - 127"], "rejected a malformed RUN line"),
])
def test_broken_framing_is_reported(lines: list[str], message: str) -> None:
    with pytest.raises(ProtocolError, match=message):
        parse_transcript(lines)


def test_agent_rejecting_a_run_line_is_reported() -> None:
    with pytest.raises(ProtocolError, match="rejected a malformed RUN line"):
        parse_transcript(["@@Y2038 END - 127"])


def test_encode_run_round_trips_any_shell_text() -> None:
    command = "printf '%s\\n' \"a b\" 'c' | tr a-z A-Z; echo $((1+2)) >&2\n# ünïcode"
    line = encode_run(17, command)
    word, number, payload = line.decode().split(" ")
    assert (word, number) == ("RUN", "17") and payload.endswith("\n")
    assert base64.b64decode(payload).decode() == command


def test_reply_keeps_stdout_and_stderr_apart_with_exit_code() -> None:
    out, err = base64.b64encode(b"out\n").decode(), base64.b64encode(b"err\n").decode()
    events = parse_transcript(["@@Y2038 BEGIN 2", out, "@@Y2038 STDERR 2", err, "@@Y2038 END 2 3"])
    assert events == [Reply(2, b"out\n", b"err\n", 3)]
