"""Where things live: the repository, the build cache and the results."""
from __future__ import annotations

import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNEL_SERIES = REPO / "kernel-series"
ROOTFS = REPO / "rootfs"
SCENARIOS = REPO / "scenarios"
SYSTEM_SCENARIOS = SCENARIOS / "system"  # whole systems (sandbox/system/scenario.py), not probe scenarios
PACKAGES_LIST = REPO / ".ci" / "debian-packages.txt"


def cache_dir() -> Path:
    """The build cache, outside the repository; Y2038_CACHE overrides it."""
    default = Path.home() / ".cache" / "y2038-sandbox"
    path = Path(os.environ.get("Y2038_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def results_root() -> Path:
    """Where run evidence goes; Y2038_RESULTS overrides it."""
    path = Path(os.environ.get("Y2038_RESULTS", REPO / "results"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def new_results_dir(label: str) -> Path:
    """A fresh, uniquely named folder for one invocation's evidence."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    root = results_root()
    for n in range(1000):
        path = root / (f"{stamp}-{label}" if n == 0 else f"{stamp}-{label}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot make a results folder under {root}")
