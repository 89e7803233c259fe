"""The static audit of `just rehearse --static` (sandbox/audit/), on small
programs built here with the host's compilers: what each binds, each
verdict, the one-line errors, and the inputs (files, trees, .debs,
userland packages). Nothing boots.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox.app.cli import main
from sandbox.audit import lines
from sandbox.audit.elf import BOOTED, read_elf
from sandbox.audit.inputs import expand
from sandbox.audit.record import Origin
from sandbox.audit.static import audit_static
from sandbox.audit.symbols import SYMBOLS_FILE, load_symbols
from sandbox.audit.syscalls import scan
from sandbox.base.errors import SandboxError
from sandbox.base.machines import X86_64
from sandbox.build.deps import cflags32
from sandbox.scenario.userlands import load_userlands

PROGRAM = r"""
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
int main(int argc, char **argv)
{
	struct timespec ts;
	struct stat st;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc > 1 && stat(argv[1], &st) == 0)
		printf("%lld\n", (long long)st.st_mtime);
	printf("%lld %s", (long long)ts.tv_sec, ctime(&ts.tv_sec));
	return 0;
}
"""
RAW = r"""
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { long t = 0; return (int)syscall(SYS_clock_gettime, 0, &t); }
"""
NO_TIME = "int main(void) { return 0; }\n"
TIME64 = ["-D_TIME_BITS=64", "-D_FILE_OFFSET_BITS=64"]
COMPILERS = {"i386": ["gcc", *shlex.split(cflags32(X86_64))], "armhf": ["arm-linux-gnueabihf-gcc"], "x86_64": ["gcc"]}
"""-m32 with the 32-bit <asm/*.h> headers the sandbox unpacks (sandbox/build/deps.py cflags32)."""


def compile_c(out: Path, source: str, machine: str, *flags: str) -> Path:
    cc = COMPILERS[machine]
    if not shutil.which(cc[0]):
        pytest.skip(f"no {cc[0]} here")
    src = out.with_suffix(".c")
    src.write_text(source)
    result = subprocess.run([*cc, "-o", str(out), str(src), *flags], capture_output=True, text=True, check=False)
    # The compiler is here, so a failed build is a broken set-up (the -m32
    # headers were once missing and hid 19 tests as skips): fail.
    assert result.returncode == 0, f"{' '.join(cc)} {' '.join(flags)} cannot build here: {result.stderr[-300:]}"
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each program once per machine and flag set, shared by the tests."""
    out = tmp_path_factory.mktemp("elves")
    table = {}
    for machine in ("i386", "armhf"):
        table[f"{machine}-time32"] = compile_c(out / f"{machine}-time32", PROGRAM, machine)
        table[f"{machine}-lfs"] = compile_c(out / f"{machine}-lfs", PROGRAM, machine, "-D_FILE_OFFSET_BITS=64")
        table[f"{machine}-time64"] = compile_c(out / f"{machine}-time64", PROGRAM, machine, *TIME64)
        table[f"{machine}-static"] = compile_c(out / f"{machine}-static", PROGRAM, machine, "-static")
        table[f"{machine}-raw"] = compile_c(out / f"{machine}-raw", RAW, machine, *TIME64)
        table[f"{machine}-none"] = compile_c(out / f"{machine}-none", NO_TIME, machine)
    table["x86_64"] = compile_c(out / "x86_64", PROGRAM, "x86_64")
    return table


def audit_one(path: Path):
    result = audit_static([str(path)])
    assert result.rejected == [] and len(result.audits) == 1, result.rejected
    return result.audits[0]


# -- the symbol list -------------------------------------------------------------


def test_the_symbol_lists_never_overlap() -> None:
    symbols = load_symbols()
    assert len(symbols.time32) > 110 and len(symbols.time64) > 90
    assert symbols.time32 & symbols.time64 == frozenset()
    assert symbols.indirect <= symbols.time32


@pytest.mark.parametrize("machine", ["i386", "armhf"])
def test_the_redirect_table_is_what_the_compiler_binds(tmp_path: Path, machine: str) -> None:
    """Every redirect of the data file, taken from glibc's headers: a program
    calling each function, built with _TIME_BITS=64, binds exactly the
    table's names; built without, exactly the plain (or large-file) ones."""
    import tomllib
    table = tomllib.loads(SYMBOLS_FILE.read_text())["glibc"]
    calls = ("clock_gettime", "time", "stat", "fstat", "gettimeofday", "nanosleep", "localtime_r", "mktime",
             "setitimer", "utimensat", "pselect", "sem_timedwait", "timer_settime", "difftime")
    headers = ("time.h", "sys/stat.h", "sys/time.h", "sys/select.h", "semaphore.h", "fcntl.h")
    source = "".join(f"#include <{h}>\n" for h in headers) + "void *used[] = {" + ", ".join(
        f"(void *)&{c}" for c in calls) + "};\nint main(void) { return used[0] == 0; }\n"
    new = read_elf(compile_c(tmp_path / "new", source, machine, *TIME64)).imports
    old = read_elf(compile_c(tmp_path / "old", source, machine, "-D_FILE_OFFSET_BITS=64")).imports
    assert {table["redirects"][c] for c in calls} <= new
    assert not {c for c in calls} & new
    assert {table["large-file"].get(c, c) for c in calls} <= old


# -- verdicts ----------------------------------------------------------------------


@pytest.mark.parametrize("machine", ["i386", "armhf"])
def test_time64_build_shows_its_redirects(built: dict[str, Path], machine: str) -> None:
    audit = audit_one(built[f"{machine}-time64"])
    assert audit.verdict == "time64" and audit.machine == machine
    assert {"__clock_gettime64", "__ctime64", "__stat64_time64"} <= set(audit.time64)
    assert audit.time32 == () and audit.libc == "glibc" and audit.linkage == "dynamic"
    assert "libc.so.6" in audit.needed


@pytest.mark.parametrize("machine", ["i386", "armhf"])
@pytest.mark.parametrize("build", ["time32", "lfs"])
def test_the_same_source_without_time_bits_is_time32(built: dict[str, Path], machine: str, build: str) -> None:
    audit = audit_one(built[f"{machine}-{build}"])
    assert audit.verdict == "time32"
    stat = "stat64" if build == "lfs" else "stat"
    assert {"clock_gettime", "ctime", stat} <= set(audit.time32) and audit.time64 == ()


@pytest.mark.parametrize(("machine", "instruction"), [("i386", "int 0x80"), ("armhf", "svc 0")])
def test_a_static_binary_shows_its_syscall_instructions(built: dict[str, Path], machine: str,
                                                        instruction: str) -> None:
    audit = audit_one(built[f"{machine}-static"])
    assert audit.verdict == "unknown-needs-runtime" and audit.linkage == "static"
    assert any(name.startswith(instruction) for name in audit.syscall_sites), audit.syscall_sites
    assert audit.time32 == audit.time64 == ()  # its symbol table is not read: both entry points are linked in


@pytest.mark.parametrize("machine", ["i386", "armhf"])
def test_syscall_by_number_needs_the_runtime_audit(built: dict[str, Path], machine: str) -> None:
    audit = audit_one(built[f"{machine}-raw"])
    assert audit.raw_calls == ("syscall",) and audit.verdict == "unknown-needs-runtime"


def test_a_program_without_time_calls(built: dict[str, Path]) -> None:
    assert audit_one(built["armhf-none"]).verdict == "no-time-use"


def test_a_klibc_program_is_left_to_the_runtime_audit(tmp_path: Path) -> None:
    """klibc's programs call into /lib/klibc-<hash>.so with no symbol to bind:
    binding no time name says nothing there."""
    binary = compile_c(tmp_path / "k", NO_TIME, "armhf", "-Wl,--dynamic-linker=/lib/klibc-AbC.so")
    audit = audit_one(binary)
    assert (audit.libc, audit.verdict, audit.reason) == ("klibc", "unknown-needs-runtime", "klibc: calls the kernel itself")


def test_a_go_program_is_left_to_the_runtime_audit(built: dict[str, Path], tmp_path: Path) -> None:
    """Go's runtime calls the kernel itself (its .note.go.buildid names it),
    even in a program that links glibc for cgo; a time32 name still decides."""
    objcopy = shutil.which("arm-linux-gnueabihf-objcopy")
    if objcopy is None:
        pytest.skip("no arm-linux-gnueabihf-objcopy")
    (tmp_path / "id").write_bytes(b"go build id")
    verdicts = {}
    for name in ("armhf-none", "armhf-time32"):
        go = tmp_path / name
        subprocess.run([objcopy, "--add-section", f".note.go.buildid={tmp_path / 'id'}", str(built[name]), str(go)],
                       check=True)
        audit = audit_one(go)
        verdicts[name] = (audit.libc, audit.verdict)
    assert verdicts == {"armhf-none": ("go", "unknown-needs-runtime"), "armhf-time32": ("go", "time32")}


def test_a_64_bit_program_is_time64_by_its_abi(built: dict[str, Path]) -> None:
    audit = audit_one(built["x86_64"])
    assert (audit.verdict, audit.machine, audit.bits) == ("time64", "x86_64", 64)
    assert audit.time32 == ()  # clock_gettime is the 64-bit one there


def test_objects_built_both_ways_are_mixed(tmp_path: Path) -> None:
    part = tmp_path / "part.o"
    (tmp_path / "part.c").write_text("#include <time.h>\nlong old_time(void) { return (long)time(0); }\n")
    if not shutil.which("arm-linux-gnueabihf-gcc"):
        pytest.skip("no arm-linux-gnueabihf-gcc")
    subprocess.run(["arm-linux-gnueabihf-gcc", "-c", "-o", str(part), str(tmp_path / "part.c")], check=True)
    main_c = PROGRAM.replace("return 0;", "return (int)old_time();").replace("int main", "long old_time(void);\nint main")
    binary = compile_c(tmp_path / "mixed", main_c, "armhf", *TIME64, str(part))
    audit = audit_one(binary)
    assert audit.verdict == "mixed" and "time" in audit.time32 and "__clock_gettime64" in audit.time64


def test_a_library_that_binds_time32_is_named_by_its_users(tmp_path: Path) -> None:
    lib = compile_c(tmp_path / "libold.so", "#include <time.h>\nlong old(void) { return (long)time(0); }\n",
                    "armhf", "-shared", "-fPIC", "-Wl,-soname,libold.so")
    user = compile_c(tmp_path / "user", "long old(void);\nint main(void) { return (int)old(); }\n", "armhf",
                     f"-L{tmp_path}", "-lold")
    result = audit_static([str(lib), str(user)])
    by_name = {Path(a.origin.name).name: a for a in result.audits}
    assert by_name["libold.so"].verdict == "time32"
    assert by_name["user"].verdict == "no-time-use" and by_name["user"].needed_time32 == ("libold.so",)
    assert "needs time32 lib: libold.so" in lines.line(by_name["user"])


# -- the syscall scan ----------------------------------------------------------------


def test_arm_instructions_count_only_where_aligned_and_numbered() -> None:
    svc_arm, svc_thumb = b"\x00\x00\x00\xef", b"\x00\xdf"
    mov_r7_arm, movs_r7_thumb, movw_r7_thumb = b"\x25\x70\xa0\xe3", b"\x25\x27", b"\x4f\xf0\x25\x07"
    assert scan("armhf", (mov_r7_arm + svc_arm + b"\x00" + svc_arm[:3],)) == {"svc 0 (arm)": 1}
    assert scan("armhf", (movs_r7_thumb + b"\x01" + svc_thumb + b"\x01",)) == {}  # not half-word aligned
    assert scan("armhf", (movs_r7_thumb + svc_thumb,)) == {"svc 0 (thumb)": 1}
    assert scan("armhf", (b"\x80\xb4" + movw_r7_thumb + svc_thumb,)) == {"svc 0 (thumb)": 1}
    # a switch table among Thumb code: "svc 0" with no number put in r7 before it
    assert scan("armhf", (b"\x02\x00\x4c\xdf\x02\x00" + svc_thumb,)) == {}
    assert scan("i386", (b"\x90\xcd\x80\x0f\x05",)) == {"int 0x80": 1}  # syscall is not looked for on i386
    assert scan("x86_64", (b"\x0f\x05\xcd\x80",)) == {"syscall": 1, "int 0x80": 1}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="no objdump (binutils)")
def test_x86_patterns_are_confirmed_by_disassembly(tmp_path: Path) -> None:
    """The bytes of int 0x80 inside a mov are not a system call; the instruction is."""
    inside = compile_c(tmp_path / "inside", "int main(void) { int x; __asm__ volatile(\"mov $0x80cd, %0\" : "
                       "\"=r\"(x)); return x; }\n", "x86_64")
    real = compile_c(tmp_path / "real", "int main(void) { __asm__ volatile(\"int $0x80\"); return 0; }\n",
                     "x86_64")
    assert scan("x86_64", read_elf(inside).code).get("int 0x80") == 1
    assert (audit_one(inside).verdict, audit_one(inside).syscall_sites) == ("time64", {})
    assert (audit_one(real).verdict, audit_one(real).syscall_sites) == ("unknown-needs-runtime", {"int 0x80": 1})


# -- bad input: one line each, the others still judged --------------------------------


def _elf_with(source: Path, out: Path, machine: int, bits: int | None = None) -> Path:
    data = bytearray(source.read_bytes())
    if bits is not None:
        data[4] = 1 if bits == 32 else 2
    data[18:20] = machine.to_bytes(2, "little")
    out.write_bytes(bytes(data))
    return out


def test_bad_inputs_get_one_line_each(built: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("not an elf\n")
    (tmp_path / "cut").write_bytes(built["armhf-time32"].read_bytes()[:200])
    aarch64 = _elf_with(built["x86_64"], tmp_path / "aarch64", 183)  # EM_AARCH64
    mips = _elf_with(built["armhf-time32"], tmp_path / "mips", 8)  # EM_MIPS
    good = str(built["armhf-time64"])
    inputs = [str(tmp_path / "notes.txt"), str(tmp_path / "cut"), str(aarch64), str(mips),
              str(tmp_path / "missing"), "nosuch-userland:sqlite3", good]
    code = main(["rehearse", "--static", "--json", str(tmp_path / "out.json"), *inputs])
    out, err = capsys.readouterr()
    errors = err.splitlines()
    errors = [e for e in errors if e.startswith("error: ")]
    assert code == 2
    assert len(errors) == 6, err
    for text in inputs[:-1]:
        assert sum(e.startswith(f"error: {text}: ") for e in errors) == 1, (text, errors)
    assert "not an ELF file" in err and "unreadable ELF" in err and "no such file or directory" in err
    assert "64-bit AARCH64 ELF: no machine here boots it" in err and "32-bit MIPS ELF" in err
    assert "no userland 'nosuch-userland'" in err
    assert [ln[:36] for ln in out.splitlines() if "armhf-time64  time64: __clock_gettime64" in ln] \
        == ["time64                armhf  dyn    "]
    record = json.loads((tmp_path / "out.json").read_text())
    assert [a["verdict"] for a in record["audits"]] == ["time64"]
    assert record["audits"][0]["runtime"] is None  # where the runtime audit's verdict will join
    assert len(record["rejected"]) == 6


def test_a_corrupt_elf_is_one_line_never_a_traceback(built: dict[str, Path], tmp_path: Path) -> None:
    """Bytes of a real binary flipped at random (fixed seed): every file is
    read or refused with BadElf; nothing else escapes."""
    import random
    from sandbox.audit.elf import BadElf
    data = built["armhf-time32"].read_bytes()
    rng = random.Random(2038)
    outcomes = set()
    for n in range(150):
        corrupt = bytearray(data)
        for _ in range(8):
            corrupt[rng.randrange(0, 512) if rng.random() < 0.7 else rng.randrange(len(data))] = rng.randrange(256)
        corrupt[:4] = b"\x7fELF"
        path = tmp_path / f"c{n}"
        path.write_bytes(bytes(corrupt))
        try:
            read_elf(path)
            outcomes.add("read")
        except BadElf:
            outcomes.add("refused")
    assert outcomes == {"read", "refused"}


def test_the_machine_table_matches_the_machines() -> None:
    from sandbox.base.machines import MACHINES
    assert set(BOOTED.values()) == set(MACHINES)


# -- inputs ---------------------------------------------------------------------------


def test_a_tree_is_walked_once_per_file(built: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    shutil.copy(built["armhf-time32"], root / "bin" / "old")
    (root / "bin" / "hard").hardlink_to(root / "bin" / "old")
    (root / "bin" / "soft").symlink_to("old")
    (root / "bin" / "script").write_text("#!/bin/sh\n")
    result = audit_static([str(root)])
    assert [a.origin.name for a in result.audits] == ["bin/hard"]  # one inode, once; links not followed
    assert result.not_elf == 1 and result.audits[0].origin.input == str(root)


def _deb(tmp_path: Path, binary: Path) -> Path:
    tree = tmp_path / "pkg"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "usr" / "bin").mkdir(parents=True)
    shutil.copy(binary, tree / "usr" / "bin" / "clock")
    (tree / "DEBIAN" / "control").write_text("Package: clock\nVersion: 1.0-1\nArchitecture: armhf\n"
                                              "Maintainer: nobody <n@example.org>\nDescription: test\n")
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(tree), str(tmp_path / "clock.deb")], check=True,
                   capture_output=True)
    return tmp_path / "clock.deb"


def test_a_deb_is_unpacked_and_audited(built: dict[str, Path], tmp_path: Path) -> None:
    deb = _deb(tmp_path, built["armhf-time32"])
    (audit,) = audit_static([str(deb)]).audits
    assert audit.origin == Origin(str(deb), "usr/bin/clock", "clock=1.0-1")
    assert audit.verdict == "time32"


def test_a_userland_package_goes_through_the_private_apt_state(built: dict[str, Path], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`debian12-armhf:clock` asks sandbox/build/userland.py for the .deb (here
    a fake that answers as apt would, without the network)."""
    deb = _deb(tmp_path, built["armhf-time64"])
    asked = []

    def download(userland, table, package, into):  # noqa: ANN001 - the real one's signature
        asked.append((userland.name, userland.suite, userland.arch, package))
        if package != "clock":
            raise SandboxError(f"apt-get download {package} ({userland.suite}/{userland.arch}): "
                               f"E: Unable to locate package {package}")
        return Path(shutil.copy(deb, into))

    monkeypatch.setattr("sandbox.audit.inputs.download_package", download)
    work = tmp_path / "work"
    work.mkdir()
    found = expand(["debian12-armhf:clock", "debian12-armhf:nosuch", "debian99-armhf:clock"], work, load_userlands)
    assert asked == [("debian12-armhf", "bookworm", "armhf", "clock"), ("debian12-armhf", "bookworm", "armhf", "nosuch")]
    assert [c.origin for c in found.candidates] == [Origin("debian12-armhf:clock", "usr/bin/clock", "clock=1.0-1")]
    assert [r.line() for r in found.rejected] == [
        "debian12-armhf:nosuch: apt-get download nosuch (bookworm/armhf): E: Unable to locate package nosuch",
        "debian99-armhf:clock: no userland 'debian99-armhf' (rootfs/userlands.toml: " +
        ", ".join(load_userlands().by_name) + ")"]


# -- the report -------------------------------------------------------------------------


def test_every_line_fits_100_columns(built: dict[str, Path], tmp_path: Path) -> None:
    deep = tmp_path / ("very-long-folder-name-" * 6)
    deep.mkdir()
    shutil.copy(built["armhf-time32"], deep / "a-program-with-a-long-name")
    result = audit_static([str(tmp_path), *map(str, built.values())])
    text = lines.report(result)
    assert all(len(line) <= 100 for line in text.splitlines()), text
    assert "…-/a-program-with-a-long-name  time32: " in text


# -- our list next to lintian's and OE-core's ---------------------------------------------


def test_what_lintian_and_oe_core_miss() -> None:
    from sandbox.audit.symbols import compare, load_others
    ours, others = load_symbols(), load_others()
    lintian, oe = compare(ours, "lintian", others["lintian"]), compare(ours, "oe-core", others["oe-core"])
    # lintian knows the plain names only: a 32-bit time_t program built with
    # _FILE_OFFSET_BITS=64 (most of Debian) binds stat64, fstat64, lstat64
    assert {"stat64", "fstat64", "lstat64", "fstatat64", "fcntl64", "glob64"} <= set(lintian.misses)
    assert {"pthread_cond_timedwait", "sem_clockwait", "mq_timedsend", "wait4"} <= set(lintian.misses)
    assert lintian.extra == ()
    # OE-core misses what glibc before 2.33 bound (__xstat64...), and musl's ftime/stime
    assert set(oe.misses) == {"__fxstat", "__fxstat64", "__fxstatat", "__fxstatat64", "__lxstat", "__lxstat64",
                              "__xstat", "__xstat64", "aio_suspend64", "ftime", "stime"}
    # and flags aio calls that carry no time (glibc 2.36 has no 64-bit time name for them)
    assert set(oe.extra) == {"aio_cancel", "aio_error", "aio_read", "aio_return", "aio_write", "lio_listio"}
