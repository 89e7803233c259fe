"""pytest plugin: the slowest tests first, so that pytest-xdist's workers end
together.

pytest-xdist (3.1 in Debian 12, before `--dist worksteal`) hands tests out
in collection order: an NTP scenario of 40 s collected near the end keeps one
worker busy while the other has nothing left. Each session records how long
each of its tests took (setup, call and teardown) in the cache
(`durations_file()`); the next session runs the tests it has timings for
longest first, as longest-processing-time scheduling does, after the tests
it has never seen (they may be slow). Under xdist the controller reads the
file once and hands the same table to every worker, so that all of them
collect the same order, even while another session rewrites the file.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sandbox.base import paths

DURATIONS_KEY = pytest.StashKey[dict[str, float]]()
WORKER_INPUT = "y2038_durations"


def durations_file() -> Path:
    return paths.cache_dir() / "test-durations.json"


def load_durations(path: Path) -> dict[str, float]:
    """{nodeid: seconds} of earlier sessions; nothing when there is no usable file."""
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {k: float(v) for k, v in table.items() if isinstance(k, str) and isinstance(v, (int, float))}


def longest_first(nodeids: list[str], durations: dict[str, float]) -> list[int]:
    """The positions of `nodeids` in running order: never timed first (in
    collection order), then the timed ones, longest first (ties in
    collection order)."""
    return sorted(range(len(nodeids)),
                  key=lambda i: (nodeids[i] in durations, -durations.get(nodeids[i], 0.0), i))


def merged(old: dict[str, float], new: dict[str, float]) -> dict[str, float]:
    """The file's table after a session: this session's timings over the old ones."""
    return {**old, **{k: round(v, 3) for k, v in new.items()}}


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


class Timings:
    """Where the reports arrive (the session, or the xdist controller): sums
    each test's phases, and writes them to the file when the session ends."""

    def __init__(self) -> None:
        self.measured: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.measured[report.nodeid] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.measured:
            return
        path = durations_file()
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            tmp.write_text(json.dumps(merged(load_durations(path), dict(self.measured)), indent=0,
                                      sort_keys=True) + "\n")
            tmp.replace(path)
        except OSError:
            tmp.unlink(missing_ok=True)  # an ordering aid, never a reason to fail the session


def pytest_configure(config: pytest.Config) -> None:
    if _is_worker(config):
        config.stash[DURATIONS_KEY] = dict(config.workerinput.get(WORKER_INPUT, {}))  # type: ignore[attr-defined]
    else:
        config.stash[DURATIONS_KEY] = load_durations(durations_file())
        config.pluginmanager.register(Timings(), "y2038-timings")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker orders its collection by the same table."""
    node.workerinput[WORKER_INPUT] = node.config.stash[DURATIONS_KEY]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = longest_first([item.nodeid for item in items], config.stash[DURATIONS_KEY])
    items[:] = [items[i] for i in order]
