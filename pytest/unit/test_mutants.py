"""The regression mutants (kernel-series/regressions/): the table is checked
before anything builds, every mutant names a real patch and scenarios that
run on its machine with its kernel variant (built, keyed and controlled on
that variant and tree), each tree's view of it (6.12: its own regenerated
patch, another machine, or absent with the reason), and a judged run is
turned into killed or survived with the catch that told it apart. No build,
no boot here: `just mutants [--tree 6.12]` does that."""
from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.app import cli, mutants as runner, verbs
from sandbox.app.exit_codes import EXIT_ERROR, EXIT_PASSED
from sandbox.app.mutants import (ABSENT, KILLED, SURVIVED, MutantResult, absent_result, all_killed, catch_of,
                                 plan, scenarios_of, table)
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
from sandbox.base.trees import TREES
from sandbox.scenario.mutants import REGRESSIONS, Mutant, load_mutants, parse_mutants, regressions

MUTANTS = load_mutants()
ON_TREE = {name: load_mutants(name) for name in TREES}
"""Every tree's view of the table."""
PRESENT = [m for mutants in ON_TREE.values() for m in mutants if not m.absent]
"""Every mutant on every tree it is on."""


def test_at_least_ten_mutants_each_with_its_own_patch_and_name() -> None:
    assert len(MUTANTS) >= 10
    assert len({m.name for m in MUTANTS}) == len({m.patch for m in MUTANTS}) == len(MUTANTS)
    listed = {m.patch.name for m in MUTANTS}
    assert listed == {p.name for p in REGRESSIONS.glob("*.patch")}, "a patch in the folder is in no [[mutant]]"


def _id(mutant: object) -> str:
    """'6.12-futex-timeout32' (an empty parameter list gives pytest's NotSet)."""
    return f"{mutant.tree}-{mutant.name}" if isinstance(mutant, Mutant) else "none"


def message_of(patch: Path) -> str:
    """The commit message of a format-patch file: after the headers, before '---'."""
    return patch.read_text().split("\n\n", 1)[1].split("\n---\n", 1)[0]


@pytest.mark.parametrize("mutant", PRESENT, ids=_id)
def test_each_patch_is_one_commit_that_says_why_and_names_its_catcher(mutant: Mutant) -> None:
    text = mutant.patch.read_text()
    assert text.startswith("From ") and "\nSubject: [PATCH] REGRESSION: " in text
    touched = re.findall(r"^diff --git a/(\S+) ", text, re.M)
    assert 1 <= len(touched) <= 2, touched  # one file, or one change split over two
    message = message_of(mutant.patch)
    assert any(scenario.partition("[")[0] in message for scenario in mutant.scenarios), \
        "the message names the scenario that must catch it"
    assert f"on {_machine_words(mutant.name)}" in " ".join(message.split()), "the message names where it runs on every tree"
    assert re.search(r"^Kind: (historical|synthetic|series)\. ", message, re.M), "the message says its kind"


def _on_default(mutant: Mutant) -> Mutant:
    return next(m for m in MUTANTS if m.name == mutant.name)


def _machine_words(name: str) -> str:
    """How the one message every tree shares names the mutant's machines:
    the machine when it is the same on every tree, else "a 32-bit kernel"
    when each is one (i386 on 6.1, armhf on 6.12)."""
    machines = {m.machine for mutants in ON_TREE.values() for m in mutants if m.name == name and not m.absent}
    if len(machines) == 1:
        return machines.pop()
    assert all("native64" not in MACHINES[m].flavours for m in machines), f"{name}: 64 and 32 bits: {machines}"
    return "a 32-bit kernel"


@pytest.mark.parametrize("mutant", PRESENT, ids=_id)
def test_each_mutants_scenarios_run_on_its_machine_with_its_kernel(mutant: Mutant) -> None:
    chosen = scenarios_of(mutant)
    assert chosen and all(mutant.machine in s.machines and s.kernel == mutant.kernel for s in chosen)
    assert all(s.skip_on(mutant.tree, mutant.machine) is None for s in chosen)


