"""A whole-system rehearsal, end to end:

    rehearse_system(SystemRequest) -> SystemResult

the image (ours, built or cached; or the user's, checked), the machine's
"system" kernel, one boot driven through its phases (sandbox/system/boot.py),
then the facts of each unit and its verdict, written to the evidence
folder with the table and the JSON. The image's checksum is taken before
and after: the system ran on an overlay, so it must not change.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.base import evidence as files
from sandbox.base.errors import SandboxError
from sandbox.base.evidence import Evidence
from sandbox.base.timefmt import format_time, parse_time
from sandbox.scenario.guards import CLOCK_MAX
from sandbox.base import paths
from sandbox.build import kconfig
from sandbox.base.machines import Machine
from sandbox.build.own_kernel import OwnKernel
from sandbox.guest.target import Target, prepare_target, target_with
from sandbox.system import boot as system_boot
from sandbox.system import inputs, lines, observe
from sandbox.system.catalogue import load_systems
from sandbox.system.facts import Observed, clock_findings, unit_facts
from sandbox.system.image import KERNEL_VARIANT, build_system_image
from sandbox.system.journal import read_journal
from sandbox.system.observe import journal_entries
from sandbox.system.machine import SystemBoot, machine_for_arch
from sandbox.system.phases import DEFAULT_END, DEFAULT_START, RTC_PAST_2038
from sandbox.system.verdict import UnitFacts, UnitVerdict, judge


@dataclass(frozen=True)
class SystemRequest:
    image: str  # a system of rootfs/systems.toml, or a path to the user's root filesystem
    evidence: Path
    start: str = DEFAULT_START
    end: str = DEFAULT_END
    own: OwnKernel | None = None  # the user's kernel (--kernel/--kernel-tree), else the machine's system kernel
    at: str = ""  # a later horizon stepped to after the night (--at), "" for none


@dataclass
class SystemResult:
    name: str
    outcome: str
    failure: str
    facts: list[UnitFacts] = field(default_factory=list)
    verdicts: list[UnitVerdict] = field(default_factory=list)
    wall: dict[str, float] = field(default_factory=dict)
    checksum_before: str = ""
    checksum_after: str = ""
    clock: list[str] = field(default_factory=list)  # the system's own lines about its clock

    def table(self) -> list[str]:
        head = [lines.summary(self.name, self.verdicts)]
        if self.outcome != "completed":
            head.append(f"{self.name}: {self.outcome}: {self.failure}")
        tail = [f"clock: {line}" for line in self.clock[:5]]
        if self.checksum_before != self.checksum_after:
            tail.append(f"{self.name}: the image CHANGED during the boot (sha256 {self.checksum_before[:12]} -> "
                        f"{self.checksum_after[:12]})")
        return head + lines.table(self.facts, self.verdicts) + tail


def _image(request: SystemRequest) -> tuple[str, Path, str, Path]:
    """(name, ext4 image, Debian architecture, what to checksum)."""
    systems = load_systems()
    spec = systems.by_name.get(request.image)
    if spec is not None:
        built = build_system_image(spec, systems)
        return spec.name, built.image, spec.arch, built.image
    source = Path(request.image)
    folder = Evidence(request.evidence)
    root = inputs.unpack(source, folder.path(files.UNPACKED))
    tree = inputs.check_root(source, root)
    return source.name, inputs.image_of(tree, folder.path(files.SYSTEM_IMAGE)), tree.arch, source


SYSTEM_FRAGMENTS = ("system.config", "memory-disks.config")
"""What a whole system needs of a kernel beyond our initramfs's own needs
(own_kernel.check_config): systemd's (cgroups, inotify, autofs, namespaces,
overlayfs...) and the memory disk the system's image rides on."""


def system_needs(folder: Path = paths.KERNEL_SERIES / "config") -> list[str]:
    """Every option the system fragments set to y."""
    return [option for name in SYSTEM_FRAGMENTS
            for option, value in kconfig.options((folder / name).read_text(), name).items() if value == "y"]


def system_target(machine: Machine, own: OwnKernel | None, name: str) -> Target:
    """The machine's system kernel, or the user's when it is for this machine
    and has what a system needs (one line naming what it lacks otherwise)."""
    if own is None:
        return prepare_target(machine, KERNEL_VARIANT)
    if own.machine != machine.name:
        raise SandboxError(f"{name}: an {machine.name} system; the kernel {own.image} is for {own.machine}")
    options = own.options()
    missing = [option for option in system_needs() if options.get(option, "n") != "y"]
    if missing:
        raise SandboxError(f"{own.config}: a kernel without {', '.join(missing)}: a whole system with systemd "
                           f"cannot boot on it (kernel-series/config/{' and '.join(SYSTEM_FRAGMENTS)} say why)")
    return target_with(machine, own.artifact(), None)


def _time_of(option: str, text: str) -> int:
    """A command line's time, as guest seconds; one line naming the option if it is none."""
    try:
        seconds = parse_time(text)
    except ValueError as err:
        raise SandboxError(f"{option}: {err}") from None
    if seconds > CLOCK_MAX:
        raise SandboxError(f"{option} {text}: past {format_time(CLOCK_MAX)}, the last second the kernel's "
                           "clock can be set to")
    return seconds


