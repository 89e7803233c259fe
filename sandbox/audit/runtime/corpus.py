"""A ground truth for the runtime audit: programs whose fate across the
rollover is known, run through it, each verdict compared.

    probe_items(folder)                the probes built into folder/<flavour>/<probe>:
                                       time32-syscall and time32-libc break
                                       (the kernel truncates, glibc refuses),
                                       time64 and native64 are right
    program_items(userland, root)      Debian's programs of the real-programs
                                       runs, in their userland's tree, known
                                       to break or not (sandbox/audit/corpus.py)
    runtime_agreement(items)           every runtime verdict against its answer

A runtime verdict answers "broke" (broke) or "right" (safe, calls-time32);
not-exercised answers nothing and is counted apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandbox.audit.commands import load_commands
from sandbox.audit.corpus import (BROKE_AFTER, PROGRAM_FILES, PROGRAMS, Agreement, cached_userland, flavour_of,
                                  program_files)
from sandbox.audit.inputs import Candidate, walk
from sandbox.audit.record import Origin
from sandbox.audit.runtime.audit import Item, RuntimeOptions, item_of, run_items
from sandbox.audit.runtime.verdict import BROKE, CALLS_TIME32, SAFE
from sandbox.audit.static import audit_pairs
from sandbox.audit.symbols import load_symbols
from sandbox.scenario.userlands import load_userlands

BROKEN, RIGHT = "broke", "right"
FLAVOUR_FATE = {"time32-syscall": BROKEN, "time32-libc": BROKEN, "time64": RIGHT, "native64": RIGHT}
PROBE_COMMANDS = load_commands().with_overrides(["clock="])  # every call, in table order
AS_FATE = {BROKE: BROKEN, CALLS_TIME32: RIGHT, SAFE: RIGHT}  # not-exercised: no answer


@dataclass(frozen=True)
class Known:
    item: Item
    fate: str  # BROKEN or RIGHT


def probe_items(folder: Path, first: int = 0) -> list[Known]:
    """The probes under folder (<flavour>/<probe>), each run from the overlay
    in its machine's Debian 12 userland."""
    found = walk(folder, str(folder))
    pairs, _ = audit_pairs(found.candidates, load_symbols())
    return [Known(item_of(audit, candidate, first + n), FLAVOUR_FATE[flavour_of(audit)])
            for n, (audit, candidate) in enumerate(pairs) if flavour_of(audit) in FLAVOUR_FATE]


def program_items(userland: str, root: Path) -> list[Known]:
    """The real-programs' files in a userland's tree, run where they are."""
    candidates = [Candidate(Origin(f"{userland}:", path.relative_to(root).as_posix()), path)
                  for path in program_files(root)]
    pairs, _ = audit_pairs(candidates, load_symbols())
    fate_of = {name: BROKEN if program in BROKE_AFTER[userland] else RIGHT
               for program in PROGRAMS for name in PROGRAM_FILES.get(program, (program,))}
    return [Known(Item(audit, userland, "/" + audit.origin.path), fate_of[Path(audit.origin.path).name])
            for audit, _ in pairs]


def runtime_agreement(known: list[Known]) -> Agreement:
    decided = [(k, AS_FATE[str(k.item.audit.runtime["verdict"])]) for k in known
               if k.item.audit.runtime and k.item.audit.runtime.get("verdict") in AS_FATE]
    wrong = tuple(f"{k.item.audit.origin.name}: {k.item.audit.runtime['verdict']} "  # type: ignore[index]  # decided: runtime set
                  f"({k.item.audit.runtime['reason']}), expected {k.fate}"
                  for k, fate in decided if fate != k.fate)
    return Agreement(len(known), len(decided), len(decided) - len(wrong), wrong, "not exercised")


ELF_ARCH = {"armhf": "armhf", "i386": "i386", "x86_64": "amd64"}
"""The Debian architecture of the programs a machine boots (x86_64 also runs
i386 programs, but the runtime audit boots those on the i386 machine)."""


@dataclass(frozen=True)
class CorpusRun:
    machine: str
    agreement: Agreement
    seconds: float  # booting and running
    programs: int  # files run


def corpus_items(machine: str, probe_folders: list[Path]) -> list[Known]:
    """The probes built for this machine (others' flavours left out) and the
    programs of every userland of its architecture that the cache holds."""
    known: list[Known] = []
    for folder in probe_folders:
        known += [k for k in probe_items(folder, first=len(known)) if k.item.audit.machine == machine]
    for userland in load_userlands().by_name.values():
        root = cached_userland(userland.name) if userland.arch == ELF_ARCH[machine] else None
        if root is not None and userland.name in BROKE_AFTER:
            known += program_items(userland.name, root)
    return known


def run_corpus(machine: str, probe_folders: list[Path], evidence: Path, options: RuntimeOptions) -> CorpusRun:
    """One boot of the machine with its whole corpus, judged."""
    known = corpus_items(machine, probe_folders)
    done = run_items(machine, [k.item for k in known], options, evidence, PROBE_COMMANDS)
    return CorpusRun(machine, runtime_agreement(known), done.seconds, sum(k.item.run for k in known))