def folders(root: Path) -> dict[str, Path]:
    """Each tree's folder of patches under a test's root: 6.1's is the root."""
    return {"6.1": root, "6.12": root / "6.12"}


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
        parse_mutants(text, "mutants.toml", folders=folders(tmp_path))
    assert str(err.value).startswith(f"mutants.toml: {key}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


def test_the_kernel_key_is_parsed_and_defaults_to_the_series(tmp_path: Path) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    (tmp_path / "0002-y.patch").write_text("From y\n")
    text = (GOOD.replace("{patch}", "0001-x.patch")
            + GOOD.replace('"one"', '"two"').replace("{patch}", "0002-y.patch")
            .replace('machine = "x86_64"', 'machine = "i386"\nkernel = "strict"'))
    text = text.replace('kernel = "strict"', 'kernel = "strict"\ntrees."6.12" = { machine = "armhf" }')
    one, two = parse_mutants(text, "mutants.toml", folders=folders(tmp_path))
    assert (one.name, one.kernel) == ("one", "series")
    assert (two.name, two.machine, two.kernel) == ("two", "i386", "strict")
    assert Mutant("m", tmp_path / "0001-x.patch", "x86_64", ()).kernel == "series"


def test_a_mutant_listed_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "0001-x.patch").write_text("From x\n")
    row = GOOD.replace("{patch}", "0001-x.patch")
    with pytest.raises(InputError, match=r"mutant\[1\].name: 'one' is listed twice"):
        parse_mutants(row + row, "mutants.toml", folders=folders(tmp_path))


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
    monkeypatch.setattr(kernel, "debian_version", lambda *_: VERSION)
    monkeypatch.setattr(kernel.paths, "cache_dir", lambda: tmp_path)
    kernel.build_mutant(I386, "x", patch, "strict")
    kernel.build_mutant(I386, "x", patch)
    strict_key, series_key = mutant_key(VERSION, I386, patch, "strict"), mutant_key(VERSION, I386, patch)
    assert calls == [
        (KernelRequest(I386, "strict"), tmp_path / "kernels" / f"i386-mutant-x-{strict_key}", strict_key),
        (KernelRequest(I386, "series"), tmp_path / "kernels" / f"i386-mutant-x-{series_key}", series_key),
    ]


def test_a_6_12_mutant_builds_on_the_6_12_tree_in_a_folder_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    patch = tmp_path / "0001-x.patch"
    patch.write_text("From x\n")
    calls: list[tuple[KernelRequest, Path, str]] = []
    versions: list[str] = []

    def cached_build(request: KernelRequest, folder: Path, key: str, *_: object) -> KernelArtifact:
        calls.append((request, folder, key))
        return KernelArtifact(key, folder, folder / "zImage", folder / "config", {})

    def version(tree: object) -> str:
        versions.append(getattr(tree, "name"))
        return VERSION

    monkeypatch.setattr(kernel, "_cached_build", cached_build)
    monkeypatch.setattr(kernel, "debian_version", version)
    monkeypatch.setattr(kernel.paths, "cache_dir", lambda: tmp_path)
    armhf = MACHINES["armhf"]
    kernel.build_mutant(armhf, "x", patch, "series", "6.12")
    kernel.build_mutant(armhf, "x", patch)
    new, old = mutant_key(VERSION, armhf, patch, "series", "6.12"), mutant_key(VERSION, armhf, patch)
    assert versions == ["6.12", "6.1"] and new != old  # the 6.12 series is in its key
    assert old == old_mutant_key(VERSION, armhf, patch)  # the 6.1 key as before the trees
    assert calls == [
        (KernelRequest(armhf, "series", "6.12"), tmp_path / "kernels" / f"armhf-mutant-x-6.12-{new}", new),
        (KernelRequest(armhf, "series", "6.1"), tmp_path / "kernels" / f"armhf-mutant-x-{old}", old),
    ]


