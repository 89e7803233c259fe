"""One QEMU guest: the command line (pure) and the process (a context manager).

The kernel console goes to a file; the guest agent speaks on its own serial
port, wired to QEMU's stdin/stdout. Every wait takes a Deadline. QEMU never
outlives the `with` block: not after a timeout, an exception or Ctrl-C, and
not after the host process is killed (PR_SET_PDEATHSIG).
"""
from __future__ import annotations

import ctypes
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from sandbox.guest import protocol
from sandbox.guest.deadline import Deadline
from sandbox.build.disk_images import AttachedDisk
from sandbox.base.machines import Machine

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class BootRequest:
    machine: Machine
    kernel: Path
    initramfs: Path
    rtc: str  # QEMU -rtc base, e.g. 2038-01-19T03:13:50
    accel: str  # "kvm" or "tcg"
    evidence: Path  # folder for console.log, agent.log, qemu.log
    append: tuple[str, ...] = ()
    disks: tuple[AttachedDisk, ...] = ()  # virtio block devices, in order, serial = name
    memory_mib: int | None = None  # over the machine's own -m (a boot with userlands needs more)


def qemu_argv(req: BootRequest) -> list[str]:
    m = req.machine
    cmdline = " ".join((f"console={m.console_tty}", "panic=-1",
                        f"y2038.agent={m.agent_tty}", *req.append))
    return [
        m.qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        *m.qemu_machine, *(("-m", str(req.memory_mib)) if req.memory_mib else ()), "-accel", req.accel, "-nic", "none",
        "-kernel", str(req.kernel), "-initrd", str(req.initramfs), "-append", cmdline,
        "-rtc", f"base={req.rtc.rstrip('Z')}",
        "-serial", f"file:{req.evidence / 'console.log'}",
        "-chardev", "stdio,id=agent,signal=off", *m.agent_device,
        *disk_args(m, req.disks),
    ]


def _qemu_value(text: str) -> str:
    """QEMU option values escape a comma by doubling it."""
    return text.replace(",", ",,")


def disk_args(machine: Machine, disks: tuple[AttachedDisk, ...]) -> list[str]:
    """-drive/-device pairs, in order; snapshot=on keeps the guest's writes off
    the image; the guest finds each disk by its serial (the disk's name)."""
    args: list[str] = []
    for index, disk in enumerate(disks):
        drive = f"disk{index}"
        args += ["-drive", f"file={_qemu_value(str(disk.image))},if=none,format=raw,"
                           f"id={drive},snapshot=on",
                 "-device", f"{machine.block_device},drive={drive},serial={disk.name}"]
    return args


class GuestDied(Exception):
    """QEMU exited (a panic with -no-reboot, or a crash) while we waited."""


class GuestHung(Exception):
    """The deadline passed with no answer from the agent."""


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class Guest:
    request: BootRequest
    boot_seconds: float = 0.0
    _proc: subprocess.Popen[bytes] | None = None
    _lines: "queue.Queue[str | None]" = field(default_factory=queue.Queue)
    _parser: protocol.FrameParser = field(default_factory=protocol.FrameParser)
    _next_id: int = 1
    _started: float = 0.0

    # -- lifecycle -----------------------------------------------------
    def __enter__(self) -> "Guest":
        self.request.evidence.mkdir(parents=True, exist_ok=True)
        argv = qemu_argv(self.request)
        (self.request.evidence / "qemu-command.txt").write_text(" ".join(argv) + "\n")
        self._started = time.monotonic()
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=(self.request.evidence / "qemu.log").open("wb"),
            preexec_fn=_die_with_parent)
        threading.Thread(target=self._read_agent, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self, grace: float = 3.0) -> int | None:
        """Make sure QEMU is gone; returns its exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    # -- agent channel -------------------------------------------------
    def _read_agent(self) -> None:
        assert self._proc and self._proc.stdout
        with (self.request.evidence / "agent.log").open("w") as transcript:
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
            if line is None:
                self._lines.put(None)
                raise GuestDied(f"QEMU exited (code {self._proc and self._proc.wait()})")
            event = self._parser.feed(line)
            if event is not None and not isinstance(event, protocol.Noise):
                return event

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
