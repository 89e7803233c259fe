"""A ground truth for the static audit: the project's own probes, whose
flavour says how they were built (rootfs/Makefile), audited and compared.

    agreement(audits) -> Agreement       each verdict against its flavour
    program_answers(userland, audits)    Debian's programs against what the
                                         real-programs runs saw them do

The guest's probes are static: their C library's 32-bit and 64-bit entry
points are linked in together, so the static audit can only
say "needs the runtime audit" for the 32-bit flavours. Built dynamically
(sandbox/build/dynamic_probes.py, build_probes), the same sources show what
the symbols decide.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandbox.audit.record import BinaryAudit
from sandbox.audit.verdict import MIXED, NO_TIME_USE, TIME32, TIME64
from sandbox.base.paths import cache_dir

KNOWN = {  # flavour -> the verdict it must get (docs/scenario-authoring.md, "Flavours")
    "time32-syscall": TIME32,
    "time32-libc": TIME32,
    "time64": TIME64,
    "native64": TIME64,
}
# What the real-programs runs saw (docs/real-programs.md, armhf and i386/x86_64
# machines, 2026-12-03): the program broke after the rollover, or was right.
# python3 is python3.11 in Debian 12 and python3.13 in Debian 13.
PROGRAM_FILES = {"python3": ("python3.11", "python3.13"), "shell": ("dash",)}
BROKE_AFTER = {
    "debian12-armhf": ("sqlite3", "python3", "perl", "gawk", "cpio", "openssl", "shell"),
    "debian13-armhf": (),
    "debian12-i386": ("sqlite3", "python3", "perl", "gawk", "cpio", "openssl", "shell"),
    "debian13-i386": ("sqlite3", "python3", "perl", "gawk", "openssl", "shell"),
    "debian12-amd64": (),
}
PROGRAMS = ("date", "sqlite3", "python3", "perl", "gawk", "touch", "stat", "ls", "find", "tar", "cpio", "openssl",
            "sleep", "shell")
# a static verdict read as the runs' answer: time32 breaks, time64 is right
AS_RUN = {TIME32: TIME32, MIXED: TIME32, TIME64: TIME64, NO_TIME_USE: TIME64}


@dataclass(frozen=True)
class Agreement:
    files: int
    decided: int  # got a verdict that answers (not "needs the runtime audit")
    agreeing: int
    disagreeing: tuple[str, ...]  # "<file>: <verdict>, expected <known>"
    undecided: str = "left to the runtime audit"  # what the files without an answer are

    def figure(self) -> str:
        share = f"{100 * self.agreeing / self.decided:.0f}%" if self.decided else "n/a"
        return (f"{self.agreeing}/{self.decided} decided verdicts agree ({share}); "
                f"{self.files - self.decided}/{self.files} {self.undecided}")


def agree(judged: list[tuple[BinaryAudit, str]]) -> Agreement:
    """Each (record, known answer: time32 or time64) compared."""
    decided = [(a, known) for a, known in judged if a.verdict in AS_RUN]
    wrong = tuple(f"{a.origin.name}: {a.verdict}, expected {known}"
                  for a, known in decided if AS_RUN[a.verdict] != known)
    return Agreement(len(judged), len(decided), len(decided) - len(wrong), wrong)


def flavour_of(audit: BinaryAudit) -> str:
    """The flavour folder a probe was built into: <flavour>/<probe>."""
    return Path(audit.origin.name).parent.name


def agreement(audits: list[BinaryAudit]) -> Agreement:
    """The probes' verdicts against their flavours."""
    return agree([(a, KNOWN[flavour_of(a)]) for a in audits if flavour_of(a) in KNOWN])


def program_answers(userland: str, audits: list[BinaryAudit]) -> list[tuple[BinaryAudit, str]]:
    """The userland's programs that the real-programs runs judged, each with
    what the run saw (time32: broke after the rollover; time64: right)."""
    by_file = {Path(a.origin.name).name: a for a in audits}
    found = []
    for program in PROGRAMS:
        audit = next((by_file[f] for f in PROGRAM_FILES.get(program, (program,)) if f in by_file), None)
        if audit is not None:
            found.append((audit, TIME32 if program in BROKE_AFTER[userland] else TIME64))
    return found


def program_files(root: Path) -> list[Path]:
    """The files of PROGRAMS in a userland's tree (bin, usr/bin), links followed."""
    names = [f for program in PROGRAMS for f in PROGRAM_FILES.get(program, (program,))]
    found = [next((root / d / name for d in ("bin", "usr/bin") if (root / d / name).is_file()), None)
             for name in names]
    return [path for path in found if path is not None]


def cached_userland(name: str) -> Path | None:
    """The newest unpacked tree of a userland in the cache, without asking apt."""
    trees = sorted(cache_dir().glob(f"userlands/{name}-*/root"), key=lambda p: p.stat().st_mtime)
    return trees[-1] if trees else None