def test_a_6_12_mutant_is_controlled_and_booted_on_6_12(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mutant = next(m for m in ON_TREE["6.12"] if m.name == "trap-kills-init")
    prepared: list[tuple[str, str, str]] = []
    booted: list[object] = []
    monkeypatch.setattr(runner, "prepare_target",
                        lambda machine, variant, tree: prepared.append((machine.name, variant, tree)))
    monkeypatch.setattr(runner, "build_mutant", lambda *args: args)
    monkeypatch.setattr(runner, "target_with", lambda machine, artifact, tree: booted.append((machine.name, tree)))
    monkeypatch.setattr(runner, "_run", lambda *_: ("caught", 0.0))
    with pytest.raises(SandboxError, match=r"^control: kernel/time32-trap-init fails on the series kernel of "
                                           r"armhf \(6.12 tree\)"):
        runner.check_controls({mutant: scenarios_of(mutant)}, tmp_path)
    assert prepared == [("armhf", "series", "6.12")]
    result = runner.run_mutant(mutant, scenarios_of(mutant), tmp_path)
    assert booted == [("armhf", "6.12")] and result.verdict == KILLED


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

    def prepare(machine: Machine, variant: str = "series", tree: str = "6.1") -> tuple[str, str]:
        prepared.append((machine.name, variant))
        return machine.name, variant

    def run(target: tuple[str, str], scenarios: list[Scenario], results: Path, label: str) -> tuple[str, float]:
        ran.extend((f"{target[0]}/{target[1]}", s.name) for s in scenarios)
        return ("it failed" if target[1] == "strict" else ""), 0.0

    monkeypatch.setattr(runner, "prepare_target", prepare)
    monkeypatch.setattr(runner, "_run", run)
    plans = {m: scenarios_of(m) for m in (strict, series)}
    with pytest.raises(SandboxError, match=r"^control: kernel/rtc-past-2038-strict fails on the strict kernel "
                                           r"of i386 \(6.1 tree\), so it cannot tell a mutant apart: it failed$"):
        runner.check_controls(plans, tmp_path)
    assert prepared == [("i386", "series"), ("i386", "strict")]
    assert ran == [("i386/series", "kernel/rtc-past-2038"), ("i386/strict", "kernel/rtc-past-2038-strict")]


def test_a_mutant_is_built_on_its_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, str, str]] = []

    def build(machine: Machine, name: str, patch: Path, variant: str = "series", tree: str = "6.1") -> str:
        built.append((machine.name, name, variant))
        return "artifact"

    monkeypatch.setattr(runner, "build_mutant", build)
    monkeypatch.setattr(runner, "target_with", lambda machine, artifact, tree: (machine.name, artifact))
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
    assert text.splitlines()[0] == "regression mutants on the 6.1 tree"
    assert text.splitlines()[-1] == "1/2 mutants killed (50%) on the 6.1 tree"
    assert f"{MUTANTS[0].number} {MUTANTS[0].name}" in text and "survived" in text


# --- the trees: each tree's view of the table -------------------------------

ON_612 = GOOD + 'trees."6.12" = {entry}\n'


def two_trees(root: Path, *names: str) -> dict[str, Path]:
    """A 6.1 folder holding 0001-x.patch and a 6.12 one holding `names`."""
    (root / "6.12").mkdir()
    (root / "0001-x.patch").write_text("From x\n")
    for name in names:
        (root / "6.12" / name).write_text("From x, regenerated\n")
    return folders(root)


