"""The regression mutants (kernel-series/regressions/): the table is checked
before anything builds, every mutant names a real patch and scenarios that
run on its machine with its kernel variant (built, keyed and controlled on
that variant), and a judged run is turned into killed or survived with
the catch that told it apart. No build, no boot here: `just mutants` does that."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from sandbox.app import mutants as runner
from sandbox.app.mutants import KILLED, SURVIVED, MutantResult, catch_of, scenarios_of, table
from sandbox.base.errors import InputError, SandboxError
from sandbox.base.machines import MACHINES, Machine
from sandbox.build import kernel
from sandbox.build.kernel import KernelArtifact, KernelRequest, cache_key, mutant_key
from sandbox.guest.klog import Finding
from sandbox.judge.evaluate import KernelVerdict, ScenarioResult, Verdict
from sandbox.judge.judged import JudgedRun
from sandbox.report.text import WIDTH
from sandbox.run.record import COMPLETED, ERROR, RunRecord
from sandbox.base.paths import SCENARIOS
from sandbox.scenario import suite
from sandbox.scenario.model import Scenario
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
def test_each_mutants_scenarios_run_on_its_machine_with_its_kernel(mutant: Mutant) -> None:
    chosen = scenarios_of(mutant)
    assert chosen and all(mutant.machine in s.machines and s.kernel == mutant.kernel for s in chosen)


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
    (('machine = "x86_64"', 'machine = "x86_64"\nkernel = "lts"'), "mutant[0].kernel",
     "unknown kernel variant 'lts' (known: series, pristine, strict, traced, system, checked)"),
    (('machine = "x86_64"', 'machine = "x86_64"\nkernel = "pristine"'), "mutant[0].kernel",
     "so its kernel must apply the series"),
    (('machine = "x86_64"', 'machine = "x86_64"\nkernel = 1'), "mutant[0].kernel", "expected a string"),
])
def test_a_bad_table_gets_one_line_naming_file_and_key(tmp_path: Path, change: tuple[str, str],
                                                       key: str, message: str) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    text = GOOD.replace(*change).replace("{patch}", "0001-x.patch")
    with pytest.raises(InputError) as err:
        parse_mutants(text, "mutants.toml", tmp_path)
    assert str(err.value).startswith(f"mutants.toml: {key}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_the_kernel_key_is_parsed_and_defaults_to_the_series(tmp_path: Path) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    (tmp_path / "0002-y.patch").write_text("From y\n")
    text = (GOOD.replace("{patch}", "0001-x.patch")
            + GOOD.replace('"one"', '"two"').replace("{patch}", "0002-y.patch")
            .replace('machine = "x86_64"', 'machine = "i386"\nkernel = "strict"'))
    one, two = parse_mutants(text, "mutants.toml", tmp_path)
    assert (one.name, one.kernel) == ("one", "series")
    assert (two.name, two.machine, two.kernel) == ("two", "i386", "strict")
    assert Mutant("m", tmp_path / "0001-x.patch", "x86_64", ()).kernel == "series"


def test_a_mutant_listed_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    row = GOOD.replace("{patch}", "0001-x.patch")
    with pytest.raises(InputError, match=r"mutant\[1\].name: 'one' is listed twice"):
        parse_mutants(row + row, "mutants.toml", tmp_path)


# --- the mutant's kernel variant: its key, its build, its scenarios and control ---

I386 = MACHINES["i386"]
VERSION = "6.1.999-1"


def old_mutant_key(version: str, machine: Machine, patch: Path) -> str:
    """mutant_key() before mutants had a variant: the series key and the patch."""
    series = cache_key(version, KernelRequest(machine)).encode()
    return hashlib.sha256(series + b"\0" + patch.read_bytes()).hexdigest()[:16]


def test_a_series_mutants_key_is_the_one_cached_kernels_were_stored_under(tmp_path: Path) -> None:
    patch = tmp_path / "0001-x.patch"
    patch.write_text("From x\n")
    for m in MACHINES.values():
        assert mutant_key(VERSION, m, patch) == mutant_key(VERSION, m, patch, "series") \
            == old_mutant_key(VERSION, m, patch)


def test_a_strict_mutants_key_is_the_strict_key_and_the_patch(tmp_path: Path) -> None:
    patch = tmp_path / "0001-x.patch"
    patch.write_text("From x\n")
    strict = cache_key(VERSION, KernelRequest(I386, "strict")).encode()
    key = mutant_key(VERSION, I386, patch, "strict")
    assert key == hashlib.sha256(strict + b"\0" + b"From x\n").hexdigest()[:16]
    assert key != mutant_key(VERSION, I386, patch)
    patch.write_text("From y\n")
    assert mutant_key(VERSION, I386, patch, "strict") != key


def test_a_strict_mutant_builds_in_the_strict_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    patch = tmp_path / "0001-x.patch"
    patch.write_text("From x\n")
    calls: list[tuple[KernelRequest, Path, str]] = []

    def cached_build(request: KernelRequest, folder: Path, key: str, *_: object) -> KernelArtifact:
        calls.append((request, folder, key))
        return KernelArtifact(key, folder, folder / "bzImage", folder / "config", {})

    monkeypatch.setattr(kernel, "_cached_build", cached_build)
    monkeypatch.setattr(kernel, "debian_version", lambda: VERSION)
    monkeypatch.setattr(kernel.paths, "cache_dir", lambda: tmp_path)
    kernel.build_mutant(I386, "x", patch, "strict")
    kernel.build_mutant(I386, "x", patch)
    strict_key, series_key = mutant_key(VERSION, I386, patch, "strict"), mutant_key(VERSION, I386, patch)
    assert calls == [
        (KernelRequest(I386, "strict"), tmp_path / "kernels" / f"i386-mutant-x-{strict_key}", strict_key),
        (KernelRequest(I386, "series"), tmp_path / "kernels" / f"i386-mutant-x-{series_key}", series_key),
    ]


STRICT_SCENARIO = "kernel/rtc-past-2038-strict.toml"
SERIES_SCENARIO = "kernel/rtc-past-2038.toml"


def test_a_strict_mutant_runs_strict_scenarios_and_only_those() -> None:
    strict = Mutant("m", REGRESSIONS / "0001-x.patch", "i386", (STRICT_SCENARIO,), "strict")
    assert [s.kernel for s in scenarios_of(strict)] == ["strict"]
    with pytest.raises(SandboxError, match=r"^mutant m: kernel/rtc-past-2038 does not run on i386 "
                                           r"with the strict kernel$"):
        scenarios_of(Mutant("m", strict.patch, "i386", (SERIES_SCENARIO,), "strict"))


def test_a_series_mutant_refuses_a_strict_scenario() -> None:
    with pytest.raises(SandboxError, match=r"^mutant m: kernel/rtc-past-2038-strict does not run on i386 "
                                           r"with the series kernel$"):
        scenarios_of(Mutant("m", REGRESSIONS / "0001-x.patch", "i386", (STRICT_SCENARIO,)))


def test_the_control_runs_each_scenario_on_its_mutants_kernel(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    strict = Mutant("s", REGRESSIONS / "0001-x.patch", "i386", (STRICT_SCENARIO,), "strict")
    series = Mutant("r", REGRESSIONS / "0002-y.patch", "i386", (SERIES_SCENARIO,))
    prepared: list[tuple[str, str]] = []
    ran: list[tuple[str, str]] = []

    def prepare(machine: Machine, variant: str = "series") -> tuple[str, str]:
        prepared.append((machine.name, variant))
        return machine.name, variant

    def run(target: tuple[str, str], scenarios: list[Scenario], results: Path, label: str) -> tuple[str, float]:
        ran.extend((f"{target[0]}/{target[1]}", s.name) for s in scenarios)
        return ("it failed" if target[1] == "strict" else ""), 0.0

    monkeypatch.setattr(runner, "prepare_target", prepare)
    monkeypatch.setattr(runner, "_run", run)
    plans = {m: scenarios_of(m) for m in (strict, series)}
    with pytest.raises(SandboxError, match=r"^control: kernel/rtc-past-2038-strict fails on the strict kernel "
                                           r"of i386, so it cannot tell a mutant apart: it failed$"):
        runner.check_controls(plans, tmp_path)
    assert prepared == [("i386", "series"), ("i386", "strict")]
    assert ran == [("i386/series", "kernel/rtc-past-2038"), ("i386/strict", "kernel/rtc-past-2038-strict")]


def test_a_mutant_is_built_on_its_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, str, str]] = []

    def build(machine: Machine, name: str, patch: Path, variant: str = "series") -> str:
        built.append((machine.name, name, variant))
        return "artifact"

    monkeypatch.setattr(runner, "build_mutant", build)
    monkeypatch.setattr(runner, "target_with", lambda machine, artifact: (machine.name, artifact))
    monkeypatch.setattr(runner, "_run", lambda *_: ("", 0.0))
    strict = Mutant("s", REGRESSIONS / "0001-x.patch", "i386", (STRICT_SCENARIO,), "strict")
    result = runner.run_mutant(strict, scenarios_of(strict), tmp_path)
    assert built == [("i386", "s", "strict")] and result.verdict == SURVIVED


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
