"""`just bench --futex`: what a futex_time32 round trip costs on the
pristine kernel and on the series kernel under allow (kernel-series 0028
keeps the calls that pass no time off the accounting path), measured in
the guest by the syscost probe's futex calls (rootfs/probes/syscost.c, in
the machine's tools flavour), on the 32-bit machines, whose every futex
call is futex_time32.

Figures, never assertions: the same guest runs the tool RUNS times; the
figure is the median, the note gives the spread, and the ratio figure
(series / pristine) is what "within noise" is read from. The guest boots
under time warp (QEMU's -icount, docs/time-warp.md), so its clock counts
the instructions it ran: the figures are guest time, the same from run to
run whatever else the host does, and comparable only with each other. The
two kernels differ in more than the series (the series variant has disks,
a network, devices, KUnit, seccomp, PID namespaces built in): the ratio
is an upper bound of what the series adds.
"""
from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandbox.app.figures import Figure
from sandbox.base.machines import machine
from sandbox.base.progress import say
from sandbox.guest.deadline import Deadline
from sandbox.guest.qemu import Guest
from sandbox.guest.target import prepare_target
from sandbox.run import drive
from sandbox.run.drive import Asked, Driven

MACHINES = ("i386", "armhf")
VARIANTS = ("pristine", "series")
RUNS = 3
RTC = "2038-01-19T03:10:00"
BOOT_SECONDS = 120.0
RUN_SECONDS = 600.0  # one run of the tool under TCG
KINDS = {"wake": "futex_wake", "timed": "futex_timed"}
"""Each kind of round trip and the syscost call that measures it (100,000 calls each)."""
NOISE_GOAL = 1.05  # series within 5% of pristine: what "nothing measurable" is read against


@dataclass(frozen=True)
class Timings:
    """The mean ns per call, one value per run, for each kind of round trip."""

    machine: str
    variant: str
    runs: dict[str, tuple[int, ...]]

    def median(self, kind: str) -> float:
        return float(statistics.median(self.runs[kind]))

    def spread(self, kind: str) -> str:
        values = self.runs[kind]
        return f"{min(values)}-{max(values)} ns over {len(values)} runs"


def parse_runs(lines: list[str]) -> dict[str, tuple[int, ...]]:
    """syscost's JSON lines of every run, as a tuple of values per kind (pure)."""
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    values = {kind: tuple(int(row["ns"]) for row in rows if row.get("call") == call and "ns" in row)
              for kind, call in KINDS.items()}
    missing = [KINDS[kind] for kind, found in values.items() if not found]
    if missing:
        raise ValueError(f"syscost printed no result for {', '.join(missing)}")
    return values


def measure(machine_name: str, variant: str, runs: int = RUNS) -> Timings:
    """One boot of the machine's kernel of this variant, syscost's futex calls run `runs` times."""
    target = prepare_target(machine(machine_name), variant)
    command = f"/probes/{target.machine.toolchain.tools_flavour}/syscost {' '.join(KINDS.values())}"
    say(f"futex round trips on {machine_name}/{variant} ({target.accel.name}): {runs} runs of {command}")
    lines = []
    deadline = Deadline(BOOT_SECONDS + runs * RUN_SECONDS)
    with tempfile.TemporaryDirectory(prefix="y2038-futex-bench-") as tmp:
        with Guest(target.boot(RTC, Path(tmp), warp=True)) as guest:
            driven: Driven[Asked] = Driven()
            drive.boot(guest, deadline, driven, BOOT_SECONDS)
            for _ in range(runs):
                reply = drive.ask(guest, command, deadline, RUN_SECONDS, driven)
                if reply.exit_code != 0:
                    raise RuntimeError(f"syscost failed on {machine_name}/{variant}: {reply.text.strip()}")
                lines += reply.text.splitlines()
    return Timings(machine_name, variant, parse_runs(lines))


def figures_of(timings: list[Timings]) -> list[Figure]:
    """A figure per machine, variant and kind, then series / pristine (pure)."""
    by = {(t.machine, t.variant): t for t in timings}
    out = []
    for (name, variant), t in by.items():
        out += [Figure(f"futex_time32 {kind}, {name} {variant}", t.median(kind), "ns",
                       note=f"median; {t.spread(kind)}") for kind in KINDS]
    for name in sorted({t.machine for t in timings}):
        if (name, "pristine") in by and (name, "series") in by:
            for kind in KINDS:
                ratio = by[(name, "series")].median(kind) / by[(name, "pristine")].median(kind)
                out.append(Figure(f"futex_time32 {kind}, {name} series / pristine", ratio, "x",
                                  note="allow: kernel-series 0028", goal=NOISE_GOAL))
    return out


def futex_figures(machines: tuple[str, ...] = MACHINES) -> list[Figure]:
    return figures_of([measure(name, variant) for name in machines for variant in VARIANTS])