def rehearse_system(request: SystemRequest) -> SystemResult:
    start, end = _time_of("--start", request.start), _time_of("--end", request.end)
    if end <= start:
        raise SandboxError(f"--end {request.end} is not after --start {request.start}")
    if request.at and _time_of("--at", request.at) <= end:
        raise SandboxError(f"--at {request.at} is not after --end {request.end}: a step goes forward from the night")
    request.evidence.mkdir(parents=True, exist_ok=True)
    name, image, arch, watched = _image(request)
    machine = machine_for_arch(arch, name)
    before = inputs.checksum(watched)
    target = system_target(machine, request.own, name)
    boot = SystemBoot(target, image, "boot",
                      request.start.rstrip("Z"), request.evidence, warp=True,
                      extra_args=("sysctl.kernel.time32_syscalls=log", RTC_PAST_2038))
    seen = system_boot.drive(boot, end, request.evidence, parse_time(request.at) if request.at else None)
    system_boot.write_evidence(seen, request.evidence)
    folder = Evidence(request.evidence)
    journal_json, journal = read_journal(folder.path(files.JOURNAL))
    folder.write(files.JOURNAL_JSON, journal_json)
    manager = _manager_errors(seen.units_after)
    observed = Observed(seen.start_clock or start, seen.end_clock or end, seen.units_before, seen.units_after,
                        seen.timeline, journal, seen.looks.get("syslog.txt", ""),
                        # the console keeps every kernel line; dmesg's ring may have dropped the night's first
                        _read(folder.console) + "\n" + seen.kernel_log,
                        seen.looks.get("ticks.txt", ""), manager, seen.night_end, seen.step_at)
    facts = unit_facts(observed) if seen.units_before else []
    result = SystemResult(name, seen.outcome, seen.failure, facts, [judge(f) for f in facts], seen.wall,
                          before, inputs.checksum(watched),
                          clock_findings(_read(folder.console), journal))
    _write(result, request.evidence)
    marks = [(str(look.get("time", "")), observe.unit_states(str(look.get("states", "")))) for look in seen.timeline]
    folder.write(files.SYSTEM_PAGE, lines.timeline_html(name, result.verdicts, marks))
    if folder.path(files.UNPACKED).is_dir():
        shutil.rmtree(folder.path(files.UNPACKED), ignore_errors=True)
    return result


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""


def _write(result: SystemResult, evidence: Path) -> None:
    folder = Evidence(evidence)
    folder.write(files.UNITS_TEXT, "\n".join(result.table()) + "\n")
    folder.write(files.UNITS_JSON, json.dumps({
        "system": result.name, "outcome": result.outcome, "failure": result.failure,
        "wall_seconds": {k: round(v, 2) for k, v in result.wall.items()},
        "image_sha256": {"before": result.checksum_before, "after": result.checksum_after},
        "clock": result.clock,
        "units": lines.as_json(result.facts, result.verdicts)}, indent=1) + "\n")


def observed_from(evidence: Path) -> Observed:
    """What a rehearsal saw, read back from its evidence folder (to judge it
    again with today's rules, or in tests on captured runs)."""
    folder = Evidence(evidence)
    boot = json.loads(folder.path(files.SYSTEM_BOOT).read_text())
    journal = journal_entries(_read(folder.path(files.JOURNAL_JSON)))
    start, end, night_end, step_at = (parse_time(boot[k]) if boot.get(k) else 0
                                      for k in ("start", "end", "night_end", "step_at"))  # "": none
    return Observed(start, end, _read(folder.path(files.UNITS_BEFORE)),
                    _read(folder.path(files.UNITS_AFTER)), json.loads(_read(folder.path(files.TIMELINE)) or "[]"),
                    journal, _read(folder.path("syslog.txt")),
                    _read(folder.console) + "\n" + _read(folder.path(files.KERNEL_LOG)),
                    _read(folder.path("ticks.txt")), _manager_errors(_read(folder.path(files.UNITS_AFTER))),
                    night_end, step_at)


def _manager_errors(units_after: str) -> dict[str, tuple[str, ...]]:
    """A systemctl that failed after the night speaks for the manager (init.scope)."""
    if units_after and "[exit" in units_after:
        return {"init.scope": (f"manager: systemctl failed after the night: "
                               f"{' '.join(units_after.strip().splitlines()[-2:])}",)}
    return {}


def judge_again(evidence: Path, name: str) -> SystemResult:
    """The evidence folder's facts and verdicts by today's rules, written back."""
    observed = observed_from(evidence)
    facts = unit_facts(observed)
    folder = Evidence(evidence)
    result = SystemResult(name, json.loads(folder.path(files.SYSTEM_BOOT).read_text())["outcome"], "", facts,
                          [judge(f) for f in facts], clock=clock_findings(_read(folder.console),
                                                                           observed.journal))
    _write(result, evidence)
    return result
