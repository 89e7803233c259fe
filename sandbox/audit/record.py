"""One record per audited file, and one per input that could not be
audited: what the terminal lines and the JSON are made from.

The runtime audit (sandbox/audit/runtime/audit.py: the file's machine booted, the
program run across the rollover) puts its verdict, its reason and every
run in `runtime`; None after --static.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from sandbox.base.errors import printable


@dataclass(frozen=True)
class Origin:
    """Where a file came from: the input as typed, and the file's path inside it."""

    input: str  # a path, a .deb, or userland:package, as given
    path: str  # the file inside the input ("" when the input is the file)
    package: str = ""  # name=version of the .deb it came from, when known

    @property
    def name(self) -> str:
        return self.path or self.input


@dataclass
class BinaryAudit:
    origin: Origin
    machine: str  # the machine that boots it: i386, armhf, x86_64
    bits: int
    kind: str  # exec, pie, shared, other
    linkage: str  # dynamic or static
    interpreter: str
    libc: str
    needed: tuple[str, ...]
    time32: tuple[str, ...]  # the 32-bit time names it binds
    time64: tuple[str, ...]  # the __*_time64 redirects it binds
    raw_calls: tuple[str, ...]  # libc functions that make a system call by number (syscall)
    syscall_sites: dict[str, int]  # system-call instructions in its own code
    verdict: str  # sandbox/audit/verdict.py VERDICTS
    reason: str
    soname: str = ""
    build_id: str = ""  # .note.gnu.build-id in hex: with the path, the key of CI results and baselines
    needed_time32: tuple[str, ...] = ()  # DT_NEEDED libraries audited in the same run as time32 or mixed
    runtime: dict[str, object] | None = field(default=None)  # the runtime audit's verdict and runs

    def to_json(self) -> dict[str, object]:
        record = asdict(self)
        record["origin"] = asdict(self.origin)
        return record


@dataclass(frozen=True)
class Rejected:
    """An input, or a file inside one, that got no verdict: one line why."""

    input: str
    message: str

    def line(self) -> str:
        return printable(f"{self.input}: {self.message}")

    def to_json(self) -> dict[str, str]:
        return {"input": self.input, "error": self.message}
