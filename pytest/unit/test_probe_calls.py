"""rootfs/manifest.toml against the probes themselves: the calls each binary
says it prints (`<binary> --list`, which calls nothing) and the fields its
source can print.

Builds the x86_64 set (four flavours and the tools) with rootfs/Makefile into
a temporary folder, as the initramfs holds it (MULTICALL=1: one binary per
flavour, each name a symlink to it), so every name is also checked to run
its own program. No probe is ever run for real here: only `--list`, which
prints call names and exits (time32 and settime would otherwise touch the
clock of this host). i386 binaries run directly, or through qemu-i386 where
this host's kernel does not run them itself.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from rootfs_make import MAKE_ENV

from sandbox.base.machines import X86_64
from sandbox.build.deps import cflags32

REPO = Path(__file__).resolve().parents[2]
ROOTFS = REPO / "rootfs"
SOURCES = ROOTFS / "probes"
MANIFEST = tomllib.loads((ROOTFS / "manifest.toml").read_text(encoding="utf-8"))
PROBES: dict[str, dict] = MANIFEST.get("probe", {})
TOOLS: dict[str, dict] = MANIFEST.get("tool", {})
FLAVOURS = ("time32-syscall", "time32-libc", "time64", "native64")  # x86_64's, the Makefile's default
KINDS = {"time", "number", "text", "errno"}
# The Makefile's per-machine settings come from its defaults (x86_64), never
# from the environment.

# Field keys as the C source writes them: the first argument of the line
# writers of probe.h (probe_status_field() among them), and PROBE_KEY("...") where a helper passes a key on.
_WRITER_KEY = re.compile(r'\bprobe_(?:i64|str|f64|number|status_field)\s*\(\s*"([^"]+)"')
_PASSED_KEY = re.compile(r'\bPROBE_KEY\s*\(\s*"([^"]+)"\s*\)')
_ABSENT = re.compile(r"\bprobe_absent\s*\(")
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)\.h"', re.MULTILINE)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def _calls(name: str, table: dict) -> dict[str, dict]:
    calls = table.get("calls", {})
    assert isinstance(calls, dict), f"[{name}] calls: expected a table of call = {{ field = kind }}"
    return calls


def _expected_calls(probe: str, flavour: str) -> list[str]:
    table = PROBES[probe]
    only = table.get("only", {})
    return [call for call in _calls(probe, table) if flavour in only.get(call, FLAVOURS)]


def _sources(name: str) -> list[Path]:
    """probes/<name>.c and the .c of each local header it includes (as the
    Makefile links them: waits.h -> waits.c); probe.c prints no field of
    its own but errno and absent."""
    main = SOURCES / f"{name}.c"
    text = main.read_text(encoding="utf-8")
    linked = [SOURCES / f"{header}.c" for header in _INCLUDE.findall(text)]
    return [main] + [path for path in linked if path.is_file() and path.name != "probe.c"]


def source_fields(name: str) -> set[str]:
    """Every field key the sources of binary `name` can print, but errno."""
    keys: set[str] = set()
    for path in _sources(name):
        code = _COMMENT.sub("", path.read_text(encoding="utf-8"))
        keys |= set(_WRITER_KEY.findall(code)) | set(_PASSED_KEY.findall(code))
        if _ABSENT.search(code):
            keys.add("absent")
    keys.discard("errno")
    return keys


def declared_fields(name: str, table: dict) -> set[str]:
    return {field for fields in _calls(name, table).values() for field in fields}


# ---- the manifest on its own ------------------------------------------------

ALL = [(f"probe.{name}", table) for name, table in PROBES.items()] + [
    (f"tool.{name}", table) for name, table in TOOLS.items()]


@pytest.mark.parametrize(("section", "table"), ALL, ids=[section for section, _ in ALL])
def test_manifest_section_is_well_formed(section: str, table: dict) -> None:
    name = section.split(".", 1)[1]
    assert (SOURCES / f"{name}.c").is_file(), f"[{section}] has no rootfs/probes/{name}.c"
    for call, fields in _calls(section, table).items():
        assert isinstance(fields, dict), f"[{section}] calls.{call}: expected an inline table"
        assert "errno" not in fields, f"[{section}] calls.{call}: errno is implicit, do not declare it"
        for field, kind in fields.items():
            assert kind in KINDS, f"[{section}] calls.{call}.{field} = {kind!r}: not one of {sorted(KINDS)}"
    if section.startswith("probe."):
        flavours = table.get("flavours")
        assert flavours and set(flavours) <= set(FLAVOURS), f"[{section}] flavours = {flavours!r}"
        for call, only in table.get("only", {}).items():
            assert call in _calls(section, table), f"[{section}] only.{call}: no such call"
            assert only and set(only) <= set(flavours), f"[{section}] only.{call} = {only!r}"
    else:
        assert set(table) <= {"calls"}, f"[{section}]: unknown keys {sorted(set(table) - {'calls'})}"


def test_makefile_reads_the_same_sections() -> None:
    """rootfs/Makefile takes PROBES and TOOLS from the section names with sed:
    sub-tables such as [probe.ipc.only] must not become binaries."""
    result = subprocess.run(
        ["make", "--no-print-directory", "-s", "-C", str(ROOTFS),
         "--eval", "print-names: ; @echo '$(PROBES)'; echo '$(TOOLS)'", "print-names"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=MAKE_ENV, check=False)
    assert result.returncode == 0, result.stdout
    probes, tools = result.stdout.splitlines()
    assert probes.split() == list(PROBES)
    assert tools.split() == list(TOOLS)


# ---- the sources --------------------------------------------------------------


@pytest.mark.parametrize(("section", "table"), ALL, ids=[section for section, _ in ALL])
def test_fields_match_the_source(section: str, table: dict) -> None:
    name = section.split(".", 1)[1]
    in_source = source_fields(name)
    declared = declared_fields(section, table)
    files = ", ".join(path.name for path in _sources(name))
    assert not in_source - declared, (
        f"{files} print(s) {sorted(in_source - declared)}, declared for no call of [{section}]")
    assert not declared - in_source, (
        f"[{section}] declares {sorted(declared - in_source)}, which {files} never print(s)")


# ---- the binaries ---------------------------------------------------------------


def _has_static_libc_m32() -> bool:
    if not shutil.which("gcc"):
        return False
    found = subprocess.run(["gcc", "-m32", "-print-file-name=libc.a"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, check=False).stdout.strip()
    return os.path.isabs(found) and os.path.isfile(found)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not _has_static_libc_m32():
        pytest.skip("gcc -m32 has no static C library here (Debian: gcc-12-multilib): "
                    "the i386 flavours cannot be built")
    out = tmp_path_factory.mktemp("probes")
    jobs = min(os.cpu_count() or 1, 4)
    result = subprocess.run(["make", "--no-print-directory", "-C", str(ROOTFS), f"-j{jobs}", f"OUT={out}",
                             f"CFLAGS32={cflags32(X86_64)}", "MULTICALL=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=MAKE_ENV,
                            check=False)
    assert result.returncode == 0, f"make failed:\n{result.stdout[-4000:]}"
    return out


def list_calls(binary: Path) -> list[str]:
    """`<binary> --list`, run directly or through qemu-i386."""
    argv = [str(binary), "--list"]
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except OSError as err:
        if err.errno != errno.ENOEXEC:
            raise
        qemu = shutil.which("qemu-i386")
        if not qemu:
            pytest.skip(f"this host's kernel does not run {binary.parent.name} binaries and there "
                        "is no qemu-i386 (Debian: qemu-user)")
        result = subprocess.run([qemu, *argv], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, f"{binary} --list: exit {result.returncode}, stderr {result.stderr!r}"
    assert result.stderr == "", f"{binary} --list wrote to stderr: {result.stderr!r}"
    return result.stdout.splitlines()


PROBE_CASES = [(probe, flavour) for probe in PROBES for flavour in FLAVOURS]


@pytest.mark.parametrize(("probe", "flavour"), PROBE_CASES, ids=[f"{p}-{f}" for p, f in PROBE_CASES])
def test_probe_lists_the_manifest_calls(built: Path, probe: str, flavour: str) -> None:
    assert list_calls(built / flavour / probe) == _expected_calls(probe, flavour)


@pytest.mark.parametrize("tool", list(TOOLS))
def test_tool_lists_the_manifest_calls(built: Path, tool: str) -> None:
    assert list_calls(built / "tools" / tool) == list(_calls(f"tool.{tool}", TOOLS[tool]))


def test_a_multicall_binary_called_by_another_name_runs_nothing_and_names_its_programs(built: Path) -> None:
    result = subprocess.run([str(built / "native64" / "multicall"), "--list"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 127 and result.stdout == ""
    named = result.stderr.split("run it as one of:", 1)[1].split()
    assert named == [*PROBES, *TOOLS]  # native64 is x86_64's tools flavour: the tools are in it too


def test_init_does_nothing_unless_the_kernel_started_it(built: Path) -> None:
    """/init mounts and at the end reboots: run here (not PID 1) it must
    refuse before it touches anything."""
    result = subprocess.run([str(built / "tools" / "init")], capture_output=True, text=True, check=False, timeout=10)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "init: usage: /init, started by the kernel as PID 1 (or: init --list)\n"
