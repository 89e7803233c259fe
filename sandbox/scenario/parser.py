"""Scenario files: the validating parser of the top level.

A scenario is one TOML file (see docs/scenario-authoring.md and
scenarios/clock/rollover.toml). Parsing is a pure function of the text, the
probe catalogue and the machines on offer; it never runs anything. Every
problem raises one InputError naming the file and the dotted key path, for
example

    scenarios/clock/rollover.toml: step[2].expect.time64.time.seconds: unknown matcher ...

Steps are numbered from 0, as in the key paths. The steps and their
expectations are parsed by sandbox/scenario/steps.py (ACTIONS), the matchers
by sandbox/scenario/matchers.py (MATCHERS), a family's [values],
[flavour-groups] and [[variant]] expanded first by sandbox/scenario/family.py.

The kernel: top-level kernel = "series" | "pristine" | "strict" | "traced" names the
variant (sandbox/base/variants.py; default "series"), and kernel-args = [...]
adds words to its command line (e.g. "rtc_core.hctosys_beyond_2038=1").
tree = "6.1" | "6.12" pins the kernel source tree (sandbox/base/trees.py);
without it the scenario runs on the session's tree (`--tree`, default 6.1).
A [time-server] table boots a second guest that serves NTP to this one's
ntp-sync steps (sandbox/scenario/time_server.py).
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path, PurePath
from types import MappingProxyType

from sandbox.base.errors import InputError
from sandbox.base.fields import Where, check_keys, names, require, string, strings, type_name
from sandbox.base.paths import REPO
from sandbox.base.trees import TREES, unknown as unknown_tree
from sandbox.base.variants import DEFAULT as DEFAULT_VARIANT, VARIANTS
from sandbox.scenario.catalogue import Catalogue
from sandbox.scenario.disks import Disk, parse_disks
from sandbox.scenario import guards
from sandbox.scenario.family import expand
from sandbox.scenario.family_rows import in_file_terms
from sandbox.scenario.matchers import Number
from sandbox.scenario.model import DEFAULT_TIMEOUT, KERNEL_FINDINGS, NtpSyncStep, Scenario, Step, TimeServer, WaitStep
from sandbox.scenario.steps import StepContext, parse_steps, rtc_time
from sandbox.scenario.time_server import parse_time_server
from sandbox.scenario.userlands import NO_USERLANDS, Userlands

# --------------------------------------------------------------------------
# The top level.

_WARP_WITH_DISK_WHY = (
    "while QEMU serves a disk request the guest is idle, so under time warp its clock "
    "jumps ahead meanwhile (the hung-task detector fires); a scenario with a disk image runs "
    "without warp")
_WARP_WITH_SERVER_WHY = (
    "two guests under time warp each jump their clock ahead while idle, each at its own "
    "moments, so NTP would measure the jumps; a scenario with a [time-server] runs without warp")

TOP_KEYS = frozenset({"title", "description", "machines", "rtc", "timeout", "disk", "step",
                      "kernel", "kernel-args", "expect-kernel", "warp", "varying", "time-server",
                      "tree"})
"""The keys of one scenario; a family's [values], [flavour-groups] and
[[variant]] are expanded before (sandbox/scenario/family.py)."""
_KERNEL_ARG_RE = re.compile(r"[A-Za-z0-9_.-]+(=[^\s\"']*)?")


def _kernel(raw: object, where: Where) -> str:
    variant = string(raw, where)
    if variant not in VARIANTS:
        where.fail(f"unknown kernel variant '{variant}' (known: {', '.join(VARIANTS)})")
    return variant


def _tree(raw: object, where: Where) -> str | None:
    """tree = "6.12": the kernel source tree the scenario is pinned to; None when unsaid."""
    if raw is None:
        return None
    name = string(raw, where)
    if name not in TREES:
        where.fail(unknown_tree(name))
    return name


def _check_disks_fit_kernel(disks: tuple[Disk, ...], kernel: str, where: Where) -> None:
    """A disk image is a block device: only variants built with disks.config can mount it."""
    if VARIANTS[kernel].has_disks:
        return
    with_disks = " or ".join(repr(name) for name, variant in VARIANTS.items() if variant.has_disks)
    for index, disk in enumerate(disks):
        if disk.has_image:
            where.at("disk").item(index).fail(
                f"kernel '{kernel}' is built without block devices; the {disk.fs} disk '{disk.name}' "
                f"needs kernel = {with_disks}")


def _kernel_args(raw: object, where: Where) -> tuple[str, ...]:
    args = strings(raw, where)
    for index, arg in enumerate(args):
        if not _KERNEL_ARG_RE.fullmatch(arg):
            where.item(index).fail(f"{arg!r} is not one kernel parameter (name or name=value, no spaces)")
    return guards.kernel_args(args, where)


def _expect_kernel(raw: object, where: Where) -> tuple[str, ...]:
    """expect-kernel = ["warning", ...]: findings the kernel log must show (and may)."""
    return () if raw == [] else names(raw, where, KERNEL_FINDINGS, "kernel finding")


def _warp(raw: object, disks: tuple[Disk, ...], server: TimeServer | None, where: Where) -> bool:
    """Time warp is on unless the scenario says `warp = false`, attaches a
    disk image or has a time server (docs/time-warp.md says which scenarios
    cannot use it)."""
    why_not = (_WARP_WITH_DISK_WHY if any(disk.has_image for disk in disks)
               else _WARP_WITH_SERVER_WHY if server is not None else None)
    if raw is None:
        return why_not is None
    if not isinstance(raw, bool):
        where.fail(f"expected true or false, got {type_name(raw)}")
    if raw and why_not is not None:
        where.fail(why_not)
    return raw


def _time_server(document: Mapping[str, object], kernel: str, userlands: Userlands,
                 steps: tuple[Step, ...], where: Where) -> TimeServer | None:
    """[time-server]: needs a kernel with a network; an ntp-sync step needs it
    (the guest has a network only then)."""
    server = (parse_time_server(document["time-server"], userlands, where.at("time-server"))
              if "time-server" in document else None)
    if server is not None and not VARIANTS[kernel].has_network:
        with_net = " or ".join(repr(name) for name, variant in VARIANTS.items() if variant.has_network)
        where.at("kernel").fail(f"kernel '{kernel}' is built without a network; a [time-server] "
                                f"needs kernel = {with_net}")
    for step in steps:
        if isinstance(step, NtpSyncStep) and server is None:
            where.at("step").item(step.index).at("ntp-sync").fail(
                "no [time-server]: the guest has a network only with one")
    return server


def _varying(raw: object, catalogue: Catalogue, where: Where) -> tuple[str, ...]:
    """varying = ["elapsed", ...]: fields a probe prints (rootfs/manifest.toml)."""
    known = sorted({name for probe in catalogue.probes + catalogue.tool_info
                    for call in probe.call_info.values() for name in call.fields})
    return () if raw == [] else names(raw, where, tuple(known), "field")


def _timeout(raw: object, where: Where) -> Number:
    return guards.timeout(raw, where)


def _machines(raw: object, where: Where, machines: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    chosen = names(raw, where, tuple(machines), "machine")
    return MappingProxyType({arch: tuple(machines[arch]) for arch in chosen})


def scenario_name(file: str) -> str:
    """'scenarios/clock/rollover.toml' -> 'clock/rollover'; elsewhere the file's stem."""
    parts = PurePath(file).with_suffix("").parts
    if "scenarios" not in parts[:-1]:
        return parts[-1]
    last = max(i for i, part in enumerate(parts[:-1]) if part == "scenarios")
    return "/".join(parts[last + 1:])