def test_a_mutant_without_a_tree_entry_is_the_same_on_6_12(tmp_path: Path) -> None:
    text = GOOD.replace("{patch}", "0001-x.patch")
    (old,), (new,) = (parse_mutants(text, "m.toml", tree, two_trees(tmp_path) if tree == "6.1" else folders(tmp_path))
                      for tree in ("6.1", "6.12"))
    assert (old.tree, new.tree) == ("6.1", "6.12")
    assert new == Mutant("one", tmp_path / "0001-x.patch", "x86_64", ("ipc/after-2106.toml",), tree="6.12")
    assert not new.regenerated and not new.absent


def test_a_patch_of_the_same_name_in_the_6_12_folder_is_the_mutant_there(tmp_path: Path) -> None:
    text = GOOD.replace("{patch}", "0001-x.patch")
    roots = two_trees(tmp_path, "0001-x.patch")
    (old,) = parse_mutants(text, "m.toml", "6.1", roots)
    (new,) = parse_mutants(text, "m.toml", "6.12", roots)
    assert (old.patch, old.regenerated) == (tmp_path / "0001-x.patch", False)
    assert (new.patch, new.regenerated, new.number) == (tmp_path / "6.12" / "0001-x.patch", True, "0001")


def test_a_tree_entry_moves_the_mutant_to_another_machine_there(tmp_path: Path) -> None:
    text = ON_612.replace('machine = "x86_64"', 'machine = "i386"').format(
        patch="0001-x.patch", entry='{ machine = "armhf" }').replace("{patch}", "0001-x.patch")
    roots = two_trees(tmp_path)
    assert [m.machine for m in parse_mutants(text, "m.toml", "6.1", roots)] == ["i386"]
    assert [m.machine for m in parse_mutants(text, "m.toml", "6.12", roots)] == ["armhf"]


def test_a_mutant_absent_from_6_12_says_why_and_runs_nothing_there(tmp_path: Path) -> None:
    text = ON_612.replace("{patch}", "0001-x.patch").replace("{entry}", '{ absent = "no such code in 6.12" }')
    roots = two_trees(tmp_path)
    (old,) = parse_mutants(text, "m.toml", "6.1", roots)
    (new,) = parse_mutants(text, "m.toml", "6.12", roots)
    assert (old.absent, new.absent) == ("", "no such code in 6.12")
    assert scenarios_of(new) == () and len(scenarios_of(old)) == 1


@pytest.mark.parametrize(("entry", "key", "message"), [
    (None, "mutant[0].machine",
     'the 6.12 tree is not built for i386 (only x86_64, armhf): give trees."6.12".machine, or '
     'trees."6.12".absent'),
    ('{ machine = "i386" }', 'mutant[0].trees."6.12".machine', "the 6.12 tree is not built for i386"),
    ('{ machine = "sparc" }', 'mutant[0].trees."6.12".machine', "unknown machine 'sparc'"),
    ('{ absent = "" }', 'mutant[0].trees."6.12".absent', "must not be empty"),
    ('{ absent = "gone", machine = "armhf" }', 'mutant[0].trees."6.12"', "'absent' goes alone"),
    ('{ colour = "red" }', 'mutant[0].trees."6.12".colour', "unknown key 'colour'"),
    ("{}", 'mutant[0].trees."6.12"', "expected machine or absent"),
    ('"armhf"', 'mutant[0].trees."6.12"', "expected a table"),
])
def test_a_bad_tree_entry_gets_one_line_naming_file_and_key(tmp_path: Path, entry: str | None,
                                                            key: str, message: str) -> None:
    text = (GOOD if entry is None else ON_612).replace('machine = "x86_64"', 'machine = "i386"')
    text = text.replace("{patch}", "0001-x.patch").replace("{entry}", entry or "")
    with pytest.raises(InputError) as err:
        parse_mutants(text, "m.toml", "6.1", two_trees(tmp_path))  # every tree checked, whichever is asked
    assert str(err.value).startswith(f"m.toml: {key}: ") and message in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("trees", "key", "message"), [
    ('trees."6.1" = { machine = "i386" }', 'mutant[0].trees."6.1"', "own keys are the 6.1 tree's"),
    ('trees."5.10" = { machine = "i386" }', 'mutant[0].trees."5.10"', "unknown kernel tree '5.10'"),
    ('trees = "6.12"', "mutant[0].trees", "expected a table"),
])
def test_the_trees_table_names_other_known_trees(tmp_path: Path, trees: str, key: str, message: str) -> None:
    text = GOOD.replace("{patch}", "0001-x.patch") + trees + "\n"
    with pytest.raises(InputError) as err:
        parse_mutants(text, "m.toml", "6.1", two_trees(tmp_path))
    assert str(err.value).startswith(f"m.toml: {key}: ") and message in str(err.value)


