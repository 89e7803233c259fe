"""One QEMU guest: the command line (pure) and the process (a context manager).

The kernel console goes to a file; the guest agent speaks on its own serial
port, wired to QEMU's stdin/stdout. Every wait takes a Deadline. QEMU never
outlives the `with` block: not after a timeout, an exception or Ctrl-C, and
not after the host process is killed (PR_SET_PDEATHSIG).

The console file is watched while the guest runs (ConsoleWatcher): a kernel
panic or oops (sandbox/guest/klog.py FATAL) ends every wait at once with
GuestDied instead of waiting out the deadline. QEMU runs confined by its
seccomp filter (-sandbox, SANDBOX) and without capabilities
(sandbox/guest/privileges.py), and the evidence keeps its command line
as a list (qemu-command.json) and as shell words (qemu-command.txt).
"""
from __future__ import annotations

import ctypes
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from sandbox.base import evidence as files
from sandbox.base.evidence import Evidence
from sandbox.guest import klog, privileges, protocol
from sandbox.guest.deadline import Deadline
from sandbox.build.disk_images import AttachedDisk
from sandbox.base.machines import Machine, QemuMachine

_PR_SET_PDEATHSIG = 1
SANDBOX = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
"""QEMU's seccomp filter: no obsolete system calls, no setuid, no fork/exec,
no scheduler or CPU-affinity changes. qemu-system-x86_64, -i386 and -arm
(Debian's 7.2) boot the sandbox guests under it."""


WARP_ICOUNT = "shift=3,sleep=off"
"""Time warp (docs/time-warp.md): each guest instruction counts 2**3 ns of
guest time, and an idle guest's clock jumps to its next timer at once
(sleep=off). A fixed shift: shift=auto re-tunes itself on a timer every
100 ms of guest time, and those stops cost more than the whole idle day."""
SEED = "79323033382d73616e64626f782d7365656479323033382d73616e64626f7821"
"""Credited to the guest's random pool by /init (rootfs/probes/seedrng.c),
so that no kernel timer polls for randomness. Fixed: the guest holds no
secrets, and a fixed seed makes two runs of a scenario the same run."""


@dataclass(frozen=True)
class Link:
    """One end of the network between two guests: a UNIX datagram socket of
    this QEMU's (`local`) sending to the other QEMU's (`remote`). Ethernet
    frames go from one QEMU process to the other and nowhere else: no host
    interface, no route out."""

    local: Path
    remote: Path
    mac: str


@dataclass(frozen=True)
class BootRequest:
    """What to boot, complete: every artifact built (kernel, initramfs with
    its archives, memory disks, disk images), the clock, the evidence folder.
    The one type that describes a boot; a prepare function makes it (a
    scenario's: sandbox/run/prepare.boot_of; a target's plain boot:
    sandbox/guest/target.Target.boot) and nothing builds after it."""

    machine: Machine
    kernel: Path
    initramfs: Path
    rtc: str  # QEMU -rtc base, e.g. 2038-01-19T03:13:50
    accel: str  # "kvm" or "tcg"
    evidence: Path  # folder for console.log, agent.log, qemu.log
    append: tuple[str, ...] = ()
    disks: tuple[AttachedDisk, ...] = ()  # virtio block devices, in order, serial = name
    memory_mib: int | None = None  # over the machine's own -m (a boot with userlands needs more)
    warp: bool = False  # time warp: guest time jumps ahead while the guest is idle
    link: Link | None = None  # a virtio NIC wired to another guest (NTP); else no network
    memory_disks: tuple[Path, ...] = ()  # images QEMU copies into guest RAM, in order (memory_disk_args)
    memory_disk_names: tuple[str, ...] = ()  # the userland each of the first memory disks holds
    userlands: tuple[dict[str, object], ...] = ()  # name, suite, arch, package versions: for run.json

    def disk_regions(self) -> dict[str, MemoryRegion]:
        """Where each named memory disk (a userland's) lies in guest RAM."""
        return dict(zip(self.memory_disk_names, memory_regions(self.machine.qemu, self.memory_mib, self.memory_disks)))


def warp_args(req: BootRequest) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """QEMU arguments, kernel arguments and the -rtc suffix of time warp: the
    RTC on the guest's virtual clock, so it warps with it."""
    if not req.warp:
        return (), (), ""
    return ("-icount", WARP_ICOUNT), ("y2038.warp=1", *req.machine.qemu.warp_append), ",clock=vm"


