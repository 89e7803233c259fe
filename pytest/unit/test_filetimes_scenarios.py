"""scenarios/filetimes/filesystems.toml, one scenario per filesystem
([[variant]] rows), against observations captured in a booted guest
(pytest/data/filetimes/, see pytest/data/README.md): each variant accepts its
own filesystem's run and rejects the others' where their limits differ.
No boot here."""
from __future__ import annotations

import json

import pytest

from sandbox.scenario import suite
from sandbox.judge.evaluate import ScenarioResult, evaluate
from sandbox.run.observations import Observation
from sandbox.base.paths import REPO

FILESYSTEMS = ("tmpfs", "ext4-128", "ext4-256", "xfs-legacy", "xfs-bigtime")
DATA = REPO / "pytest" / "data" / "filetimes"


def captured(fs: str) -> list[Observation]:
    lines = (DATA / f"{fs}.jsonl").read_text().splitlines()
    return [Observation.from_record(json.loads(line)) for line in lines if line.strip()]


FAMILY = {s.variant: s for s in suite.load_all([REPO / "scenarios" / "filetimes" / "filesystems.toml"])}


def judged(scenario_fs: str, observed_fs: str) -> ScenarioResult:
    return evaluate(FAMILY[scenario_fs], "x86_64", captured(observed_fs))


def test_the_family_has_one_variant_per_captured_filesystem() -> None:
    assert tuple(FAMILY) == FILESYSTEMS
    assert [s.name for s in FAMILY.values()] == [f"filetimes/filesystems[{fs}]" for fs in FILESYSTEMS]
    assert [s.disks[0].name for s in FAMILY.values()] == list(FILESYSTEMS)


@pytest.mark.parametrize("fs", FILESYSTEMS)
def test_each_scenario_accepts_its_own_captured_run(fs: str) -> None:
    result = judged(fs, fs)
    assert result.verdicts and result.passed, [v for v in result.failures][:3]


@pytest.mark.parametrize("fs", FILESYSTEMS)
def test_every_expectation_found_an_observation(fs: str) -> None:
    assert all(v.observed != "no observation" for v in judged(fs, fs).verdicts)


@pytest.mark.parametrize(("scenario_fs", "observed_fs"),
                         [(a, b) for a in FILESYSTEMS for b in FILESYSTEMS if a != b])
def test_a_scenario_rejects_another_filesystems_run(scenario_fs: str, observed_fs: str) -> None:
    assert not judged(scenario_fs, observed_fs).passed


def _failed(result: ScenarioResult, phase: str, flavour: str, call: str) -> dict[str, str]:
    return {v.field: v.observed for v in result.failures
            if (v.phase, v.flavour, v.call) == (phase, flavour, call)}


def test_ext4_256_expectations_see_128_byte_inodes_clamp_at_2038() -> None:
    result = judged("ext4-256", "ext4-128")
    assert _failed(result, "2040", "native64", "utimensat") == {
        "seconds": "2038-01-19T03:14:07Z (2147483647)", "nsec": "0"}
    assert _failed(result, "2040", "time32-libc", "stat") == {
        "errno": "no errno (succeeded: seconds 2038-01-19T03:14:07Z (2147483647), nsec 0)"}
    assert _failed(result, "warning", "time64", "mount_warning") == {"warned": "1"}


def test_xfs_bigtime_expectations_see_legacy_xfs_clamp_at_2038() -> None:
    result = judged("xfs-bigtime", "xfs-legacy")
    assert _failed(result, "2500", "time64", "statx") == {"seconds": "2038-01-19T03:14:07Z (2147483647)"}
    # Both keep INT32_MAX, but it is legacy XFS's s_time_max, where
    # timestamp_truncate() zeroes the nanoseconds that bigtime keeps.
    assert _failed(result, "2038max", "time64", "statx") == {"nsec": "0"}
