"""The static audit for a person: one line per file within 100 columns, and
a summary (pure: records in, text out). The JSON is the records themselves.
"""
from __future__ import annotations

from sandbox.audit.record import BinaryAudit
from sandbox.audit.static import StaticAudit
from sandbox.audit.verdict import NEEDS_RUNTIME
from sandbox.base.errors import printable

WIDTH = 100
HEADER = f"{'static verdict':<21} {'machine':<6} {'link':<6} {'libc':<5} file  evidence"
LINK = {"dynamic": "dyn", "static": "static"}
LIBC = {"unknown": "?"}  # a static binary whose C library shows no mark


def _names(label: str, names: tuple[str, ...], shown: int = 3) -> str:
    more = f" +{len(names) - shown}" if len(names) > shown else ""
    return f"{label}: {' '.join(names[:shown])}{more}"


def evidence(audit: BinaryAudit) -> str:
    """What decided the verdict first: the system calls when they left it
    to the runtime audit, else the time names."""
    names = []
    if audit.time32:
        names.append(_names("time32", audit.time32))
    if audit.time64:
        names.append(_names("time64", audit.time64, 2 if audit.time32 else 3))
    calls = [" ".join(f"{name}()" for name in audit.raw_calls)] if audit.raw_calls else []
    if audit.syscall_sites:
        calls.append("syscalls: " + " ".join(f"{k} x{n}" for k, n in audit.syscall_sites.items()))
    parts = calls + names if audit.verdict == NEEDS_RUNTIME else names + calls
    if audit.needed_time32:
        parts.append(_names("needs time32 lib", audit.needed_time32, 2))
    return "; ".join(parts) or audit.reason


def fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def short_name(name: str, room: int) -> str:
    """The file's name, printable, in at most half the room left: a long
    path keeps its end, the file name."""
    name = printable(name)
    return name if len(name) <= room // 2 else "…" + name[-(room // 2 - 1):]


def line(audit: BinaryAudit) -> str:
    head = f"{audit.verdict:<21} {audit.machine:<6} {LINK[audit.linkage]:<6} {LIBC.get(audit.libc, audit.libc):<5} "
    return fit(f"{head}{short_name(audit.origin.name, WIDTH - len(head))}  {evidence(audit)}", WIDTH)


def summary(result: StaticAudit) -> str:
    counts = ", ".join(f"{v} {n}" for v, n in result.counts().items()) or "none"
    files = len(result.audits)
    per100 = f", {100 * result.seconds / files:.2f} s per 100 files" if files else ""
    extra = f"; {len(result.rejected)} without a verdict" if result.rejected else ""
    skipped = f"; {result.not_elf} files not ELF, skipped" if result.not_elf else ""
    return (f"{files} ELF files: {counts}{extra}{skipped}\n"
            f"static audit: {result.seconds:.2f} s{per100}")


def report(result: StaticAudit) -> str:
    return "\n".join([HEADER, *(line(a) for a in result.audits), "", summary(result)])
