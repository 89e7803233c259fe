"""Two results folders compared run by run (sandbox/app/tree_diff.py): what
differs beyond what two runs of one kernel show."""
from __future__ import annotations

import json
from pathlib import Path

from sandbox.app.tree_diff import compare_folders, matters, report
from sandbox.judge.repeat import Difference

KEY = ("clock/rollover", "x86_64", "after", "clock", "time32-syscall", "time", "0")


def diff(field: str, first: object, second: object, probe: str = "clock") -> Difference:
    return Difference(KEY[:3] + (probe,) + KEY[4:], field, first, second)


def test_run_to_run_noise_is_left_out() -> None:
    assert not matters(diff("nsec", 1, 999_999_999))
    assert not matters(diff("seconds", 2147483670, 2147483672))  # read a couple of seconds apart
    assert not matters(diff("seconds", -2, -1))  # a faked clock's small seconds
    assert not matters(diff("elapsed", 2.999962, 2.001098))
    assert not matters(diff("stdout", "-1126687050|1934", "256237245|1978", probe="run"))
    assert not matters(diff("tracking", "0.000012 s fast", "0.000031 s slow", probe="ntp"))


def test_what_a_kernel_changes_is_kept() -> None:
    assert matters(diff("seconds", -2147483626, 2147483670))  # a wrap: 2^32 s apart
    assert matters(diff("errno", None, "EOVERFLOW"))
    assert matters(diff("errno", "ENOSYS", "ENOTTY"))
    assert matters(diff("time32_truncations", 6, 5))
    assert matters(diff("exit", 0, 1, probe="run"))
    assert matters(diff("result", "stepped", "timeout", probe="ntp"))
    assert matters(diff("elapsed", 3.0, 5.0))


def _run(folder: Path, run: str, observations: list[dict[str, object]], passed: list[bool]) -> None:
    where = folder / run
    where.mkdir(parents=True)
    (where / "run.json").write_text("{}")
    (where / "observations.jsonl").write_text("".join(json.dumps(o) + "\n" for o in observations))
    (where / "verdicts.json").write_text(json.dumps([
        {"step": 0, "phase": "after", "flavour": "time32-syscall", "call": "time", "field": f"f{n}", "passed": p}
        for n, p in enumerate(passed)]))


def _observation(seconds: int, nsec: int, errno: str | None = None) -> dict[str, object]:
    record: dict[str, object] = {"scenario": "clock/rollover", "machine": "x86_64", "phase": "after",
                                 "probe": "clock", "flavour": "time32-syscall", "call": "clock_gettime",
                                 "seconds": seconds, "nsec": nsec}
    return record | ({"errno": errno} if errno else {})


def test_folders_compared_run_by_run(tmp_path: Path) -> None:
    one, two = tmp_path / "6.1", tmp_path / "6.12"
    _run(one, "clock-rollover/x86_64", [_observation(2147483670, 1)], [True, True])
    _run(two, "clock-rollover/x86_64", [_observation(2147483671, 2)], [True, True])
    _run(one, "ipc-shm/x86_64", [_observation(5, 0)], [True])
    _run(two, "ipc-shm/x86_64", [_observation(5, 0, "EOVERFLOW")], [False])
    _run(one, "kernel-only/armhf", [], [])
    pairs, alone = compare_folders(one, two)
    assert [(p.run, len(p.verdicts), len(p.differences)) for p in pairs] == [
        ("clock-rollover/x86_64", 0, 0), ("ipc-shm/x86_64", 1, 1)]
    assert alone == ["kernel-only/armhf"]
    text = report(pairs, alone)
    assert "verdict 0 after time32-syscall time f0: True then False" in text
    assert text.endswith("2 runs compared (2 observations, 3 expectations): 1 the same, 1 different; "
                         "in one folder only: kernel-only/armhf")
