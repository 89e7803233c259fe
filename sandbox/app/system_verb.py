"""`sandbox system IMAGE...` (`just system`): whole systems across the rollover,
a unit table each (docs/system-rehearsal.md). Exit 0 when every system ran
through its night, 1 when a unit broke, 3 when a boot did not get through
(no init, a panic, a system that never settled), 2 for bad input."""
from __future__ import annotations

import argparse
import sys

from sandbox.base.paths import new_results_dir
from sandbox.system.phases import DEFAULT_END, DEFAULT_START
from sandbox.system.rehearse import SystemRequest, rehearse_system


def add_arguments(v: argparse.ArgumentParser) -> None:
    v.add_argument("images", nargs="+", metavar="IMAGE",
                   help="a system of rootfs/systems.toml (debian12-armhf, debian13-armhf, debian12-i386), "
                        "or your own root filesystem (a directory)")
    v.add_argument("--start", default=DEFAULT_START, metavar="TIME",
                   help=f"the RTC at power-on (default {DEFAULT_START}; past the rollover: booted past it)")
    v.add_argument("--end", default=DEFAULT_END, metavar="TIME",
                   help=f"let the clock run under time warp until then (default {DEFAULT_END})")


def cmd_system(args: argparse.Namespace) -> int:
    folder = new_results_dir("system")
    worst, used = 0, set[str]()
    for image in args.images:
        label = image.rstrip("/").rsplit("/", 1)[-1] or "root"
        label = next(f"{label}-{n}" if n else label for n in range(len(used) + 1)
                     if (f"{label}-{n}" if n else label) not in used)  # two inputs named root: root, root-1
        used.add(label)
        result = rehearse_system(SystemRequest(image, folder / label, args.start, args.end))
        print("\n".join(result.table()))
        print(f"evidence: {folder / label}")
        sys.stdout.flush()
        code = 3 if result.outcome != "completed" else 1 if any(v.verdict == "broke" for v in result.verdicts) else 0
        worst = max(worst, code)
    return worst