MEMORY_DISKS_AT_MIB = 128
"""Where the first memory disk starts in an x86 guest's RAM: above the kernel
(a PVH vmlinux loads at 16 MiB) and below the top of RAM, where QEMU puts
the initramfs."""
MEMORY_DISK_ALIGN_MIB = 2  # each disk's size rounded up to it


@dataclass(frozen=True)
class MemoryRegion:
    """Where a memory disk lies: a guest physical address and a size."""

    start_mib: int
    size_mib: int


def memory_regions(machine: QemuMachine, memory_mib: int | None, images: tuple[Path, ...]) -> tuple[MemoryRegion, ...]:
    """One after the other, from where the machine keeps its memory disks:
    inside the kernel's memory at MEMORY_DISKS_AT_MIB (x86: `memmap=` keeps
    the kernel off them), or right above it (`disks_above_memory`: `mem=`
    gives the kernel only its own). memory_mib: the boot's, before the disks."""
    above = memory_mib or machine.memory_mib
    start = machine.ram_base_mib + (above if machine.disks_above_memory else MEMORY_DISKS_AT_MIB)
    regions = []
    for image in images:
        size = -(-image.stat().st_size // (MEMORY_DISK_ALIGN_MIB * 2**20)) * MEMORY_DISK_ALIGN_MIB
        regions.append(MemoryRegion(start, size))
        start += size
    return tuple(regions)


def memory_disk_args(req: BootRequest) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """QEMU arguments, kernel arguments and the MiB of RAM they add, for the
    boot's memory disks. QEMU's generic loader copies each image into guest
    RAM before the kernel starts, where the kernel is told to keep off
    (memory_regions); the guest then maps it as a block device with the
    phram driver (sandbox/run/plan.py userland_commands). Reading such a
    disk is a copy by the guest's CPU, never an I/O wait, so it keeps the
    guest busy under time warp as an initramfs does, without unpacking every
    file at boot (docs/time-warp.md)."""
    machine = req.machine.qemu
    regions = memory_regions(machine, req.memory_mib, req.memory_disks)
    if not regions:
        return (), (), 0
    qemu: list[str] = []
    for image, region in zip(req.memory_disks, regions):
        qemu += ["-device", f"loader,file={_qemu_value(str(image))},addr={region.start_mib * 2**20:#x},force-raw=on"]
    added = sum(r.size_mib for r in regions)
    if machine.disks_above_memory:
        kernel = [f"mem={memory_mib(req, 0)}M"]
    else:
        kernel = [f"memmap={r.size_mib}M${r.start_mib}M" for r in regions]
    if machine.vmalloc_mib:  # a 32-bit kernel's phram maps each disk there (ioremap)
        kernel.append(f"vmalloc={machine.vmalloc_mib + added}M")
    return tuple(qemu), tuple(kernel), added


def memory_mib(req: BootRequest, added_mib: int) -> int:
    """-m: the request's (else the machine's own), plus the memory disks'."""
    return (req.memory_mib or req.machine.qemu.memory_mib) + added_mib


def qemu_argv(req: BootRequest) -> list[str]:
    m = req.machine.qemu
    warp_qemu, warp_kernel, warp_rtc = warp_args(req)
    disks_qemu, disks_kernel, disks_mib = memory_disk_args(req)
    memory = memory_mib(req, disks_mib)
    cmdline = " ".join((f"console={m.console_tty}", "panic=-1", f"y2038.agent={m.agent_tty}",
                        f"y2038.seed={SEED}", *m.boot_append, *warp_kernel, *disks_kernel, *req.append))
    return [
        m.binary, "-sandbox", SANDBOX, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        *m.machine_args, "-m", str(memory), "-accel", req.accel,
        *disks_qemu,
        *link_args(m, req.link),
        *warp_qemu,
        "-kernel", str(req.kernel), "-initrd", str(req.initramfs), "-append", cmdline,
        "-rtc", f"base={req.rtc.rstrip('Z')}{warp_rtc}",
        "-serial", f"file:{Evidence(req.evidence).console}",
        "-chardev", "stdio,id=agent,signal=off", *m.agent_device,
        *disk_args(m, req.disks),
    ]


def _qemu_value(text: str) -> str:
    """QEMU option values escape a comma by doubling it."""
    return text.replace(",", ",,")


def link_args(machine: QemuMachine, link: Link | None) -> list[str]:
    """No NIC at all, or one virtio NIC on a datagram socket pair (QEMU 7.2's
    -netdev dgram with UNIX addresses)."""
    if link is None:
        return ["-nic", "none"]
    netdev = ",".join(("dgram", "id=link", "local.type=unix", f"local.path={_qemu_value(str(link.local))}",
                       "remote.type=unix", f"remote.path={_qemu_value(str(link.remote))}"))
    return ["-netdev", netdev, "-device", f"{machine.net_device},netdev=link,mac={link.mac}"]


def disk_args(machine: QemuMachine, disks: tuple[AttachedDisk, ...]) -> list[str]:
    """-drive/-device pairs, in order; snapshot=on keeps the guest's writes off
    the image; the guest finds each disk by its serial (the disk's name)."""
    args: list[str] = []
    for index, disk in enumerate(disks):
        drive = f"disk{index}"
        args += ["-drive", f"file={_qemu_value(str(disk.image))},if=none,format=raw,"
                           f"id={drive},snapshot=on",
                 "-device", f"{machine.block_device},drive={drive},serial={disk.name}"]
    return args


_FATAL = object()
"""Put in the agent's line queue by the console watcher: a panic or oops."""


class GuestDied(Exception):
    """QEMU exited (a panic with -no-reboot, or a crash) while we waited."""


class GuestHung(Exception):
    """The deadline passed with no answer from the agent."""


BOOT_MARKS = (("kernel", ""), ("init", "Run /init as init process"), ("agent", "Y2038-INIT: up"))
"""(phase, console text that ends the phase before it): the first console
line ends QEMU's start-up, the kernel's "Run /init" ends its boot, /init's
line ends init; the agent's READY (on its own channel) ends the last."""
BOOT_PHASES = ("qemu", "kernel", "init", "agent")


def boot_phases(started: float, marks: dict[str, float], ready: float) -> dict[str, float]:
    """Wall seconds of each boot phase that was seen through, from the
    monotonic times of QEMU's start, the console marks and the agent's READY."""
    ends = [marks.get(phase) for phase, _ in BOOT_MARKS] + [ready or None]
    phases, last = {}, started
    for name, end in zip(BOOT_PHASES, ends):
        if end is None:
            break
        phases[name], last = max(end - last, 0.0), end
    return phases


class ConsoleWatcher:
    """Tails the console file in a thread; calls on_fatal once, with the first
    line of kernel output that reports a panic or an oops, and notes when it
    first saw each of BOOT_MARKS (`marks`, monotonic seconds)."""

    def __init__(self, path: Path, on_fatal: Callable[[klog.Finding], None], poll: float = 0.01) -> None:
        self.marks: dict[str, float] = {}
        self.path = path
        self.on_fatal = on_fatal
        self.poll = poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="console-watcher", daemon=True)

    def start(self) -> "ConsoleWatcher":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _mark(self, line: str) -> None:
        for phase, text in BOOT_MARKS:
            if phase not in self.marks and text in line:
                self.marks[phase] = time.monotonic()

    def _watch(self) -> None:
        number, pending, stream = 0, b"", None
        try:
            while not self._stop.is_set():
                if stream is None:
                    try:
                        stream = self.path.open("rb")
                    except OSError:  # QEMU has not made it yet
                        self._stop.wait(self.poll)
                        continue
                chunk = stream.read(65536)
                if not chunk:
                    self._stop.wait(self.poll)
                    continue
                *lines, pending = (pending + chunk).split(b"\n")
                for raw in lines:
                    number += 1
                    line = raw.decode("utf-8", "replace")
                    self._mark(line)
                    kind = klog.classify_line(line)
                    if kind in klog.FATAL:
                        self.on_fatal(klog.Finding(kind, number, line.rstrip()))
                        return
        finally:
            if stream is not None:
                stream.close()


