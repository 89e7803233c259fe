"""Kernel variants: what a scenario may ask of its kernel, and what gets built."""
from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from sandbox.base import paths
from sandbox.scenario import suite
from sandbox.base.errors import InputError, SandboxError
from sandbox.build.kconfig import parse_config
from sandbox.build.kernel import (BUILT_MARKER, KernelRequest, build_folder, cache_key, fragment_paths,
                                   seed_build_folder, seed_request)
from sandbox.base.machines import MACHINES
from sandbox.scenario.catalogue import FLAVOURS
from sandbox.run.plan import plan
from sandbox.scenario.model import Scenario, SysctlStep
from sandbox.scenario.parser import parse_scenario
from sandbox.base.variants import VARIANTS

from clock_catalogue import CATALOGUE, FILE

STEP = """
[[step]]
phase = "p"
probe = "clock"
"""


def parse(head: str, steps: str = STEP) -> Scenario:
    text = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n' + textwrap.dedent(head) + steps
    return parse_scenario(text, FILE, CATALOGUE, {"x86_64": FLAVOURS})


# --- the scenario keys ---------------------------------------------------------
def test_a_scenario_runs_on_the_series_kernel_with_no_extra_arguments_by_default() -> None:
    scenario = parse("")
    assert (scenario.kernel, scenario.kernel_args) == ("series", ())


def test_kernel_and_kernel_args_are_read() -> None:
    scenario = parse('kernel = "pristine"\nkernel-args = ["rtc_core.hctosys_beyond_2038=1", "quiet"]\n')
    assert scenario.kernel == "pristine"
    assert scenario.kernel_args == ("rtc_core.hctosys_beyond_2038=1", "quiet")


