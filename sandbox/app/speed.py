"""The speed figures of `just bench` (`just bench --speed` alone), each with
its goal: boot to agent and its phases, the time warp factor of an idle
day, the day-long scenario, an author's edit-and-rerun loop, the warm
demo and where its time goes, the warm suite, and the cold CI run.

Every figure is measured in the run that prints it; the cold CI run takes
an hour, so it runs only when asked (--cold-ci) and says so otherwise.
"""
from __future__ import annotations

import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sandbox.base.evidence import Evidence
from sandbox.base import evidence as files
from sandbox.app.figures import Figure, render
from sandbox.app.parallel import default_jobs
from sandbox.base import paths
from sandbox.base.progress import say
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import BOOT_MARKS, BOOT_PHASES, Guest
from sandbox.guest.target import Target
from sandbox.run import drive
from sandbox.run.drive import Asked, Driven
from sandbox.run.plan import INROOT

BOOTS = 5
WARP_DAYS = 3
DEMOS = 3
RTC = "2038-01-19T03:13:50"
DAY = 86400
DAY_SCENARIO = paths.SCENARIOS / "timers" / "day-across-rollover.toml"
AUTHOR_SCENARIO = paths.SCENARIOS / "clock" / "rollover.toml"
AUTHOR_EDIT = ('"2038-01-19T03:14:07Z"]', '"2038-01-19T03:14:07Z"] # edited by the bench')
"""The author's loop changes one expectation's text (a comment is enough to
make the file new to every cache) and reruns that scenario."""


@contextmanager
def _booted(target: Target, warp: bool) -> Iterator[Guest]:
    """A guest ready for commands, its evidence in a folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="y2038-bench-") as folder:
        with Guest(target.boot(RTC, Path(folder), warp=warp)) as guest:
            drive.boot(guest, Deadline(drive.BOOT_SECONDS), Driven())
            yield guest


_RUN_INIT = re.compile(r"^\[\s*(\d+\.\d+)\] " + re.escape(dict(BOOT_MARKS)["init"]), re.M)


def guest_seconds_to_init(console: str) -> float | None:
    """The kernel's own timestamp of its "Run /init" line. Under warp the
    guest's clock counts instructions (8 ns each), so for the same kernel
    and initramfs it is the same in every boot, however loaded the host:
    the one boot figure that can be compared across machines and days."""
    found = _RUN_INIT.search(console)
    return float(found.group(1)) if found else None


def boot_figures(target: Target) -> list[Figure]:
    """Boot to agent ready, with and without time warp, and the median of each phase."""
    figures = []
    for warp in (False, True):
        totals, phases, to_init = [], defaultdict(list), []
        for n in range(BOOTS):
            with _booted(target, warp) as guest:
                totals.append(guest.boot_seconds)
                for name, seconds in guest.boot_phases.items():
                    phases[name].append(seconds)
                console = Evidence(guest.request.evidence).console.read_text("utf-8", "replace")
                to_init += [s for s in (guest_seconds_to_init(console),) if s is not None]
            say(f"boot {n + 1}/{BOOTS}{' with warp' if warp else ''}: {totals[-1]:.2f}s to agent ready")
        mode = "with time warp" if warp else "without warp"
        figures.append(Figure(f"boot to agent ready, {mode}, median", statistics.median(totals), "s",
                              f"{BOOTS} boots, {target.machine.name}, accel {target.accel.name}", goal=0.6))
        figures += [Figure(f"  of which {name}", statistics.median(phases[name]), "s", _PHASE_NOTES[name])
                    for name in BOOT_PHASES if phases[name]]
        if warp and to_init:
            figures.append(Figure("  kernel to 'Run /init', guest time", statistics.median(to_init), "s",
                                  f"instructions, not the host's speed: {min(to_init):.4f}-{max(to_init):.4f}"))
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return figures + [Figure("QEMU peak resident memory", rss_mib, "MiB", "largest child process so far")]


_PHASE_NOTES = {"qemu": "QEMU start to the first console line", "kernel": "to the kernel's 'Run /init'",
                "init": "/init to its 'Y2038-INIT: up'", "agent": "to the agent's READY"}


def warp_figure(target: Target) -> Figure:
    """An idle day in the guest (clockstep wait 86400) against the wall clock."""
    walls = []
    driven: Driven[Asked] = Driven()
    with _booted(target, warp=True) as guest:
        for _ in range(WARP_DAYS):
            reply = drive.ask(guest, f"/tools/clockstep wait {DAY}", Deadline(600), 600, driven)
            walls.append(driven.records[-1].seconds)
            if reply.exit_code != 0:
                raise RuntimeError(f"clockstep wait failed: {reply.stderr!r}")
    wall = statistics.median(walls)
    return Figure("time warp factor, an idle guest day", DAY / wall, "x",
                  f"24 h of guest time in {wall:.2f} s wall (median of {WARP_DAYS})", goal=5000, at_least=True)


def _sandbox(*args: str) -> float:
    """Wall seconds of one `python -m sandbox ...` (Python's start included), which must pass."""
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "sandbox", *args], cwd=paths.REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def day_figure() -> Figure:
    seconds = _sandbox("run", "--machine", "x86_64", str(DAY_SCENARIO))
    return Figure("the 24-hour scenario, wall", seconds, "s",
                  "timers/day-across-rollover on x86_64: 65 h of guest time", goal=30)


