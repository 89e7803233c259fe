"""A ground truth for the static audit: the project's own probes, whose
flavour says how they were built (rootfs/Makefile), audited and compared.

    build_probes(machine, out, linkage)  the probes of rootfs/ in the
                                         machine's flavours, "static" as the
                                         guest gets them, or "dynamic"
    agreement(audits) -> Agreement       each verdict against its flavour

The guest's probes are static and stripped: their C library's 32-bit and
64-bit entry points are linked in together, so the static audit can only
say "needs the runtime audit" for the 32-bit flavours. Built dynamically,
the same sources show what the symbols decide.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sandbox.audit.record import BinaryAudit
from sandbox.audit.verdict import NEEDS_RUNTIME, TIME32, TIME64
from sandbox.base.errors import SandboxError
from sandbox.base.machines import Machine
from sandbox.base.paths import ROOTFS

KNOWN = {  # flavour -> the verdict it must get (docs/scenario-authoring.md, "Flavours")
    "time32-syscall": TIME32,
    "time32-libc": TIME32,
    "time64": TIME64,
    "native64": TIME64,
}
# rootfs/Makefile's BASE_CFLAGS with and without -static -s
LINKAGE_CFLAGS = {
    "static": "-O2 -Wall -Wextra -Werror -std=gnu11 -static -s -Iprobes",
    "dynamic": "-O2 -Wall -Wextra -Werror -std=gnu11 -Iprobes",
}


def build_probes(machine: Machine, out: Path, linkage: str, probes: tuple[str, ...]) -> Path:
    """make -C rootfs OUT=out ...: out/<flavour>/<probe> for each flavour of the machine."""
    args = ["make", "--no-print-directory", "-C", str(ROOTFS), f"-j{min(os.cpu_count() or 1, 2)}",
            f"OUT={out}", f"CC={machine.cc}", f"CFLAGS32={machine.cflags32}",
            f"FLAVOURS={' '.join(machine.flavours)}", f"TOOLS_FLAVOUR={machine.tools_flavour}",
            f"PROBES={' '.join(probes)}", "TOOLS=", f"BASE_CFLAGS={LINKAGE_CFLAGS[linkage]}"]
    result = subprocess.run(args, capture_output=True, text=True, check=False, env={**os.environ, "LC_ALL": "C"})
    if result.returncode != 0:
        raise SandboxError(f"building the {machine.name} probes ({linkage}) failed: "
                           f"{(result.stdout + result.stderr).strip().splitlines()[-1:]}")
    return out


@dataclass(frozen=True)
class Agreement:
    files: int
    decided: int  # got time32 or time64 (not "needs the runtime audit")
    agreeing: int
    disagreeing: tuple[str, ...]  # "<file>: <verdict>, expected <known>"

    def figure(self) -> str:
        share = f"{100 * self.agreeing / self.decided:.0f}%" if self.decided else "n/a"
        return (f"{self.agreeing}/{self.decided} decided verdicts agree ({share}); "
                f"{self.files - self.decided}/{self.files} left to the runtime audit")


def flavour_of(audit: BinaryAudit) -> str:
    """The flavour folder a probe was built into: <flavour>/<probe>."""
    return Path(audit.origin.name).parent.name


def agreement(audits: list[BinaryAudit]) -> Agreement:
    judged = [(a, KNOWN[flavour_of(a)]) for a in audits if flavour_of(a) in KNOWN]
    decided = [(a, known) for a, known in judged if a.verdict != NEEDS_RUNTIME]
    wrong = tuple(f"{a.origin.name}: {a.verdict}, expected {known}" for a, known in decided if a.verdict != known)
    return Agreement(len(judged), len(decided), len(decided) - len(wrong), wrong)
