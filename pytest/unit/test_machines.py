"""The three machines (x86_64, i386, armhf) as data, per-machine expectations
([step.expect-on.<machine>]) and the package list with foreign architectures.
No kernel, no boot."""
from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

import pytest

from sandbox.build import deps
from sandbox.base.errors import InputError
from sandbox.judge.evaluate import evaluate
from sandbox.build.rootfs_manifest import load_manifest
from sandbox.base.machines import MACHINES
from sandbox.run.observations import Observation, parse_probe_output
from sandbox.base.paths import KERNEL_SERIES, REPO
from sandbox.scenario.catalogue import FLAVOURS, parse_catalogue
from sandbox.guest.qemu import BootRequest, qemu_argv
from sandbox.run.plan import plan
from sandbox.scenario.matchers import ErrnoIs
from sandbox.scenario.model import Expectation, ProbeStep, SetClockStep
from sandbox.scenario.parser import load_scenario, parse_scenario
from sandbox.scenario.suite import machine_flavours
from sandbox.base.timefmt import ROLLOVER, UINT32_SPAN

CATALOGUE = parse_catalogue(
    '[probe.clock]\ncalls.time = { seconds = "time", nsec = "number" }\ncalls.gettimeofday = { seconds = "time", usec = "number" }\ncalls.clock_gettime = { seconds = "time", nsec = "number" }\n'
    'flavours = ["time32-syscall", "time32-libc", "time64", "native64"]\n',
    "manifest.toml",
)
ON_OFFER = {"x86_64": FLAVOURS, "i386": FLAVOURS[:3], "armhf": FLAVOURS[:3]}
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
STEP = '[[step]]\nphase = "p"\nprobe = "clock"\n'
BASE = """\
[step.expect.time32-syscall]
time = { seconds = 5 }
gettimeofday = { seconds = 5 }
[step.expect.time64]
time = { seconds = 5 }
"""
ARMHF = """\
[step.expect-on.armhf.time32-syscall]
time = { errno = "ENOSYS" }
"""


def parse(text: str) -> ProbeStep:
    scenario = parse_scenario(textwrap.dedent(text), "scenarios/demo/case.toml", CATALOGUE, ON_OFFER)
    return scenario.probe_steps[0]


def keys(expectations: tuple[Expectation, ...]) -> list[tuple[str, str, str]]:
    return [(e.flavour, e.call, e.field) for e in expectations]


# --- [step.expect-on.<machine>] ------------------------------------------------


def test_a_machine_override_replaces_the_call_in_place_on_that_machine_only() -> None:
    step = parse(HEAD + STEP + BASE + ARMHF)
    assert keys(step.expectations_on("armhf")) == [
        ("time32-syscall", "time", "errno"),  # replaces seconds, in the same place
        ("time32-syscall", "gettimeofday", "seconds"),
        ("time64", "time", "seconds"),
    ]
    assert step.expectations_on("armhf")[0].matcher == ErrnoIs("ENOSYS")
    assert step.expectations_on("x86_64") == step.expectations
    assert step.expectations_on("i386") == step.expectations


def test_an_override_replaces_every_field_of_the_call() -> None:
    base = "[step.expect.time64.time]\nseconds = 5\nnsec = 0\n"
    step = parse(HEAD + STEP + base + '[step.expect-on.i386.time64.time]\nerrno = "EOVERFLOW"\n')
    assert keys(step.expectations_on("i386")) == [("time64", "time", "errno")]
    assert keys(step.expectations_on("x86_64")) == [("time64", "time", "seconds"), ("time64", "time", "nsec")]


def test_an_override_may_check_a_call_the_step_leaves_unchecked() -> None:
    step = parse(HEAD + STEP + "[step.expect.time64.time]\nseconds = 5\n"
                 + "[step.expect-on.armhf.time64.clock_gettime]\nseconds = 6\n")
    assert keys(step.expectations_on("armhf")) == [("time64", "time", "seconds"),
                                                    ("time64", "clock_gettime", "seconds")]


