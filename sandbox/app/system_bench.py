"""`just bench --system`: the figures of a whole-system rehearsal,
measured, never asserted: the Debian 12 armhf image's build (cold from its
build.json, warm as it runs now) and size, power-on to settled and the night
across the rollover under time warp, each with its goal."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

from sandbox.app.figures import Figure
from sandbox.system.catalogue import load_systems
from sandbox.system.image import build_system_image
from sandbox.system.rehearse import SystemRequest, rehearse_system

SYSTEM = "debian12-armhf"
SETTLED_GOAL = 30.0  # seconds from power-on to settled, warm, 2 cores under TCG
NIGHT_GOAL = 60.0  # seconds for 22:00 to 06:00 under time warp


def system_figures(evidence: Path, system: str = SYSTEM) -> list[Figure]:
    systems = load_systems()
    start = time.monotonic()
    built = build_system_image(systems.by_name[system], systems)
    warm = time.monotonic() - start
    cold = json.loads((built.image.parent / "build.json").read_text())
    result = rehearse_system(SystemRequest(system, evidence / system))
    wall = result.wall
    note = f"just system {system}"
    return [
        Figure(f"{system} image build, cold", sum(cold.values()), "s",
               "unpack + kernel + dpkg --configure in the guest + mke2fs: " +
               ", ".join(f"{k} {v:.0f} s" for k, v in cold.items())),
        Figure(f"{system} image build, warm", warm, "s", "the cached image, keyed by package versions"),
        Figure(f"{system} image size", built.image.stat().st_size / 2**20, "MiB", f"{len(built.packages)} packages"),
        Figure(f"{system} power-on to settled, warm", wall.get("settled", math.nan), "s", note, goal=SETTLED_GOAL),
        Figure(f"{system} night 22:00-06:00 under warp", wall.get("night", math.nan), "s", note, goal=NIGHT_GOAL),
        Figure(f"{system} units broken", sum(v.verdict == "broke" for v in result.verdicts), "",
               f"of {len(result.verdicts)}; outcome {result.outcome}"),
    ]
