"""The runtime audit for a person: one line per file within 100 columns,
the runtime verdict first, the static one beside it, then the evidence
(pure: records in, text out).
"""
from __future__ import annotations

from sandbox.audit.lines import WIDTH, fit, short_name
from sandbox.audit.record import BinaryAudit
from sandbox.audit.runtime.audit import RuntimeAudit

STATIC_SHORT = {"unknown-needs-runtime": "unknown", "no-time-use": "no-time"}
HEADER = f"{'runtime':<13} {'static':<7} {'machine':<6} file  evidence"


TRUNCATIONS_SHORT = "the kernel's reports, kept per run (runs[].truncations), make a program broke"


def keep_end(text: str, width: int) -> str:
    """The text within width, its start cut: a path's end says the most."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def line(audit: BinaryAudit) -> str:
    runtime = audit.runtime or {}
    head = f"{str(runtime.get('verdict', '-')):<13} {STATIC_SHORT.get(audit.verdict, audit.verdict):<7} " \
           f"{audit.machine:<6} "
    name = short_name(audit.origin.name, WIDTH - len(head))
    return fit(f"{head}{name}  {runtime.get('reason', '')}", WIDTH)


def summary(result: RuntimeAudit) -> str:
    counts = ", ".join(f"{v} {n}" for v, n in result.counts().items()) or "none"
    rejected = len(result.static.rejected) + len(result.rejected)
    extra = f"; {rejected} without a verdict" if rejected else ""
    per = f", {result.seconds / result.programs:.1f} s per program run" if result.programs else ""
    kernels = "".join("\n" + keep_end(part, WIDTH) for k in result.kernels for part in f"kernel, {k}".splitlines())
    return (f"{len(result.audits)} ELF files, {result.programs} run: {counts}{extra}\n"
            f"runtime audit: {result.seconds:.1f} s{per} (boots included){kernels}\n"
            f"truncations: {TRUNCATIONS_SHORT}")


def held_or_broke(verdict: str) -> str:
    """A horizon table's cell: the run at that horizon against the first
    broke, or held (its verdict in the JSON: safe, calls-time32, ...)."""
    return "BROKE" if verdict == "broke" else "held" if verdict else "-"


def horizon_table(result: RuntimeAudit) -> list[str]:
    """Programs against the later moments (the horizons with --horizons):
    each cell the run's verdict against the first run, then the first
    moment it broke at."""
    ran = [a for a in result.audits if a.runtime and a.runtime.get("at_each")]
    if not ran:
        return []
    labels = list(dict.fromkeys(label for a in ran for label in a.runtime["at_each"]))  # type: ignore[index, union-attr]  # ran: runtime set
    cell = max(6, *(len(label) for label in labels)) + 1
    name_width = max(12, WIDTH - cell * len(labels) - 12)
    head = f"{'program':<{name_width}} " + "".join(f"{label:<{cell}}" for label in labels) + "first broke"
    out = [fit(head, WIDTH)]
    for audit in ran:
        runtime: dict = audit.runtime  # type: ignore[assignment]  # ran: runtime set
        name = short_name(audit.origin.name, name_width)
        cells = "".join(f"{held_or_broke(runtime['at_each'].get(label, '')):<{cell}}" for label in labels)
        out.append(fit(f"{name:<{name_width}} {cells}{runtime.get('first_broken') or 'never'}", WIDTH))
    return out


def report(result: RuntimeAudit, horizons: bool = False) -> str:
    table = ["", *horizon_table(result)] if horizons else []
    return "\n".join([HEADER, *(line(a) for a in result.audits), *table, "", summary(result)])