def author_loop_figure() -> Figure:
    text = AUTHOR_SCENARIO.read_text()
    if AUTHOR_EDIT[0] not in text:
        raise RuntimeError(f"{AUTHOR_SCENARIO}: no {AUTHOR_EDIT[0]} to edit")
    with tempfile.TemporaryDirectory(prefix="bench-author-") as tmp:
        edited = Path(tmp) / AUTHOR_SCENARIO.name
        edited.write_text(text.replace(AUTHOR_EDIT[0], AUTHOR_EDIT[1], 1))
        seconds = _sandbox("run", "--machine", "x86_64", str(edited))
    return Figure("author's loop: edit one expectation, rerun", seconds, "s",
                  f"{AUTHOR_SCENARIO.relative_to(paths.REPO)} on x86_64, `sandbox run` start to end", goal=5)


COMMAND_KINDS = ((f"{INROOT} ", "real programs (run steps)"), ("/probes/", "probes"),
                 ("/tools/clockstep", "waits and hwclock"), ("/tools/settime", "clock steps"))
"""A guest command's kind, by the first program of this table its shell text
names (sandbox/run/plan.py writes them; a run step's may start with the
printf that feeds its stdin)."""


def command_kind(shell: str) -> str:
    return next((kind for program, kind in COMMAND_KINDS if program in shell), "other guest commands")


def demo_breakdown(folder: Path, total: float) -> list[Figure]:
    """Where a demo's time went: boot phases and commands summed over its
    runs (each run.json). Its runs go side by side (`--jobs`), so the sums
    can pass the wall time: the host's own work within the runs is their
    wall times (facts.json) less those sums, and `runs side by side` says how
    many ran at once on average. Without facts.json (a folder of older runs,
    one after the other), the host's work is the rest of `total`."""
    spent: dict[str, float] = defaultdict(float)
    walls: list[float] = []
    for run_json in sorted(folder.glob(f"*/*/{files.RUN}")):
        run = json.loads(run_json.read_text())
        for name, seconds in run.get("boot_phases", {}).items():
            spent[f"boot: {name}"] += seconds
        for command in run["commands"]:
            spent[command_kind(command["shell"])] += command.get("seconds", 0.0)
        facts = run_json.with_name(files.FACTS)
        if facts.is_file():
            walls.append(json.loads(facts.read_text()).get("wall_seconds", 0.0))
    inside = sum(spent.values())
    if not walls:
        spent["host: Python, checks, judging, reports"] = total - inside
        return [Figure(f"  demo time in {name}", seconds, "s") for name, seconds in spent.items()]
    spent["host, within the runs: evidence, judging"] = sum(walls) - inside
    figures = [Figure(f"  run time in {name}", seconds, "s", "summed over the runs" if n == 0 else "")
               for n, (name, seconds) in enumerate(spent.items())]
    return figures + [Figure("  runs side by side, on average", sum(walls) / total if total else math.nan, "x",
                             f"{len(walls)} runs' wall times summed, over the demo's")]