@pytest.mark.parametrize("head, key, message", [
    ('kernel = "mainline"\n', "kernel", "unknown kernel variant 'mainline' (known: series, pristine, strict, traced, system, checked)"),
    ("kernel = 1\n", "kernel", "expected a string"),
    ('kernel-args = "quiet"\n', "kernel-args", "expected a list of strings"),
    ('kernel-args = ["a b"]\n', "kernel-args[0]", "not one kernel parameter"),
    ('kernel-args = ["x=\\"y\\""]\n', "kernel-args[0]", "not one kernel parameter"),
    ('kernel = "pristine"\n[[disk]]\nname = "t"\nfs = "tmpfs"\n[[disk]]\nname = "a"\nfs = "ext4"\n', "disk[1]",
     "kernel 'pristine' is built without block devices; the ext4 disk 'a' needs kernel = 'series' or 'strict'"),
])
def test_bad_kernel_keys_name_file_and_key(head: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(head)
    assert str(caught.value).startswith(f"{FILE}: {key}: ")
    assert message in str(caught.value)


# --- the sysctl step -------------------------------------------------------------
SYSCTL = """
[[step]]
sysctl = "kernel.time32_syscalls"
value = "deny"
""" + STEP


def test_a_sysctl_step_is_parsed_and_planned_as_the_sysctl_tool() -> None:
    scenario = parse("", SYSCTL)
    step = scenario.steps[0]
    assert step == SysctlStep(0, "kernel.time32_syscalls", "deny")
    assert step.path == "/proc/sys/kernel/time32_syscalls"
    command = plan(scenario.steps, FLAVOURS, "native64")[0]
    assert command.must_succeed and command.phase == "step0-sysctl"
    assert command.shell == "/tools/sysctl kernel.time32_syscalls deny"


def test_a_number_value_is_written_as_its_digits() -> None:
    step = parse("", SYSCTL.replace('"deny"', "1")).steps[0]
    assert step.value == "1"


@pytest.mark.parametrize("old, new, key, message", [
    ('"kernel.time32_syscalls"', '"time32_syscalls"', "step[0].sysctl", "is not a sysctl name"),
    ('"kernel.time32_syscalls"', '"../../etc/x"', "step[0].sysctl", "is not a sysctl name"),
    ('"deny"', '"deny; reboot"', "step[0].value", "one word"),
    ('value = "deny"', 'val = "deny"', "step[0].val", "unknown key 'val'"),
    ('value = "deny"', "", "step[0].value", "missing (required)"),
])
def test_bad_sysctl_steps(old: str, new: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse("", SYSCTL.replace(old, new))
    assert str(caught.value).startswith(f"{FILE}: {key}: ")
    assert message in str(caught.value)


# --- what each variant builds -----------------------------------------------------
@pytest.fixture
def series(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "kernel-series"
    shutil.copytree(paths.KERNEL_SERIES / "config", folder / "config")
    (folder / "0001-a.patch").write_text("From: x\nSubject: [PATCH] a\n")
    (folder / "series").write_text("0001-a.patch\n")
    monkeypatch.setattr(paths, "KERNEL_SERIES", folder)
    return folder


def names(variant: str) -> list[str]:
    return [p.name for p in fragment_paths(KernelRequest(MACHINES["i386"], variant))]


def test_each_variant_adds_its_fragments_after_common_and_machine(series: Path) -> None:
    assert names("pristine") == ["common.config", "i386.config"]
    series_names = ["common.config", "i386.config", "series.config", "disks.config", "net.config",
                    "devices.config", "kunit.config"]
    disks = ["memory-disks.config"]  # the machine's own, last, for a variant with disks
    assert names("series") == series_names + disks
    assert names("strict") == series_names + ["strict.config"] + disks
    assert names("traced") == ["common.config", "i386.config", "series.config", "trace.config"]
    assert names("checked") == series_names + ["trace.config"] + disks


def test_strict_turns_off_what_common_turns_on(series: Path) -> None:
    strict = (series / "config" / "strict.config").read_text()
    assert "# CONFIG_COMPAT_32BIT_TIME is not set" in strict.splitlines()
    assert "CONFIG_COMPAT_32BIT_TIME=y" in (series / "config" / "common.config").read_text()


def test_variants_differ_in_key_and_pristine_ignores_the_series(series: Path) -> None:
    keys = {v: cache_key("6.1.192-3", KernelRequest(MACHINES["armhf"], v)) for v in VARIANTS}
    assert len(set(keys.values())) == len(VARIANTS)
    pristine = keys["pristine"]
    (series / "0001-a.patch").write_text("From: x\nSubject: [PATCH] b\n")
    assert cache_key("6.1.192-3", KernelRequest(MACHINES["armhf"], "pristine")) == pristine
    assert cache_key("6.1.192-3", KernelRequest(MACHINES["armhf"], "series")) != keys["series"]


def test_an_unknown_variant_is_refused(series: Path) -> None:
    with pytest.raises(SandboxError, match="unknown kernel variant 'mainline'"):
        names("mainline")


# --- which kernels `just build-all` builds ------------------------------------
def test_the_kernels_needed_are_each_machine_and_variant_some_scenario_boots() -> None:
    machines = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3], "armhf": FLAVOURS[:3]}
    texts = ['', 'kernel = "strict"\n', 'kernel = "pristine"\nmachines = ["armhf"]\n',
             'machines = ["i386"]\n']
    scenarios = [parse_scenario(f'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n{head}{STEP}', FILE,
                                CATALOGUE, machines) for head in texts]
    assert suite.kernels_needed(scenarios) == [
        ("x86_64", "series"), ("x86_64", "strict"),
        ("i386", "series"), ("i386", "strict"),
        ("armhf", "series"), ("armhf", "pristine"), ("armhf", "strict"),
    ]
    assert suite.kernels_needed([]) == []


# --- the strict build starts from a copy of the series build ----------------------

def _series_build(tmp_path: Path) -> Path:
    """A series build folder of i386 as kbuild leaves it, objtool's records included."""
    series = tmp_path / "build" / "i386-series"
    (series / "kernel").mkdir(parents=True)
    (series / ".config").write_text("CONFIG_COMPAT_32BIT_TIME=y\n")
    (series / "kernel" / "fork.o").write_bytes(b"\x7fELF object")
    tools = series / "tools" / "objtool" / "arch" / "x86"
    tools.mkdir(parents=True)
    (tools / ".decode.o.cmd").write_text(f"cmd_{series}/tools/objtool/arch/x86/decode.o := gcc\n")
    (series / "tools" / "objtool" / ".fixdep.o.d").write_text(f"{series}/tools/objtool/fixdep.o: fixdep.c\n")
    (series / "tools" / "objtool" / "objtool").write_bytes(b"\x7fELF objtool")
    return series


def test_a_first_strict_build_starts_from_the_series_build(tmp_path: Path) -> None:
    series = _series_build(tmp_path)
    strict = series.with_name("i386-strict")
    seed_build_folder(strict, KernelRequest(MACHINES["i386"], "strict"), "series-key")
    assert (strict / "kernel" / "fork.o").read_bytes() == b"\x7fELF object"
    assert (strict / "kernel" / "fork.o").stat().st_mtime == (series / "kernel" / "fork.o").stat().st_mtime
    decode = (strict / "tools" / "objtool" / "arch" / "x86" / ".decode.o.cmd").read_text()
    assert decode == f"cmd_{strict}/tools/objtool/arch/x86/decode.o := gcc\n"
    assert (strict / "tools" / "objtool" / ".fixdep.o.d").read_text().startswith(f"{strict}/tools/")
    assert str(series) in (series / "tools" / "objtool" / ".fixdep.o.d").read_text()  # the seed is left as it was
    assert not strict.with_name("i386-strict.seeding").exists()


def test_a_strict_build_folder_is_kept_unless_the_series_one_is_current(tmp_path: Path) -> None:
    series = _series_build(tmp_path)
    strict = series.with_name("i386-strict")
    strict.mkdir()
    (strict / ".config").write_text("# CONFIG_COMPAT_32BIT_TIME is not set\n")
    request = KernelRequest(MACHINES["i386"], "strict")
    seed_build_folder(strict, request, "series-key")  # the series folder says nothing: kept
    (series / BUILT_MARKER).write_text("older-series-key\n")
    seed_build_folder(strict, request, "series-key")  # the series folder holds another kernel: kept
    assert sorted(p.name for p in strict.iterdir()) == [".config"]
    (series / BUILT_MARKER).write_text("series-key\n")
    seed_build_folder(strict, request, "series-key")  # current: strict starts again from it
    assert (strict / ".config").read_text() == "CONFIG_COMPAT_32BIT_TIME=y\n"
    assert (strict / "kernel" / "fork.o").is_file()
    assert sorted(p.name for p in strict.parent.iterdir()) == ["i386-series", "i386-strict"]


def test_variants_without_a_seed_or_a_seed_build_are_left_alone(tmp_path: Path) -> None:
    series = _series_build(tmp_path)
    (series / BUILT_MARKER).write_text("series-key\n")
    seed_build_folder(series.with_name("i386-pristine"), KernelRequest(MACHINES["i386"], "pristine"), "series-key")
    assert not series.with_name("i386-pristine").exists()
    alone = tmp_path / "other" / "armhf-strict"
    seed_build_folder(alone, KernelRequest(MACHINES["armhf"], "strict"), "series-key")  # no armhf-series build yet
    assert not alone.exists()
    assert seed_request(KernelRequest(MACHINES["armhf"], "strict")) == KernelRequest(MACHINES["armhf"], "series")
    assert seed_request(KernelRequest(MACHINES["armhf"], "pristine")).variant == "pristine"


def test_strict_differs_from_series_only_by_turning_options_off(series: Path) -> None:
    """strict = the series' fragments + strict.config, whose every option is
    "not set": the two configs differ in what the 32-bit time syscalls need."""
    assert VARIANTS["strict"].fragments == (*VARIANTS["series"].fragments, "strict.config")
    assert VARIANTS["strict"].seed == "series"
    requests = parse_config((series / "config" / "strict.config").read_text())
    assert {r.option for r in requests} == {"CONFIG_COMPAT_32BIT_TIME", "CONFIG_TIME32_KUNIT_TEST"}
    assert {r.value for r in requests} == {"n"}


# --- the 6.12 tree: build folders of its own, seeded from its own series build ----
def test_6_1_keeps_its_build_folder_names_and_6_12_gets_a_suffix(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("Y2038_CACHE", str(tmp_path))
    x86 = MACHINES["x86_64"]
    assert build_folder(KernelRequest(x86, "series")) == tmp_path / "build" / "x86_64-series"
    assert build_folder(KernelRequest(MACHINES["armhf"], "pristine")) == tmp_path / "build" / "armhf-pristine"
    assert build_folder(KernelRequest(x86, "series", "6.12")) == tmp_path / "build" / "x86_64-series-6.12"
    assert build_folder(KernelRequest(x86, "strict", "6.12")) == tmp_path / "build" / "x86_64-strict-6.12"
    assert seed_request(KernelRequest(x86, "strict", "6.12")) == KernelRequest(x86, "series", "6.12")


def test_a_6_12_strict_build_starts_from_the_6_12_series_build(tmp_path: Path) -> None:
    series_61 = _series_build(tmp_path)  # build/i386-series: 6.1's, not to be copied
    series_612 = series_61.with_name("x86_64-series-6.12")
    (series_612 / "kernel").mkdir(parents=True)
    (series_612 / ".config").write_text("CONFIG_X86_64=y\n")
    (series_612 / "kernel" / "fork.o").write_bytes(b"\x7fELF 6.12 object")
    (series_612 / BUILT_MARKER).write_text("key-612\n")
    strict_61 = series_61.with_name("x86_64-strict")
    seed_build_folder(strict_61, KernelRequest(MACHINES["x86_64"], "strict"), "key-612")  # no x86_64-series
    assert not strict_61.exists()
    strict_612 = series_61.with_name("x86_64-strict-6.12")
    seed_build_folder(strict_612, KernelRequest(MACHINES["x86_64"], "strict", "6.12"), "key-612")
    assert (strict_612 / "kernel" / "fork.o").read_bytes() == b"\x7fELF 6.12 object"
