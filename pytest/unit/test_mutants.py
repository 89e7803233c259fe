"""The regression mutants (kernel-series/regressions/): the table is checked
before anything builds, every mutant names a real patch and scenarios that
run on its machine, and a judged run is turned into killed or survived with
the catch that told it apart. No build, no boot here: `just mutants` does that."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandbox.app.mutants import KILLED, SURVIVED, MutantResult, catch_of, scenarios_of, table
from sandbox.base.errors import InputError, SandboxError
from sandbox.guest.klog import Finding
from sandbox.judge.evaluate import KernelVerdict, ScenarioResult, Verdict
from sandbox.report.text import WIDTH, JudgedRun
from sandbox.run.record import COMPLETED, ERROR, RunRecord
from sandbox.base.paths import SCENARIOS
from sandbox.scenario import suite
from sandbox.scenario.mutants import REGRESSIONS, Mutant, load_mutants, parse_mutants

MUTANTS = load_mutants()


def test_at_least_ten_mutants_each_with_its_own_patch_and_name() -> None:
    assert len(MUTANTS) >= 10
    assert len({m.name for m in MUTANTS}) == len({m.patch for m in MUTANTS}) == len(MUTANTS)
    listed = {m.patch.name for m in MUTANTS}
    assert listed == {p.name for p in REGRESSIONS.glob("*.patch")}, "a patch in the folder is in no [[mutant]]"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_patch_is_one_commit_that_says_why_and_names_its_catcher(mutant: Mutant) -> None:
    text = mutant.patch.read_text()
    assert text.startswith("From ") and "\nSubject: [PATCH] REGRESSION: " in text
    touched = re.findall(r"^diff --git a/(\S+) ", text, re.M)
    assert 1 <= len(touched) <= 2, touched  # one file, or one change split over two
    message = text.split("\n\n", 1)[1].split("\n---\n", 1)[0]
    assert any(scenario.partition("[")[0] in message for scenario in mutant.scenarios), \
        "the message names the scenario that must catch it"
    assert f"on {mutant.machine}" in message


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_each_mutants_scenarios_run_on_its_machine_with_the_series_kernel(mutant: Mutant) -> None:
    chosen = scenarios_of(mutant)
    assert chosen and all(mutant.machine in s.machines and s.kernel == "series" for s in chosen)


GOOD = """
[[mutant]]
name = "one"
patch = "{patch}"
machine = "x86_64"
scenarios = ["ipc/after-2106.toml"]
"""


@pytest.mark.parametrize(("change", "key", "message"), [
    (("x86_64", "sparc"), "mutant[0].machine", "unknown machine 'sparc'"),
    (("ipc/after-2106.toml", "ipc/nosuch.toml"), "mutant[0].scenarios[0]", "no scenario file"),
    (('name = "one"', 'name = "One!"'), "mutant[0].name", "is not a name"),
    (('name = "one"', 'name = "one"\ncolour = "red"'), "mutant[0].colour", "unknown key"),
    (('patch = "{patch}"', 'patch = "../series"'), "mutant[0].patch", "no patch file"),
    (('scenarios = ["ipc/after-2106.toml"]', 'scenarios = []'), "mutant[0].scenarios", "non-empty list"),
])
def test_a_bad_table_gets_one_line_naming_file_and_key(tmp_path: Path, change: tuple[str, str],
                                                       key: str, message: str) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    text = GOOD.replace(*change).replace("{patch}", "0001-x.patch")
    with pytest.raises(InputError) as err:
        parse_mutants(text, "mutants.toml", tmp_path)
    assert str(err.value).startswith(f"mutants.toml: {key}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_mutant_listed_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    row = GOOD.replace("{patch}", "0001-x.patch")
    with pytest.raises(InputError, match=r"mutant\[1\].name: 'one' is listed twice"):
        parse_mutants(row + row, "mutants.toml", tmp_path)


# --- from a judged run to a verdict ------------------------------------------

SCENARIO = suite.load_all([SCENARIOS / "ipc/after-2106.toml"])[0]


def judged(outcome: str = COMPLETED, verdicts: tuple[Verdict, ...] = (),
           kernel: tuple[KernelVerdict, ...] = ()) -> JudgedRun:
    record = RunRecord(SCENARIO.name, "x86_64", "tcg", outcome, "the detail", "6.1", 1.0, (), (), (), Path("/e"))
    result = ScenarioResult(SCENARIO.name, "x86_64", verdicts, kernel) if outcome == COMPLETED else None
    return JudgedRun(record, result)


def verdict(passed: bool, field: str = "shm_atime_high") -> Verdict:
    return Verdict(2, "after-2106", "time32-syscall", "shm_stat_raw", field, "1", "1" if passed else "0", passed)


def test_a_run_that_passed_catches_nothing() -> None:
    assert catch_of(SCENARIO, judged(verdicts=(verdict(True),))) == ""


def test_the_first_failed_expectation_is_the_catch() -> None:
    caught = catch_of(SCENARIO, judged(verdicts=(verdict(True, "shm_segsz"), verdict(False), verdict(False, "x"))))
    assert caught == ("ipc/after-2106 [after-2106] time32-syscall shm_stat_raw.shm_atime_high: "
                      "got 0, expected 1")


def test_a_guest_that_hung_or_panicked_is_the_catch() -> None:
    assert catch_of(SCENARIO, judged("panic")) == "ipc/after-2106: panic (the detail)"
    assert catch_of(SCENARIO, judged("hang")) == "ipc/after-2106: hang (the detail)"


def test_a_kernel_finding_is_the_catch() -> None:
    finding = KernelVerdict("oops", expected=False, findings=(Finding("oops", 812, "Oops: 0000 [#1]"),))
    assert catch_of(SCENARIO, judged(verdicts=(verdict(True),), kernel=(finding,))) == \
        "ipc/after-2106: kernel log: oops"


def test_a_harness_error_is_no_verdict() -> None:
    with pytest.raises(SandboxError, match="error: the detail"):
        catch_of(SCENARIO, judged(ERROR))


def test_the_table_fits_the_terminal_and_counts_the_killed() -> None:
    long_catch = "ipc/after-2106 [after-2106] time32-syscall shm_stat_raw.shm_atime_high: " + "x" * 200
    results = [MutantResult(MUTANTS[0], KILLED, long_catch, 61.0, 40.5),
               MutantResult(MUTANTS[1], SURVIVED, "", 70.2, 38.0)]
    text = table(results)
    assert all(len(line) <= WIDTH for line in text.splitlines())
    assert text.splitlines()[-1] == "1/2 mutants killed (50%)"
    assert f"{MUTANTS[0].number} {MUTANTS[0].name}" in text and "survived" in text