def _signal_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Signal the process group QEMU leads (process_group=0), while its
    leader is not yet reaped (so the group id cannot have been reused): a
    wrapper in front of QEMU that forks it (`time qemu-system-...`) would
    otherwise leave the real QEMU running."""
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass


def _die_with_parent() -> None:
    """Between fork and exec: QEMU dies with us, and runs without capabilities."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    privileges.drop_all()


@dataclass
class Guest:
    request: BootRequest
    boot_seconds: float = 0.0
    _proc: subprocess.Popen[bytes] | None = None
    _lines: "queue.Queue[str | object | None]" = field(default_factory=queue.Queue)
    _parser: protocol.FrameParser = field(default_factory=protocol.FrameParser)
    _next_id: int = 1
    _started: float = 0.0
    fatal: klog.Finding | None = None  # a panic or oops the console watcher saw
    _watcher: ConsoleWatcher | None = None

    # -- lifecycle -----------------------------------------------------
    def __enter__(self) -> "Guest":
        evidence = Evidence(self.request.evidence)
        argv = qemu_argv(self.request)
        evidence.write(files.QEMU_COMMAND, shlex.join(argv) + "\n")  # pastes back into a shell
        evidence.write(files.QEMU_ARGV, json.dumps(argv, indent=1) + "\n")
        evidence.remove(files.CONSOLE)  # the watcher reads only this boot's
        self._started = time.monotonic()
        try:
            with evidence.stream(files.QEMU_LOG, "wb") as qemu_log:
                # Its own process group: a Ctrl-C or a signal to our group
                # reaches us, not QEMU, which would otherwise quit at once and
                # make an interrupted run look like a guest that died. We stop
                # it ourselves (stop()); PDEATHSIG if we are killed outright.
                self._proc = subprocess.Popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=qemu_log,
                    preexec_fn=_die_with_parent, process_group=0)
        except OSError as err:
            raise GuestDied(f"QEMU did not start: {err}") from None
        threading.Thread(target=self._read_agent, daemon=True).start()
        self._watcher = ConsoleWatcher(evidence.console, self._on_fatal).start()
        return self

    def _on_fatal(self, finding: klog.Finding) -> None:
        self.fatal = finding
        self._lines.put(_FATAL)

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self, grace: float = 3.0) -> int | None:
        """Make sure QEMU is gone; returns its exit code."""
        if self._watcher is not None:
            self._watcher.stop()
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:  # stopped as a group: a wrapper's QEMU goes too
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        return proc.returncode

    @property
    def boot_phases(self) -> dict[str, float]:
        """BOOT_PHASES in wall seconds, as far as the boot got."""
        marks = dict(self._watcher.marks) if self._watcher else {}
        return boot_phases(self._started, marks, self._started + self.boot_seconds if self.boot_seconds else 0.0)

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    # -- agent channel -------------------------------------------------
    def _read_agent(self) -> None:
        assert self._proc and self._proc.stdout
        with Evidence(self.request.evidence).stream(files.AGENT_LOG) as transcript:
            for raw in self._proc.stdout:
                line = raw.decode("utf-8", "replace")
                transcript.write(line)
                transcript.flush()
                self._lines.put(line)
        self._lines.put(None)  # EOF: QEMU is gone

    def _next_event(self, deadline: Deadline) -> protocol.Event:
        while True:
            try:
                line = self._lines.get(timeout=max(deadline.remaining(), 0.001))
            except queue.Empty:
                raise GuestHung(f"no answer from the guest agent within {deadline.seconds:.0f}s") from None
            if line is _FATAL:
                self._lines.put(_FATAL)  # every later wait fails at once too
                raise GuestDied(f"the kernel console shows: {self.fatal}")
            if line is None:
                self._lines.put(None)
                raise GuestDied(f"QEMU exited (code {self._proc and self._proc.wait()}){self._exit_reason()}")
            assert isinstance(line, str)  # _FATAL and None are handled above
            event = self._parser.feed(line)
            if event is not None and not isinstance(event, protocol.Noise):
                return event

    def _exit_reason(self) -> str:
        """QEMU's last words (qemu.log), when it said any."""
        try:
            said = Evidence(self.request.evidence).path(files.QEMU_LOG).read_text("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return f": {said[-1]}" if said else ""

    def wait_ready(self, deadline: Deadline) -> str:
        """Wait for the agent's READY line; returns the guest kernel release."""
        while True:
            event = self._next_event(deadline)
            if isinstance(event, protocol.Ready):
                self.boot_seconds = time.monotonic() - self._started
                return event.release

    def run(self, command: str, deadline: Deadline) -> protocol.Reply:
        """Run a shell command in the guest; returns its output and exit code."""
        assert self._proc and self._proc.stdin
        command_id, self._next_id = self._next_id, self._next_id + 1
        try:
            self._proc.stdin.write(protocol.encode_run(command_id, command))
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise GuestDied("QEMU exited before the command could be sent") from None
        while True:
            event = self._next_event(deadline)
            if isinstance(event, protocol.Reply) and event.id == command_id:
                return event
