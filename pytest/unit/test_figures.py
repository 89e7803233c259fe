"""`just bench` figures: goals and ratios (sandbox/app/figures.py), and where
a demo's time went (sandbox/app/speed.py demo_breakdown), without booting."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sandbox.app.figures import Figure, render
from sandbox.app.speed import command_kind, demo_breakdown, guest_seconds_to_init
from sandbox.base import paths
from sandbox.base.machines import FLAVOURS
from sandbox.run.plan import PROGRAM, plan
from sandbox.scenario import suite


def test_an_upper_goal_is_met_below_it_and_a_lower_goal_above_it() -> None:
    demo = Figure("warm demo", 12.5, "s", goal=10)
    warp = Figure("warp factor", 16000, "x", goal=5000, at_least=True)
    assert (demo.ratio, demo.met, demo.goal_text()) == (1.25, False, "<= 10 s")
    assert (warp.ratio, warp.met, warp.goal_text()) == (3.2, True, ">= 5000 x")


def test_render_prints_goal_ratio_and_verdict_and_dashes_what_was_not_measured() -> None:
    text = render([Figure("warm demo", 12.5, "s", "3 runs", goal=10),
                   Figure("cold CI run", math.nan, "min", "not measured in this run", goal=60),
                   Figure("QEMU memory", 196, "MiB")])
    demo, ci, memory = text.splitlines()
    assert demo.split() == ["warm", "demo", "12.50", "s", "<=", "10", "s", "x1.25", "MISSED", "3", "runs"]
    assert ci.split()[:7] == ["cold", "CI", "run", "-", "min", "<=", "60"] and "MISSED" not in ci
    assert memory.split() == ["QEMU", "memory", "196.00", "MiB"]
    assert max(map(len, text.splitlines())) <= 100


def test_demo_breakdown_sums_boot_phases_and_commands_and_leaves_the_rest_to_the_host(tmp_path: Path) -> None:
    for scenario, probe_seconds in (("a", 0.5), ("b", 1.5)):
        run = tmp_path / scenario / "x86_64"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({
            "boot_phases": {"qemu": 0.1, "kernel": 0.4},
            "commands": [{"shell": "/probes/time64/clock", "seconds": probe_seconds},
                         {"shell": "/tools/clockstep wait 3", "seconds": 3.0},
                         {"shell": "/tools/settime 2147483646 settimeofday", "seconds": 0.1}]}))
    spent = {f.name.strip(): f.value for f in demo_breakdown(tmp_path, total=12.0)}
    assert spent == pytest.approx({"demo time in boot: qemu": 0.2, "demo time in boot: kernel": 0.8,
                                   "demo time in probes": 2.0, "demo time in waits and hwclock": 6.0,
                                   "demo time in clock steps": 0.2,
                                   "demo time in host: Python, checks, judging, reports": 2.8})


def test_demo_breakdown_of_runs_side_by_side_counts_the_host_within_the_runs(tmp_path: Path) -> None:
    for scenario in ("a", "b"):
        run = tmp_path / scenario / "x86_64"
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps({
            "boot_phases": {"qemu": 0.5, "kernel": 1.0},
            "commands": [{"shell": "/probes/time64/clock", "seconds": 2.0}]}))
        (run / "facts.json").write_text(json.dumps({"wall_seconds": 4.0}))
    spent = {f.name.strip(): f.value for f in demo_breakdown(tmp_path, total=5.0)}
    assert spent == pytest.approx({"run time in boot: qemu": 1.0, "run time in boot: kernel": 2.0,
                                   "run time in probes": 4.0,
                                   "run time in host, within the runs: evidence, judging": 1.0,
                                   "runs side by side, on average": 1.6})


def test_every_run_steps_command_counts_as_a_real_program_and_every_probe_as_a_probe() -> None:
    """The kinds come from the commands the plan really writes, stdin-fed
    run steps included (sandbox/run/plan.py)."""
    files = [paths.SCENARIOS / "programs" / "old-vs-new.toml[x86_64]", paths.SCENARIOS / "clock" / "rollover.toml"]
    commands = [c for s in suite.load_all(files) for c in plan(s.steps, FLAVOURS, "native64")]
    kinds = {(c.output == PROGRAM, command_kind(c.shell)) for c in commands if c.output == PROGRAM or c.probe != "settime"}
    assert (True, "real programs (run steps)") in kinds and (False, "probes") in kinds
    assert {kind for is_program, kind in kinds if is_program} == {"real programs (run steps)"}
    assert "real programs (run steps)" not in {kind for is_program, kind in kinds if not is_program}
    assert any(c.shell.startswith("printf ") for c in commands if c.output == PROGRAM)


def test_the_guest_time_to_init_is_read_off_the_kernels_own_line() -> None:
    console = ("[    0.318101] Freeing unused kernel image (initmem) memory: 516K\n"
               "[    0.333612] Run /init as init process\n"
               "Y2038-INIT: up\n"
               "[    1.000000] Run /init as init process\n")  # only the first: a second boot is not ours
    assert guest_seconds_to_init(console) == 0.333612
    assert guest_seconds_to_init("[    0.1] Kernel panic - not syncing: no init found\n") is None