def test_an_absent_mutant_with_a_6_12_patch_is_refused(tmp_path: Path) -> None:
    text = ON_612.replace("{patch}", "0001-x.patch").replace("{entry}", '{ absent = "gone" }')
    with pytest.raises(InputError, match=r'^m.toml: mutant\[0\].trees."6.12".absent: absent from 6.12, yet '):
        parse_mutants(text, "m.toml", "6.12", two_trees(tmp_path, "0001-x.patch"))


def test_an_unknown_tree_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"^unknown kernel tree '5.10' \(known: 6.1, 6.12\)$"):
        parse_mutants(GOOD.replace("{patch}", "0001-x.patch"), "m.toml", "5.10", two_trees(tmp_path))


# --- the repository's table on 6.12 ------------------------------------------

def test_every_tree_lists_the_same_mutants_each_on_a_machine_it_builds() -> None:
    for name, mutants in ON_TREE.items():
        assert [m.name for m in mutants] == [m.name for m in MUTANTS]
        assert all(m.tree == name for m in mutants)
        assert all(m.machine in TREES[name].machines for m in mutants if not m.absent)


def test_every_6_12_patch_is_a_mutant_regenerated_there() -> None:
    own = {m.patch.name for m in ON_TREE["6.12"] if m.regenerated}
    assert own == {p.name for p in regressions("6.12").glob("*.patch")}, "a 6.12 patch is no mutant's"
    assert own <= {m.patch.name for m in MUTANTS}, "a 6.12 patch has the name of its 6.1 one"


@pytest.mark.parametrize("mutant", [m for m in ON_TREE["6.12"] if m.regenerated], ids=_id)
def test_a_regenerated_patch_puts_back_the_same_bug_with_the_same_message(mutant: Mutant) -> None:
    old = _on_default(mutant).patch
    assert message_of(mutant.patch) == message_of(old)
    subject = re.compile(r"^Subject: .*(?:\n .*)*", re.M)
    assert subject.search(mutant.patch.read_text())[0] == subject.search(old.read_text())[0]  # type: ignore[index]
    files = re.compile(r"^diff --git a/(\S+) ", re.M)
    assert files.findall(mutant.patch.read_text()) == files.findall(old.read_text())


def test_the_docs_table_says_how_each_mutant_is_on_6_12() -> None:
    """docs/mutants.md, its 6.12 column: the machine there and whether the
    patch is regenerated, or `not on 6.12` and why."""
    docs = (SCENARIOS.parent / "docs" / "mutants.md").read_text()
    for m in ON_TREE["6.12"]:
        row = next(line for line in docs.splitlines() if line.startswith(f"| {m.number} | {m.name} |"))
        cell = row.split("|")[5].strip()
        if m.absent:
            assert cell.startswith("not on 6.12: ") and len(cell) > len("not on 6.12: ") + 10, row
        else:
            assert cell.split()[0].strip(",") == m.machine, row
            assert ("regenerated" in cell) == m.regenerated, row


# --- the verb on a tree: --list, the table, the exit code ---------------------