def toml_document(text: str, where: Where) -> dict[str, object]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        where.at("toml").fail(str(err))
    except RecursionError:
        where.at("toml").fail(f"nested too deep (more than {guards.MAX_DEPTH} tables or lists)")
    except ValueError:  # tomllib's int() of a number of more than 4300 digits
        where.at("toml").fail("a number with thousands of digits: not a value a scenario holds")
    return guards.document(document, where)


def check_budget(steps: tuple[Step, ...], timeout: Number, warp: bool, where: Where) -> None:
    """The waits fit the timeout, with or without time warp (guards.waits):
    checked at validation, and again when `--warp on|off` overrides the file."""
    guards.waits(((s.index, s.seconds) for s in steps if isinstance(s, WaitStep)), timeout, where.at("step"), warp)


def judges_something(scenario: Scenario, where: Where) -> Scenario:
    """A run passes only if it tested something: on each of its machines at
    least one expectation is judged, or the kernel log is (expect-kernel),
    or an ntp-sync step must step the clock. A file of probe steps without
    expectations is a recording to make (`just record`), not a test."""
    if scenario.expect_kernel or any(isinstance(s, NtpSyncStep) and s.must_step for s in scenario.steps):
        return scenario
    for machine in scenario.machines:
        if not scenario.expectations_for(machine):
            where.at("step").fail(
                f"nothing is judged on {machine}: no expectation applies to it, so a run could only pass "
                f"without testing anything; add [step.expect.<flavour>.<call>] tables (or let "
                f"`just record FILE machine={machine}` write them)")
    return scenario


