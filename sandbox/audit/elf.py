"""What one ELF file says about itself, read with pyelftools (Debian's
python3-pyelftools): class, machine, static or dynamic, interpreter, C
library, DT_NEEDED, the symbols it takes from others, its executable
bytes and its build-id (.note.gnu.build-id: the key CI results and
baselines know a binary by, wherever its path). A static binary's own symbol table, when it kept one, is not read:
glibc and musl define a function's 32-bit and 64-bit time entry points in
one object file, so both are linked in whichever the program called.

    read_elf(path) -> ElfFacts        (NotElf or BadElf for what is not one)

Reading only: no verdict here (sandbox/audit/verdict.py), no scanning of
the code (sandbox/audit/syscalls.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS, P_FLAGS
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

from sandbox.base.errors import SandboxError

ELF_MAGIC = b"\x7fELF"

# (ELF class, e_machine) -> the machine that boots it (sandbox/base/machines.py)
BOOTED = {
    (32, "EM_386"): "i386",
    (32, "EM_ARM"): "armhf",
    (64, "EM_X86_64"): "x86_64",
}
# How the C library shows itself: (where, substring) -> libc, first match wins
LIBC_MARKS = (
    ("section", ".note.go.buildid", "go"),  # Go's runtime makes its own calls, cgo or not
    ("section", ".go.buildinfo", "go"),
    ("interp", "klibc", "klibc"),  # /lib/klibc-<hash>.so: the kernel's calls, directly
    ("interp", "ld-musl", "musl"),
    ("needed", "libc.musl", "musl"),
    ("interp", "ld-linux", "glibc"),
    ("needed", "libc.so.6", "glibc"),
    ("soname", "libc.so.6", "glibc"),
    ("soname", "ld-linux", "glibc"),
    ("section", ".note.ABI-tag", "glibc"),  # glibc's crt1.o carries it; musl's does not
)


class NotElf(SandboxError):
    """Not an ELF file at all."""


class BadElf(SandboxError):
    """An ELF file we cannot read (truncated, corrupt) or do not boot."""


@dataclass(frozen=True)
class ElfFacts:
    bits: int  # 32 or 64
    machine: str  # e_machine as pyelftools names it: EM_386, EM_ARM, EM_X86_64
    booted_on: str  # our machine name (i386, armhf, x86_64)
    kind: str  # exec, pie, shared, other
    static: bool
    interpreter: str
    soname: str
    libc: str  # glibc, musl, klibc, go, none (a library needing none), unknown (static)
    needed: tuple[str, ...]
    imports: frozenset[str]  # undefined dynamic symbols
    code: tuple[bytes, ...]  # the executable sections (or segments), for the syscall scan
    build_id: str = ""  # NT_GNU_BUILD_ID in hex, "" when the linker wrote none


def has_elf_magic(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == ELF_MAGIC


def _kind(elf: ELFFile, interpreter: str) -> str:
    e_type = elf.header["e_type"]
    if e_type == "ET_EXEC":
        return "exec"
    if e_type == "ET_DYN":
        return "pie" if interpreter else "shared"
    return "other"


def _dynamic(elf: ELFFile) -> tuple[bool, tuple[str, ...], str]:
    """Whether it is linked dynamically (a dynamic section: a program, or a
    library even with no DT_NEEDED), its DT_NEEDED and its SONAME."""
    section = next((s for s in elf.iter_sections() if isinstance(s, DynamicSection)), None)
    if section is None:
        return any(seg["p_type"] == "PT_DYNAMIC" for seg in elf.iter_segments()), (), ""
    needed = tuple(t.needed for t in section.iter_tags("DT_NEEDED"))
    soname = next((t.soname for t in section.iter_tags("DT_SONAME")), "")
    return True, needed, soname


def _imports(elf: ELFFile) -> frozenset[str]:
    section = elf.get_section_by_name(".dynsym")
    if not isinstance(section, SymbolTableSection):
        return frozenset()
    return frozenset(s.name.split("@", 1)[0] for s in section.iter_symbols()
                     if s.name and s["st_shndx"] == "SHN_UNDEF")


def _code(elf: ELFFile) -> tuple[bytes, ...]:
    sections = [s.data() for s in elf.iter_sections()
                if s["sh_flags"] & SH_FLAGS.SHF_EXECINSTR and s["sh_type"] != "SHT_NOBITS"]
    if sections:
        return tuple(sections)
    return tuple(seg.data() for seg in elf.iter_segments()  # no section headers (sstrip)
                 if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & P_FLAGS.PF_X)


def _build_id(elf: ELFFile) -> str:
    """The GNU build-id note, from the sections, or the PT_NOTE segments of
    a file without section headers."""
    holders = [s for s in elf.iter_sections() if isinstance(s, NoteSection)] or \
        [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_NOTE"]
    for holder in holders:
        for note in holder.iter_notes():
            if note["n_type"] == "NT_GNU_BUILD_ID" and note["n_name"] == "GNU":
                return str(note["n_desc"])
    return ""


def _libc(marks: dict[str, tuple[str, ...]], dynamic: bool) -> str:
    for where, text, libc in LIBC_MARKS:
        if any(text in value for value in marks[where]):
            return libc
    return "none" if dynamic else "unknown"


def _facts(elf: ELFFile) -> ElfFacts:
    bits = elf.elfclass
    machine = str(elf.header["e_machine"])  # pyelftools' name, or the number of one it does not know
    booted_on = BOOTED.get((bits, machine))
    if booted_on is None or not elf.little_endian:
        order = "" if elf.little_endian else "big-endian "
        shown = machine.removeprefix("EM_") if machine.startswith("EM_") else f"e_machine {machine}"
        raise BadElf(f"a {bits}-bit {order}{shown} ELF: no machine here boots it "
                     f"(machines: {', '.join(sorted(set(BOOTED.values())))})")
    interpreter = next((seg.get_interp_name() for seg in elf.iter_segments() if seg["p_type"] == "PT_INTERP"), "")
    has_dynamic, needed, soname = _dynamic(elf)
    dynamic = has_dynamic or bool(interpreter)  # klibc's programs: an interpreter, no dynamic section
    sections = tuple(s.name for s in elf.iter_sections())
    marks = {"interp": (interpreter,), "needed": needed, "soname": (soname,), "section": sections}
    return ElfFacts(
        bits=bits, machine=machine, booted_on=booted_on, kind=_kind(elf, interpreter),
        static=not dynamic, interpreter=interpreter, soname=soname, libc=_libc(marks, dynamic),
        needed=needed, imports=_imports(elf), code=_code(elf), build_id=_build_id(elf))


def _raised_in_elftools(err: BaseException) -> bool:
    """Whether the innermost Python frame of err is pyelftools' own: a file
    it cannot read. It raises ELFError for what it checks, and UnicodeDecodeError,
    TypeError, AttributeError and more for corrupt tables it does not
    (seen here flipping bytes of a Debian binary); a bug of ours still raises."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("elftools")


def read_elf(path: Path) -> ElfFacts:
    """The facts of one file; NotElf or BadElf (one line each) otherwise."""
    if not has_elf_magic(path):
        raise NotElf("not an ELF file")
    try:
        with path.open("rb") as stream:
            return _facts(ELFFile(stream))
    except Exception as err:  # noqa: BLE001 - narrowed just below
        if isinstance(err, ELFError) or _raised_in_elftools(err):
            raise BadElf(f"unreadable ELF ({type(err).__name__}: {str(err)[:80] or 'truncated'})") from None
        raise
