"""A long suite shows scenarios done of the total: the y2038 plugin's line
per scenario, counted where the reports arrive (the session, or the
pytest-xdist controller)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.base.meter import WIDTH
from sandbox.base.paths import REPO
import y2038_plugin
from y2038_plugin import ScenarioCount, is_scenario


def test_only_scenario_reports_count_once_each() -> None:
    count = ScenarioCount(start=0.0)
    count.collected(["pytest/unit/test_cpio.py::test_x", "scenarios/clock/rollover.toml::x86_64",
                     "scenarios/clock/rollover.toml::i386", "scenarios/ipc/shm.toml::armhf[strict]"])
    count.collected(["scenarios/clock/rollover.toml::x86_64"])  # a second worker's list: same ids
    assert count.total == 3
    assert count.finished("pytest/unit/test_cpio.py::test_x", "call", "passed", 1.0) is None
    assert count.finished("scenarios/clock/rollover.toml::x86_64", "setup", "passed", 2.0) is None
    assert count.finished("scenarios/clock/rollover.toml::x86_64", "call", "passed", 30.0) == \
        "scenario passed scenarios/clock/rollover.toml::x86_64: 1/3 scenarios (33%), 30s, about 1m00s left"
    assert count.finished("scenarios/clock/rollover.toml::x86_64", "teardown", "passed", 31.0) is None
    skipped = count.finished("scenarios/clock/rollover.toml::i386", "setup", "skipped", 40.0)
    assert skipped is not None and skipped.startswith("scenario skipped scenarios/clock/rollover.toml::i386: 2/3")
    assert not is_scenario("pytest/unit/test_cpio.py::test_toml")


def test_a_long_node_id_stays_within_100_columns() -> None:
    count = ScenarioCount(start=0.0, total=700)
    text = count.finished("scenarios/filetimes/" + "x" * 120 + ".toml::armhf[strict]", "call", "failed", 61.0)
    assert text is not None and len(text) <= WIDTH and text.endswith("1/700 scenarios (0%), 1m01s, about 11h50m left")  # 61 s × 699


FAKE_SCENARIOS = '''
import pytest

def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".toml":
        return TomlFile.from_parent(parent, path=file_path)

class TomlFile(pytest.File):
    def collect(self):
        for machine in ("x86_64", "i386"):
            yield TomlItem.from_parent(self, name=machine)

class TomlItem(pytest.Item):
    def runtest(self):
        assert "broken" not in self.path.name
'''


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_lines_in_a_session_and_under_xdist(tmp_path: Path, workers: str) -> None:
    """Items named like scenarios (`<file>.toml::<machine>`) without a boot."""
    (tmp_path / "conftest.py").write_text(FAKE_SCENARIOS)
    for name in ("a", "b", "broken"):
        (tmp_path / f"{name}.toml").write_text("")
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}", Y2038_RESULTS=str(tmp_path / "results"))
    env.pop("Y2038_SESSION_RESULTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "y2038_plugin", "-p", "no:cacheprovider",
                           "-n", workers, "-q", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    counted = [text for text in proc.stdout.splitlines() if " scenarios (" in text]
    assert all(text.startswith("scenario ") for text in counted), "a line not on its own"
    lines = [text for text in proc.stdout.splitlines() if text.startswith("scenario ")]
    assert len(lines) == 6, proc.stdout
    assert sorted(text.split(": ")[1].split(" ")[0] for text in lines) == [f"{n}/6" for n in range(1, 7)]
    assert sum(text.startswith("scenario failed broken.toml::") for text in lines) == 2
    assert all(len(text) <= WIDTH for text in lines)
    assert "2 failed, 4 passed" in proc.stdout


@pytest.mark.parametrize(("cores", "workers"), [(1, 2), (2, 3), (3, 5), (8, 12)])
def test_auto_means_one_and_a_half_workers_per_core(monkeypatch: pytest.MonkeyPatch, cores: int,
                                                    workers: int) -> None:
    monkeypatch.setattr(y2038_plugin.os, "cpu_count", lambda: cores)
    assert y2038_plugin.pytest_xdist_auto_num_workers(config=None) == workers


def test_auto_is_ours_and_not_xdists(tmp_path: Path) -> None:
    """xdist answers `-n auto` with the core count itself: ours must come first."""
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{REPO / 'pytest'}", Y2038_RESULTS=str(tmp_path / "results"))
    env.pop("Y2038_SESSION_RESULTS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "y2038_plugin", "-p", "no:cacheprovider",
                           "-n", "auto", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    started = " / ".join(f"gw{n} I" for n in range(y2038_plugin.pytest_xdist_auto_num_workers(config=None)))
    assert done.returncode == 0 and f"\n{started}\n" in done.stdout, done.stdout[-2000:]