def _scenario(document: dict[str, object], file: str, variant: str, catalogue: Catalogue,
              machines: Mapping[str, tuple[str, ...]], userlands: Userlands | None) -> Scenario:
    where = Where(file)
    check_keys(document, TOP_KEYS, where)
    title = guards.line(string(require(document, "title", where), where.at("title")), where.at("title"))
    description = document.get("description", "")
    if not isinstance(description, str):
        where.at("description").fail(f"expected a string, got {type_name(description)}")
    guards.text(description, where.at("description"))
    rtc = rtc_time(require(document, "rtc", where), where.at("rtc"))
    chosen = _machines(document.get("machines", list(machines)), where.at("machines"), machines)
    timeout = _timeout(document.get("timeout", DEFAULT_TIMEOUT), where.at("timeout"))
    disks = parse_disks(document.get("disk", []), where.at("disk"))
    kernel = _kernel(document.get("kernel", DEFAULT_VARIANT), where.at("kernel"))
    tree = _tree(document.get("tree"), where.at("tree"))
    _check_disks_fit_kernel(disks, kernel, where)
    kernel_args = _kernel_args(document.get("kernel-args", []), where.at("kernel-args"))
    expect_kernel = _expect_kernel(document.get("expect-kernel", []), where.at("expect-kernel"))
    context = StepContext(catalogue, chosen, userlands or NO_USERLANDS)
    steps = parse_steps(require(document, "step", where), where.at("step"), context)
    time_server = _time_server(document, kernel, userlands or NO_USERLANDS, steps, where)
    warp = _warp(document.get("warp"), disks, time_server, where.at("warp"))
    varying = _varying(document.get("varying", []), catalogue, where.at("varying"))
    check_budget(steps, timeout, warp, where)
    name = scenario_name(file)
    return Scenario(
        file=file,
        name=f"{name}[{variant}]" if variant else name,
        title=title,
        rtc=rtc,
        machines=chosen,
        steps=steps,
        description=description,
        timeout=timeout,
        disks=disks,
        kernel=kernel,
        kernel_args=kernel_args,
        expect_kernel=expect_kernel,
        variant=variant,
        warp=warp,
        varying=varying,
        time_server=time_server,
        tree=tree,
    )


def parse_scenarios(
    text: str,
    file: str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
    userlands: Userlands | None = None,
) -> tuple[Scenario, ...]:
    """The scenarios a file's text describes: one, or one per [[variant]]
    (sandbox/scenario/family.py); InputError names file and key of any problem."""
    where = Where(file)
    document = toml_document(text, where)
    scenarios = []
    for member in expand(document, where):
        try:
            scenarios.append(_scenario(member.document, file, member.variant, catalogue, machines, userlands))
        except InputError as error:  # a row that leaves steps out: the step as the file numbers it
            raise in_file_terms(error, member.step_numbers) from None
    return tuple(scenarios)


def parse_scenario(
    text: str,
    file: str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
    userlands: Userlands | None = None,
) -> Scenario:
    """The one Scenario of a file without variants."""
    scenarios = parse_scenarios(text, file, catalogue, machines, userlands)
    if len(scenarios) != 1:
        Where(file).at("variant").fail(f"{len(scenarios)} variants: this file is a family of scenarios")
    return scenarios[0]


def display_path(path: Path) -> str:
    """A path as errors show it: relative to the repository when inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except (ValueError, OSError, RuntimeError):  # outside the repository, or a symlink loop
        return str(path)


def load_scenarios(
    path: Path | str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
    userlands: Userlands | None = None,
    recording: bool = False,
) -> tuple[Scenario, ...]:
    """The scenarios of a file (one, or one per [[variant]]), each judging
    something on every machine (judges_something) unless `recording`: a
    file for `just record`, whose expectations are yet to be written."""
    path = Path(path)
    file = display_path(path)
    text = guards.read_text(path, file)  # a regular file, bounded, UTF-8
    scenarios = parse_scenarios(text, file, catalogue, machines, userlands)
    return scenarios if recording else tuple(judges_something(s, Where(file)) for s in scenarios)


def load_scenario(
    path: Path | str,
    catalogue: Catalogue,
    machines: Mapping[str, tuple[str, ...]],
    userlands: Userlands | None = None,
    recording: bool = False,
) -> Scenario:
    """The one scenario of a file without variants."""
    scenarios = load_scenarios(path, catalogue, machines, userlands, recording)
    if len(scenarios) != 1:
        Where(display_path(Path(path))).at("variant").fail(
            f"{len(scenarios)} variants: this file is a family of scenarios")
    return scenarios[0]
