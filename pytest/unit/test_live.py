"""`just demo --live` (sandbox/app/live.py) without booting: the captured
transcript of a live run on x86_64 (pytest/data/agent/live.log) replayed
through the ordinary run path, the live view printing each round."""
from __future__ import annotations

import io
import json
from pathlib import Path

from captured_results import fake_target
from replay_guest import ReplayGuest, captured

from sandbox.app.jobs import run_and_judge
from sandbox.app.live import LIVE_SCENARIO, LiveView, live_start
from sandbox.base.machines import MACHINES
from sandbox.guest.protocol import Reply
from sandbox.guest.qemu import BootRequest
from sandbox.scenario import suite

FLAVOURS = MACHINES["x86_64"].toolchain.flavours


class Watched(ReplayGuest):
    """The replay guest, noting how many rounds the view had printed at each reply."""

    view: LiveView | None = None
    rounds_seen: list[int] = []

    def run(self, command, deadline):
        reply = super().run(command, deadline)
        Watched.rounds_seen.append(Watched.view.rounds if Watched.view else -1)
        return reply


def test_a_live_run_prints_each_round_as_its_last_flavour_answers(tmp_path: Path) -> None:
    transcript, console = captured("live")
    out = io.StringIO()
    view = LiveView(FLAVOURS, out, colour=False)
    Watched.view, Watched.rounds_seen = view, []

    def start(request: BootRequest) -> Watched:
        return Watched(request, transcript, console)
    scenario = suite.load(LIVE_SCENARIO)
    judged = run_and_judge(fake_target(), scenario, tmp_path / "clock-live" / "x86_64", live_start(view, start))
    assert judged.passed and len(judged.result.verdicts) == 8
    lines = out.getvalue().splitlines()
    assert lines[1] == "live: clock_gettime() in every flavour, about once a second (guest kernel 6.1.192+)"
    assert lines[2].split() == ["guest", "time", *FLAVOURS]
    rows = [line for line in lines[3:] if line[:2] == "03"]
    assert view.rounds == 14  # read; shown one per guest second, 03:14:03 to 03:14:14
    assert [row[:8] for row in rows] == [f"03:14:{s:02d}" for s in range(3, 15)] and view.shown == 12
    assert all(len(line) <= 100 for line in lines)
    marker = next(n for n, line in enumerate(lines) if line.startswith("---- 03:14:08Z"))
    assert lines[marker - 1].startswith("03:14:07") and lines[marker + 1].startswith("03:14:08")
    assert lines[marker + 1].split()[1:] == ["1901-12-13", "20:45:52", "*", "EOVERFLOW",
                                             "2038-01-19", "03:14:08", "2038-01-19", "03:14:08"]
    # each round is printed when its fourth flavour answers, before the next command
    # (rounds_seen[i]: the rounds printed before reply i; replies: set-clock, t00 x 4, wait)
    assert Watched.rounds_seen[:6] == [0, 0, 0, 0, 0, 1]
    evidence = judged.record.evidence
    for name in ("console.log", "agent.log", "observations.jsonl", "run.json", "verdicts.json", "facts.json",
                 "scenario.toml"):
        assert (evidence / name).is_file(), name


def test_the_view_flushes_a_short_round_and_colours_only_a_terminal() -> None:
    out = io.StringIO()
    view = LiveView(("time32-syscall", "time64"), out, colour=True)

    def reply(*records: dict[str, object]) -> Reply:
        return Reply(1, "".join(json.dumps({"probe": "clock", **r}) + "\n" for r in records).encode(), b"", 0)
    view.reply(reply({"flavour": "time32-syscall", "call": "clock_gettime", "seconds": -2147483647}))
    assert view.rounds == 0
    view.reply(Reply(2, b"", b"", 0))  # a wait: the round ends, time64 never answered
    assert view.rounds == 1
    assert "\033[31m1901-12-13 20:45:53 *\033[0m" in out.getvalue()
    assert out.getvalue().splitlines()[-1].startswith("?")  # no 64-bit reading: no guest time