@pytest.mark.parametrize("override, message", [
    ("[step.expect-on.sparc.time64]\ntime = 1\n",
     "step[0].expect-on.sparc: machine 'sparc' is not among the scenario's machines (x86_64, armhf)"),
    ("[step.expect-on.i386.time64]\ntime = 1\n",
     "step[0].expect-on.i386: machine 'i386' is not among the scenario's machines (x86_64, armhf)"),
    ("[step.expect-on.armhf.native64]\ntime = { seconds = 1 }\n",
     "step[0].expect-on.armhf.native64: machine 'armhf' does not run flavour 'native64' "
     "(it has: time32-syscall, time32-libc, time64)"),
    ("[step.expect-on.armhf.time64]\nstat = { seconds = 1 }\n",
     "step[0].expect-on.armhf.time64.stat: unknown call 'stat' (probe clock has: time, gettimeofday, clock_gettime)"),
    ("[step.expect-on.armhf.time32-libc]\ntime = { seconds = 1 }\n",
     "step[0].expect-on.armhf.time32-libc: flavour 'time32-libc' is not among this step's flavours "
     "(time32-syscall, time64, native64)"),
    ("[step.expect-on.armhf.time64.time]\nseconds = { nearly = 1 }\n",
     "step[0].expect-on.armhf.time64.time.seconds: unknown matcher 'nearly'"),
    ("[step.expect-on]\narmhf = 1\n", "step[0].expect-on.armhf: expected a table, got an integer"),
])
def test_bad_overrides_name_the_file_and_key(override: str, message: str) -> None:
    head = HEAD + 'machines = ["x86_64", "armhf"]\n'
    step = STEP + 'flavours = ["time32-syscall", "time64", "native64"]\n'
    with pytest.raises(InputError) as err:
        parse(head + step + override)
    assert str(err.value).startswith(f"scenarios/demo/case.toml: {message}")


def test_the_evaluator_judges_each_machine_by_its_own_expectations() -> None:
    scenario = parse_scenario(HEAD + STEP + BASE + ARMHF, "scenarios/demo/case.toml", CATALOGUE, ON_OFFER)

    def run_on(arch: str, time_line: str) -> list[tuple[str, str, bool]]:
        lines = "\n".join([time_line,
                           '{"probe":"clock","flavour":"time32-syscall","call":"gettimeofday","seconds":5}',
                           '{"probe":"clock","flavour":"time64","call":"time","seconds":5}'])
        observations = parse_probe_output(lines, scenario="demo/case", machine=arch, phase="p")
        return [(v.call, v.expected, v.passed) for v in evaluate(scenario, arch, observations).verdicts]

    enosys = '{"probe":"clock","flavour":"time32-syscall","call":"time","errno":"ENOSYS"}'
    five = '{"probe":"clock","flavour":"time32-syscall","call":"time","seconds":5}'
    assert run_on("armhf", enosys)[0] == ("time", "errno ENOSYS", True)
    assert run_on("armhf", five)[0] == ("time", "errno ENOSYS", False)
    assert run_on("x86_64", five)[0] == ("time", "= 5", True)
    assert run_on("x86_64", enosys)[0] == ("time", "= 5", False)
    assert all(passed for _, _, passed in run_on("armhf", enosys)[1:])


# --- the rollover scenario on the 32-bit machines ---------------------------------

WRAPPED = ROLLOVER + 25 - UINT32_SPAN


def rollover_lines(arch: str, phase: str, time32_time: str) -> list[Observation]:
    seconds = ROLLOVER - 15 if phase == "before" else ROLLOVER + 25
    lines = []
    for call in ("time", "gettimeofday", "clock_gettime"):
        raw = WRAPPED if phase == "after" else seconds
        lines.append(time32_time if call == "time" else
                     f'{{"probe":"clock","flavour":"time32-syscall","call":"{call}","seconds":{raw}}}')
        libc = ('"errno":"EOVERFLOW"' if phase == "after" else f'"seconds":{seconds}')
        lines.append(f'{{"probe":"clock","flavour":"time32-libc","call":"{call}",{libc}}}')
        lines.append(f'{{"probe":"clock","flavour":"time64","call":"{call}","seconds":{seconds}}}')
    return parse_probe_output("\n".join(lines), scenario="clock/rollover", machine=arch, phase=phase)


