"""sandbox/build/series_check.py: the pure parts (the check itself builds kernels)."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.app import cli
from sandbox.app.exit_codes import EXIT_ERROR
from sandbox.base.machines import MACHINES
from sandbox.base.errors import SandboxError
from sandbox.build.series_check import PatchCheck, checkpatch_verdict, report, span, split_at

CLEAN = """total: 0 errors, 0 warnings, 0 checks, 44 lines checked

"[PATCH] rtc: class: let 32-bit kernels set the clock from an RTC past" has no obvious style problems and is ready for submission.
"""
WARNED = """WARNING: ENOSYS means 'invalid syscall nr' and nothing else
#322: FILE: kernel/time/time32_policy.c:90:
+	return policy == TIME32_POLICY_DENY ? -ENOSYS : 0;

total: 0 errors, 1 warnings, 0 checks, 316 lines checked
"""


def test_checkpatch_clean_only_when_it_counted_nothing() -> None:
    assert checkpatch_verdict(CLEAN) == "clean"
    assert checkpatch_verdict(WARNED) == "total: 0 errors, 1 warnings, 0 checks, 316 lines checked"
    assert checkpatch_verdict(CLEAN.replace("0 checks", "2 checks")).startswith("total: 0 errors")


def test_checkpatch_without_a_total_line_is_not_clean() -> None:
    assert checkpatch_verdict("Traceback (most recent call last):\n") != "clean"


def test_report_marks_each_patch_and_stops_at_one_that_does_not_apply(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    results = [
        PatchCheck("0001-a.patch", "clean", True, True, 31.0, ("CONFIG_X=y",), log),
        PatchCheck("0002-b.patch", "total: 1 errors, 0 warnings, 0 checks, 9 lines checked",
                   True, False, 12.0, (), log),
        PatchCheck("0003-c.patch", "clean", False, None, 0.0, (), log),
    ]
    lines = report(MACHINES["armhf"], results).splitlines()
    assert lines[0] == "series check of the 6.1 tree on armhf:"
    assert lines[1].startswith("  ok  0001-a.patch: checkpatch clean; applies; builds (31s)")
    assert lines[2].startswith("  BAD 0002-b.patch: checkpatch: total: 1 errors")
    assert "BUILD FAILED" in lines[2] and str(log) in lines[2]
    assert lines[3] == "  BAD 0003-c.patch: checkpatch clean; DOES NOT APPLY; not tried (0s)"
    assert [r.ok for r in results] == [True, False, False]


def test_report_names_the_tree(tmp_path: Path) -> None:
    results = [PatchCheck("0001-a.patch", "clean", True, True, 3.0, (), tmp_path / "x.log")]
    assert report(MACHINES["x86_64"], results, "6.12").splitlines()[0] == "series check of the 6.12 tree on x86_64:"


def test_a_machine_the_tree_is_not_built_for_is_refused_before_anything_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check-series", "--tree", "6.12", "--machine", "i386"]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert err == "error: check-series --machine i386: the 6.12 tree is not built for i386 (only x86_64, armhf)"


PATCHES = tuple(Path(f"kernel-series/{n}") for n in ("0001-a.patch", "0002-b.patch", "0003-c.patch"))


def test_from_splits_the_series_at_a_patch_named_or_numbered() -> None:
    assert split_at(PATCHES, None) == ((), PATCHES)
    assert split_at(PATCHES, "0002") == (PATCHES[:1], PATCHES[1:])
    assert split_at(PATCHES, "0003-c.patch") == (PATCHES[:2], PATCHES[2:])
    assert split_at(PATCHES, "0001") == ((), PATCHES)


def test_a_span_names_its_first_and_last_patch() -> None:
    assert span(PATCHES) == "0001..0003"
    assert span(PATCHES[:1]) == "0001"
    assert span(()) == "none"


WITH_AIDS = PATCHES + (Path("kernel-series/aids/0001-apic.patch"),)


def test_an_aid_is_numbered_in_its_own_folder() -> None:
    assert span(WITH_AIDS) == "0001..aids/0001"
    assert split_at(WITH_AIDS, "aids/0001") == (PATCHES, WITH_AIDS[3:])
    assert split_at(WITH_AIDS, "0001") == ((), WITH_AIDS)


@pytest.mark.parametrize("start", ["0004", "0002-b", "2", "c.patch", ""])
def test_from_a_patch_not_in_the_series_is_refused(start: str) -> None:
    with pytest.raises(SandboxError, match=rf"^check-series --from {start}: no such patch in the series "
                                           r"\(known: 0001\.\.0003\)$"):
        split_at(PATCHES, start)


def test_from_an_unknown_patch_is_refused_before_anything_is_built(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check-series", "--from", "0999"]) == EXIT_ERROR
    assert capsys.readouterr().err.strip().startswith("error: check-series --from 0999: no such patch")


def test_report_says_the_base_was_not_checked(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    results = [PatchCheck("0001..0002", "not checked", True, True, 200.0, (), log, checked=False),
               PatchCheck("0003-c.patch", "clean", True, True, 40.0, (), log)]
    lines = report(MACHINES["x86_64"], results).splitlines()
    assert lines[1] == "  ok  0001..0002: the base, not checked (--from); applies; builds (200s)"
    assert lines[2] == "  ok  0003-c.patch: checkpatch clean; applies; builds (40s)"
    unbuilt = PatchCheck("0001..0002", "not checked", True, False, 9.0, (), log, checked=False)
    assert not unbuilt.ok and "BUILD FAILED" in report(MACHINES["x86_64"], [unbuilt])
