"""`just reliability --compare COMMIT`: the same files given to two commits' code."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sandbox.app.reliability import report_compared, worktree_of
from sandbox.app.reliability_files import Case, FileOutcome, _text, _try
from sandbox.base.errors import InputError
from sandbox.base.paths import REPO


def test_only_the_files_whose_outcome_changed_are_listed() -> None:
    before = [FileOutcome("g", "same", "one-line error", ""), FileOutcome("g", "fixed", "false pass", "")]
    after = [FileOutcome("g", "same", "one-line error", ""), FileOutcome("g", "fixed", "one-line error", "")]
    text = report_compared("abc1234", before, after)
    assert "at abc1234: one-line error: 1, accepted: 0, false pass: 1" in text
    assert "now: one-line error: 2, accepted: 0, false pass: 0" in text
    assert "| g | fixed | false pass | one-line error |" in text
    assert "same" not in text


def test_an_unknown_commit_is_one_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--compare: no-such-commit: not a commit"):
        with worktree_of("no-such-commit", tmp_path):
            pass


def test_a_worktree_of_head_runs_its_own_code_and_is_removed(tmp_path: Path) -> None:
    case = Case("g", "a probe step without expectations", _text("f.toml", 'title = "x"\nrtc = "2038-01-19T03:00:00Z"\n'
                                                                        '[[step]]\nwait = 5\n'))
    with worktree_of("HEAD", tmp_path) as tree:
        assert (tree / "sandbox" / "__main__.py").is_file()
        outcome = _try(case, case.make(tmp_path), tmp_path / "results", tree)
    assert outcome.outcome == "one-line error", outcome
    listed = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert str(tmp_path / "tree") not in listed