ROLLOVER_FILE = REPO / "scenarios" / "clock" / "rollover.toml"


def test_rollover_on_armhf_expects_enosys_from_time32_time_in_both_phases() -> None:
    scenario = load_scenario(ROLLOVER_FILE, CATALOGUE, machine_flavours())
    enosys = '{"probe":"clock","flavour":"time32-syscall","call":"time","errno":"ENOSYS"}'
    observations = rollover_lines("armhf", "before", enosys) + rollover_lines("armhf", "after", enosys)
    result = evaluate(scenario, "armhf", observations)
    assert len(result.verdicts) == 18  # no native64 on a 32-bit machine
    assert result.passed, result.failures
    # The same observations fail on i386, where time(2) exists and must answer.
    i386 = [Observation(o.scenario, "i386", o.phase, o.probe, o.flavour, o.call, o.values, o.errno)
            for o in observations]
    failed = evaluate(scenario, "i386", i386).failures
    assert [(v.phase, v.flavour, v.call) for v in failed] == [
        ("before", "time32-syscall", "time"), ("after", "time32-syscall", "time")]


def test_rollover_on_i386_expects_the_wrap_from_time32_time() -> None:
    scenario = load_scenario(ROLLOVER_FILE, CATALOGUE, machine_flavours())
    before = f'{{"probe":"clock","flavour":"time32-syscall","call":"time","seconds":{ROLLOVER - 15}}}'
    after = f'{{"probe":"clock","flavour":"time32-syscall","call":"time","seconds":{WRAPPED}}}'
    result = evaluate(scenario, "i386", rollover_lines("i386", "before", before)
                      + rollover_lines("i386", "after", after))
    assert len(result.verdicts) == 18
    assert result.passed, result.failures


# --- the machines table and what depends on it -------------------------------------


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_machine_has_its_pieces(name: str) -> None:
    machine = MACHINES[name]
    assert (KERNEL_SERIES / "config" / machine.kernel.config_fragment).is_file()
    assert machine.toolchain.tools_flavour in machine.toolchain.flavours
    assert machine.toolchain.tools_flavour in ("time64", "native64")  # settime needs a 64-bit time_t
    assert name in load_manifest().busybox


KEYED_REPR_SHA256 = {
    "x86_64": "e186a0086dfc658244899a15f5bbcc1020c8eb37b6eab8afbf72d36db01954e4",
    "i386": "dec93c1cee4dd674f73e9743d022760ed9b7b366ed06131d82ed6d24228ec233",
    "armhf": "3023a58573b482fbfddb4ea4a57df10df3e0a8119b82d8b5f5d495868ff9931b",
}
"""sha256 of repr(Machine) when a machine was one flat row: the initramfs and
the dynamic probes hash that repr into their cache keys, so a regrouping of
the row into parts must leave it as it was (a change here rebuilds both)."""


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_a_machines_repr_is_the_flat_row_the_cache_keys_hash(name: str) -> None:
    assert hashlib.sha256(repr(MACHINES[name]).encode()).hexdigest() == KEYED_REPR_SHA256[name]


def test_guest_qemu_reads_only_the_qemu_part_of_a_machine() -> None:
    source = (REPO / "sandbox" / "guest" / "qemu.py").read_text()
    reads = set(re.findall(r"\.machine\.(\w+)", source))  # a request's machine
    assert reads == {"qemu"}, reads


def test_32_bit_machines_have_no_native64() -> None:
    assert "native64" in MACHINES["x86_64"].toolchain.flavours
    assert "native64" not in MACHINES["i386"].toolchain.flavours + MACHINES["armhf"].toolchain.flavours


def boot(name: str, tmp_path: Path) -> list[str]:
    return qemu_argv(BootRequest(MACHINES[name], Path("/k/zImage"), Path("/i/initramfs.cpio"),
                                 "2038-01-19T03:13:50Z", "tcg", tmp_path))