def demo_figures(machine_name: str) -> list[Figure]:
    seconds = [_sandbox("demo", "--machine", machine_name) for _ in range(DEMOS)]
    median = statistics.median(seconds)
    newest = max(paths.results_root().glob("*-demo"), key=lambda p: p.stat().st_mtime)
    breakdown = demo_breakdown(newest, seconds[-1])
    without = _sandbox("demo", "--machine", machine_name, "--warp", "off")
    return [Figure("warm `just demo`, median", median, "s",
                   f"{DEMOS} runs, min {min(seconds):.2f} max {max(seconds):.2f}, "
                   f"{default_jobs()} guests side by side", goal=10),
            *breakdown,
            Figure("warm `just demo --warp off`", without, "s", "one run, for comparison", goal=10)]


def _children_cpu_seconds() -> float:
    """User and system CPU seconds of every child process waited for so far
    (with theirs: pytest's workers, their QEMUs and compilers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def suite_figures() -> list[Figure]:
    """The warm suite as `just test` runs it (every scenario file, every unit
    test), on every core; and the CPU time it took, whose share of the cores
    is the floor no scheduling goes below."""
    start, cpu_before = time.monotonic(), _children_cpu_seconds()
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", "pytest/pytest.ini", "--rootdir", ".", "-n", "auto",
                           "-q", "-p", "no:cacheprovider"], cwd=paths.REPO, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": f"{paths.REPO}:{paths.REPO}/pytest"})
    seconds, cpu = time.monotonic() - start, _children_cpu_seconds() - cpu_before
    cores = os.cpu_count() or 1
    return [Figure("warm `just test`", seconds, "s", f"{cores} cores, pytest -n auto, exit {done.returncode}", goal=120),
            Figure("warm `just test`, CPU time", cpu, "s",
                   f"every process's; {cpu / cores:.0f} s of wall on {cores} cores at the least, "
                   f"{cpu / (seconds * cores):.0%} of the cores busy")]


def cold_ci_figure(run: bool) -> Figure:
    """A fresh clone's `bash .ci/run` with an empty cache (an hour), only when asked."""
    if not run:
        return Figure("cold CI run", math.nan, "min", "not measured in this run: just bench --speed --cold-ci",
                      goal=60)
    log = paths.results_root() / time.strftime("cold-ci-%Y%m%d-%H%M%S.log")
    say(f"cold CI: a fresh clone's .ci/run with an empty cache, about an hour (log: {log})")
    with tempfile.TemporaryDirectory(prefix="bench-ci-") as clone, \
            tempfile.TemporaryDirectory(prefix="bench-cache-") as cache, log.open("w") as out:
        subprocess.run(["git", "clone", "-q", str(paths.REPO), clone], check=True)
        start = time.monotonic()
        done = subprocess.run(["bash", ".ci/run"], cwd=clone, stdout=out, stderr=subprocess.STDOUT,
                              env={**os.environ, "CI": "true", "Y2038_CACHE": cache})
        minutes = (time.monotonic() - start) / 60
    return Figure("cold CI run", minutes, "min", f"fresh clone, empty cache, exit {done.returncode}, log {log.name}",
                  goal=60)


def speed_figures(target: Target, suite: bool, cold_ci: bool) -> list[Figure]:
    """Each figure in turn, said as soon as it is measured: the whole run can
    take an hour and a half with --cold-ci, and an interrupted one keeps what
    it printed."""
    measures = [lambda: boot_figures(target), lambda: [warp_figure(target)], lambda: [day_figure()],
                lambda: [author_loop_figure()], lambda: demo_figures(target.machine.name),
                lambda: suite_figures() if suite else [Figure("warm `just test`", math.nan, "s",
                                                               "not measured in this run (--no-suite)", goal=120)],
                lambda: [cold_ci_figure(cold_ci)]]
    figures: list[Figure] = []
    for measure in measures:
        measured = measure()
        say(render(measured))
        figures += measured
    return figures
