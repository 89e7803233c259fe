"""The static audit: inputs in, one record per ELF file (or one Rejected
line per input or file that got none) out. Nothing boots.

    audit_static(["debian12-armhf:sqlite3", "./bin"]) -> StaticAudit
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.audit import syscalls
from sandbox.audit.elf import ElfFacts, read_elf
from sandbox.audit.inputs import Candidate, expand
from sandbox.audit.record import BinaryAudit, Rejected
from sandbox.audit.symbols import TimeSymbols, load_symbols
from sandbox.audit.verdict import MIXED, TIME32, VERDICTS, Evidence, static_verdict
from sandbox.base.errors import SandboxError


@dataclass
class StaticAudit:
    audits: list[BinaryAudit] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    not_elf: int = 0  # files in trees that are not ELF, skipped
    seconds: float = 0.0  # reading and judging the files (expanding the inputs apart)

    def counts(self) -> dict[str, int]:
        return {v: n for v in VERDICTS if (n := sum(a.verdict == v for a in self.audits))}

    def to_json(self) -> dict[str, object]:
        return {"audits": [a.to_json() for a in self.audits], "rejected": [r.to_json() for r in self.rejected],
                "not_elf": self.not_elf, "seconds": round(self.seconds, 3), "counts": self.counts()}


def audit_facts(facts: ElfFacts, candidate: Candidate, symbols: TimeSymbols) -> BinaryAudit:
    """The record of one file from its facts (and, for x86 files with a
    system-call pattern, objdump's reading of it)."""
    # on a 64-bit machine the plain names are the 64-bit ones: nothing to find
    time32 = symbols.time32_used(facts.imports) if facts.bits == 32 else ()
    time64 = symbols.time64_used(facts.imports) if facts.bits == 32 else ()
    raw = symbols.raw_used(facts.imports)
    sites = syscalls.confirm(facts.booted_on, candidate.path, syscalls.scan(facts.booted_on, facts.code))
    reaches_time32 = syscalls.time32_capable(facts.booted_on, sites) or bool(raw and facts.bits == 32)
    evidence = Evidence(facts.bits, facts.static, time32, time64, sites, reaches_time32, facts.libc)
    verdict, reason = static_verdict(evidence)
    return BinaryAudit(
        origin=candidate.origin, machine=facts.booted_on, bits=facts.bits, kind=facts.kind,
        linkage="static" if facts.static else "dynamic", interpreter=facts.interpreter, libc=facts.libc,
        needed=facts.needed, time32=time32, time64=time64, raw_calls=raw, syscall_sites=sites, verdict=verdict,
        reason=reason, soname=facts.soname, build_id=facts.build_id)


def join_needed(audits: list[BinaryAudit]) -> None:
    """Name, in each record, the DT_NEEDED libraries audited in the same run
    (same machine, matched by SONAME or file name) that bind 32-bit time."""
    old: dict[tuple[str, str], BinaryAudit] = {}
    for a in audits:
        if a.verdict in (TIME32, MIXED):
            for key in {a.soname, Path(a.origin.name).name} - {""}:
                old[(a.machine, key)] = a
    for a in audits:
        a.needed_time32 = tuple(n for n in a.needed if (a.machine, n) in old)


def audit_pairs(candidates: list[Candidate], symbols: TimeSymbols) -> tuple[list[tuple[BinaryAudit, Candidate]],
                                                                         list[Rejected]]:
    """Each file's record beside the candidate it came from (the runtime
    audit needs the file on the host), and a Rejected line per file that
    got none."""
    pairs, rejected = [], []
    for candidate in candidates:
        try:
            pairs.append((audit_facts(read_elf(candidate.path), candidate, symbols), candidate))
        except SandboxError as err:
            rejected.append(Rejected(candidate.origin.input if not candidate.origin.path
                                     else f"{candidate.origin.input}: {candidate.origin.path}", str(err)))
    join_needed([audit for audit, _ in pairs])
    return pairs, rejected


def audit_candidates(candidates: list[Candidate], symbols: TimeSymbols) -> tuple[list[BinaryAudit], list[Rejected]]:
    pairs, rejected = audit_pairs(candidates, symbols)
    return [audit for audit, _ in pairs], rejected


def audit_static(inputs: list[str]) -> StaticAudit:
    symbols = load_symbols()
    with tempfile.TemporaryDirectory(prefix="y2038-rehearse-") as tmp:
        expanded = expand(inputs, Path(tmp))
        start = time.monotonic()
        audits, rejected = audit_candidates(expanded.candidates, symbols)
        seconds = time.monotonic() - start
    return StaticAudit(audits, expanded.rejected + rejected, expanded.not_elf, seconds)