def test_armhf_agent_speaks_on_a_virtio_console_apart_from_the_pl011(tmp_path: Path) -> None:
    argv = boot("armhf", tmp_path)
    assert argv[0] == "qemu-system-arm"
    assert argv[argv.index("-M") + 1] == "virt" and argv[argv.index("-cpu") + 1] == "cortex-a15"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"] == [f"file:{tmp_path / 'console.log'}"]
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device"]
    assert devices == ["virtio-serial-device", "virtconsole,chardev=agent"]
    append = argv[argv.index("-append") + 1].split()
    assert {"console=ttyAMA0", "y2038.agent=hvc0"} <= set(append)


@pytest.mark.parametrize("name", ["x86_64", "i386"])
def test_the_pcs_boot_microvm_with_the_agent_on_a_second_uart_and_a_parallel_port(name: str, tmp_path: Path) -> None:
    argv = boot(name, tmp_path)
    assert argv[0] == f"qemu-system-{name}"
    assert argv[argv.index("-M") + 1].split(",")[0] == "microvm"
    # microvm wires only the first -serial (ttyS0, the console)
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-serial"] == [f"file:{tmp_path / 'console.log'}"]
    devices = [argv[i + 1] for i, a in enumerate(argv) if a == "-device"]
    assert devices == ["isa-parallel,chardev=parallel", "isa-serial,chardev=agent"]
    chardevs = [argv[i + 1] for i, a in enumerate(argv) if a == "-chardev"]
    assert "null,id=parallel" in chardevs and "stdio,id=agent,signal=off" in chardevs
    append = argv[argv.index("-append") + 1].split()
    assert {"console=ttyS0", "y2038.agent=ttyS1"} <= set(append)


def test_set_clock_runs_the_tool_in_the_machines_64_bit_flavour() -> None:
    steps = (SetClockStep(1, 2147483670), ProbeStep(2, "after", "clock", FLAVOURS))
    armhf = MACHINES["armhf"]
    commands = plan(steps, armhf.toolchain.flavours, armhf.toolchain.tools_flavour)
    assert [(c.probe, c.flavour) for c in commands] == [
        ("settime", "time64"), ("clock", "time32-syscall"), ("clock", "time32-libc"), ("clock", "time64")]
    assert commands[0].must_succeed


# --- .ci/debian-packages.txt ---------------------------------------------------------


def test_the_package_list_knows_foreign_architectures_and_guest_packages() -> None:
    packages = deps.parse("gcc  # a comment\n\nlinux-libc-dev:i386\nbusybox-static:armhf unpack\n", "l.txt")
    assert packages == [deps.Package("gcc", False), deps.Package("linux-libc-dev:i386", False),
                        deps.Package("busybox-static:armhf", True)]
    assert [p.arch for p in packages] == [None, "i386", "armhf"]
    assert deps.foreign_architectures(packages) == ["armhf", "i386"]


@pytest.mark.parametrize("line", ["busybox-static:armhf install", "a b c"])
def test_a_bad_package_line_names_the_file_and_line(line: str) -> None:
    with pytest.raises(InputError, match=r"^l.txt: line 2: expected '<package>\[:<arch>\] \[unpack\]'"):
        deps.parse(f"gcc\n{line}\n", "l.txt")


def test_the_real_package_list_installs_no_conflicting_guest_busybox() -> None:
    listed = deps.listed()
    required = deps.required()
    assert "busybox-static" in required
    unpacked = {p.name for p in listed if p.unpack}
    assert {"busybox-static:i386", "busybox-static:armhf"} <= unpacked
    assert not unpacked & set(required)
    # gcc-multilib Conflicts with every cross gcc: the list must not ask for both.
    assert not ("gcc-multilib" in required and "gcc-arm-linux-gnueabihf" in required)
    manifest = load_manifest()
    for arch in ("i386", "armhf"):
        assert manifest.busybox[arch].package in unpacked
