"""The README's sample outputs are what the tool prints from captured runs
(pytest/data/): the rollover matrix of `just demo` and the lines of
`just demo --live`, rendered again without booting."""
from __future__ import annotations

import io
import re
from pathlib import Path

import captured_results
from replay_guest import ReplayGuest, captured

from sandbox.app.jobs import run_and_judge
from sandbox.app.live import LIVE_SCENARIO, LiveView, live_start
from sandbox.base import paths
from sandbox.base.machines import MACHINES
from sandbox.guest.qemu import BootRequest
from sandbox.report import text
from sandbox.scenario import suite

README = paths.REPO / "README.md"


def _block_starting(first_line: str) -> list[str]:
    """The lines of the README's code block whose first line starts so."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", README.read_text(), re.S):
        if block.startswith(first_line):
            return block.splitlines()
    raise AssertionError(f"README.md: no code block starting with {first_line!r}")


def test_the_rollover_matrix_is_what_report_text_renders(tmp_path: Path) -> None:
    _, runs = captured_results.build_results(tmp_path, failing=False)
    run = next(run for run in runs if run.record.scenario == "clock/rollover")
    rendered = text.phase_tables(run.record, captured_results.rollover(tmp_path, False), run.result)
    sample = "\n".join(_block_starting("[after] clock"))
    assert sample in rendered.split("\n\n")


def test_the_live_lines_are_what_the_live_view_prints(tmp_path: Path) -> None:
    transcript, console = captured("live")
    out = io.StringIO()
    view = LiveView(MACHINES["x86_64"].toolchain.flavours, out, colour=False)

    def start(request: BootRequest) -> ReplayGuest:
        return ReplayGuest(request, transcript, console)
    run_and_judge(captured_results.fake_target(), suite.load(LIVE_SCENARIO), tmp_path / "clock-live" / "x86_64",
                  live_start(view, start))
    printed = out.getvalue().splitlines()
    for line in _block_starting("guest time"):  # a few of its lines, in its order
        assert line in printed, line
    sample = _block_starting("guest time")
    assert [printed.index(line) for line in sample] == sorted(printed.index(line) for line in sample)