def test_the_mutants_verb_takes_a_tree_as_the_other_verbs() -> None:
    args = cli.parser().parse_args(["mutants", "--list"])
    assert (args.tree, args.list, args.control, args.only) == ("6.1", True, True, [])
    args = cli.parser().parse_args(["mutants", "--tree", "6.12", "--no-control", "futex-timeout32"])
    assert (args.tree, args.control, args.only) == ("6.12", False, ["futex-timeout32"])


def test_list_prints_each_mutant_on_the_tree_and_builds_nothing(capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "build_mutant", lambda *_: pytest.fail("--list built a kernel"))
    assert cli.main(["mutants", "--list", "--tree", "6.12"]) == EXIT_PASSED
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "regression mutants on the 6.12 tree"
    on = [m for m in ON_TREE["6.12"] if not m.absent]
    assert lines[-1].startswith(f"{len(MUTANTS)} mutants: {len(on)} on the 6.12 tree")
    for m in on:
        assert any(line.startswith(f"{m.number} {m.name} ") and f" {m.machine} " in line for line in lines)


def test_an_unknown_tree_is_refused_by_the_verb(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["mutants", "--list", "--tree", "5.10"])
    assert "invalid choice: '5.10'" in capsys.readouterr().err


def _on(tree: str, absent: str = "", machine: str = "x86_64") -> Mutant:
    return Mutant("gone", REGRESSIONS / "0099-gone.patch", machine, ("ipc/after-2106.toml",), tree=tree,
                  absent=absent)


def test_a_mutant_not_on_the_tree_is_listed_with_why_and_never_counted() -> None:
    gone = _on("6.12", "the code it breaks is not in 6.12: " + "why " * 40)
    results = [MutantResult(replace(MUTANTS[0], tree="6.12"), KILLED, "a catch", 61.0, 40.5),
               absent_result(gone)]
    lines = table(results, "6.12").splitlines()
    assert lines[0] == "regression mutants on the 6.12 tree"
    row = lines.index(next(line for line in lines if line.startswith("0099 gone ")))
    assert lines[row].split()[-3:] == ["not", "on", "6.12"] and "killed" not in lines[row]
    assert lines[row + 1].startswith("    the code it breaks is not in 6.12: why")
    assert all(len(line) <= WIDTH for line in lines) and len(lines) > 6  # the reason wrapped, not clipped
    assert lines[-1] == "1/1 mutants killed (100%) on the 6.12 tree; 1 not on 6.12"
    assert absent_result(gone).verdict == ABSENT and all_killed(results)
    assert not all_killed([*results, MutantResult(replace(MUTANTS[1], tree="6.12"), SURVIVED, "", 1.0, 1.0)])


def test_the_plan_says_whose_patch_each_mutant_takes() -> None:
    own = replace(_on("6.12"), name="own", patch=REGRESSIONS / "0098-own.patch", regenerated=True)
    text = plan((_on("6.12"), own, _on("6.12", "not in 6.12")), "6.12")
    rows = text.splitlines()
    assert rows[2].split()[:5] == ["0099", "gone", "x86_64", "series", "6.1"]
    assert rows[3].split()[:5] == ["0098", "own", "x86_64", "series", "6.12"]
    assert rows[4].endswith("not on 6.12") and rows[5] == "    not in 6.12"
    assert rows[-1] == "3 mutants: 2 on the 6.12 tree (1 with a patch regenerated for it), 1 not on it"
    assert plan((_on("6.1"),)).splitlines()[-1] == "1 mutants on the 6.1 tree"


def test_an_absent_mutant_named_alone_is_listed_not_refused(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    gone = _on("6.12", "not in 6.12")
    monkeypatch.setattr(verbs, "load_mutants", lambda tree: (gone,))
    assert cli.main(["mutants", "--list", "--tree", "6.12", "gone"]) == EXIT_PASSED
    assert "0099 gone" in capsys.readouterr().out
    assert cli.main(["mutants", "--list", "--tree", "6.12", "nosuch"]) == EXIT_ERROR
