"""What the clock steps and the waiting probes rely on: host binaries with
their shared libraries in the initramfs (util-linux hwclock), and timed waits
judged on their errno and their elapsed time together."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.base.errors import InputError
from sandbox.judge.evaluate import evaluate
from sandbox.build.initramfs import HostBinary, load_manifest, parse_ldd
from sandbox.run.observations import Observation
from sandbox.scenario.catalogue import FLAVOURS, parse_catalogue
from sandbox.scenario.parser import parse_scenario

LDD_HWCLOCK = """\
\tlinux-vdso.so.1 (0x00007ffc1b5f2000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f4036d63000)
\tlibaudit.so.1 => /lib/x86_64-linux-gnu/libaudit.so.1 (0x00007f4036d32000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f4036b50000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f4036e71000)
\tlibcap-ng.so.0 => /lib/x86_64-linux-gnu/libcap-ng.so.0 (0x00007f4036b48000)
"""


def test_ldd_output_gives_libraries_and_the_interpreter_not_the_vdso() -> None:
    assert parse_ldd(LDD_HWCLOCK) == (
        ("/lib/x86_64-linux-gnu/libm.so.6", "/lib/x86_64-linux-gnu/libaudit.so.1",
         "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2",
         "/lib/x86_64-linux-gnu/libcap-ng.so.0"),
        (),
    )


def test_ldd_names_what_it_did_not_find() -> None:
    found, missing = parse_ldd("\tlibfoo.so.1 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x1)\n")
    assert (found, missing) == (("/lib/libc.so.6",), ("libfoo.so.1",))


def test_ldd_of_a_static_binary_gives_nothing() -> None:
    assert parse_ldd("\tnot a dynamic executable\n") == ((), ())


MANIFEST_HEAD = """\
[initramfs]
scripts = ["init"]
dirs = ["tmp"]
probes_dir = "probes"
tools_dir = "tools"

[busybox.x86_64]
path = "/bin/busybox"
package = "busybox-static"

[probe.clock]
calls.time = { seconds = "time" }
"""


def test_the_manifest_lists_host_binaries_per_arch(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_HEAD + '[host-binaries.x86_64]\n"/usr/sbin/hwclock" = "util-linux-extra"\n')
    assert load_manifest(manifest).host_binaries == {
        "x86_64": (HostBinary(Path("/usr/sbin/hwclock"), "util-linux-extra"),)}


def test_host_binaries_are_optional(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_HEAD)
    assert load_manifest(manifest).host_binaries == {}


@pytest.mark.parametrize("table", [
    '"usr/sbin/hwclock" = "util-linux-extra"',  # not absolute
    '"/usr/sbin/hwclock" = 3',                   # no package name
])
def test_a_bad_host_binary_names_its_key(tmp_path: Path, table: str) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_HEAD + "[host-binaries.x86_64]\n" + table + "\n")
    with pytest.raises(InputError) as caught:
        load_manifest(manifest)
    assert "host-binaries.x86_64." in str(caught.value)
    assert "debian-package" in str(caught.value)



def test_stamped_directories_carry_their_mtimes(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_HEAD.replace('dirs = ["tmp"]\n', 'dirs = ["tmp"]\nstamped = [\n'
                        '  { path = "stamps", mtime = "2038-01-19T03:14:08Z" },\n'
                        '  { path = "stamps/last", mtime = "2106-02-07T06:28:15Z" }]\n'))
    assert [(s.path, s.mtime) for s in load_manifest(manifest).stamped] == [
        ("stamps", 2**31), ("stamps/last", 2**32 - 1)]


@pytest.mark.parametrize(("stamp", "message"), [
    ('{ path = "s", mtime = "2106-02-07T06:28:16Z" }', "a cpio (newc) mtime is 1970"),
    ('{ path = "s", mtime = "1969-12-31T23:59:59Z" }', "a cpio (newc) mtime is 1970"),
    ('{ path = "s", mtime = "2038-02-30T00:00:00Z" }', "not a time"),
    ('{ path = "s", mtime = "2040-01-01T00:00:00Z", owner = "me" }', "unknown key 'owner'"),
])
def test_a_bad_stamp_names_its_key(tmp_path: Path, stamp: str, message: str) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(MANIFEST_HEAD.replace('dirs = ["tmp"]\n', f'dirs = ["tmp"]\nstamped = [{stamp}]\n'))
    with pytest.raises(InputError) as caught:
        load_manifest(manifest)
    assert "initramfs.stamped[0]." in str(caught.value) and message in str(caught.value)

# --- a timed wait: errno and elapsed, both checked --------------------------

CATALOGUE = parse_catalogue(
    '[probe.mqueue]\ncalls.mq_timedsend = { elapsed = "number", woke = "time" }\nflavours = ["time64", "native64"]\n', "manifest.toml")
SCENARIO = parse_scenario(
    """\
title = "t"
rtc = "2038-01-19T03:13:50Z"
[[step]]
phase = "across"
probe = "mqueue"
[step.expect.time64.mq_timedsend]
errno = "ETIMEDOUT"
elapsed = { elapsed = [2.5, 3.5] }
""",
    "scenarios/demo/wait.toml", CATALOGUE, {"x86_64": FLAVOURS})


def verdicts(errno: str | None, **values: float) -> list[tuple[str, bool, str]]:
    observation = Observation("demo/wait", "x86_64", "across", "mqueue", "time64", "mq_timedsend",
                              values, errno)
    result = evaluate(SCENARIO, "x86_64", [observation])
    return [(v.field, v.passed, v.observed) for v in result.verdicts]


def test_a_wait_that_timed_out_on_time_passes_both() -> None:
    assert verdicts("ETIMEDOUT", elapsed=2.95) == [
        ("errno", True, "errno ETIMEDOUT"), ("elapsed", True, "2.95 (errno ETIMEDOUT)")]


def test_a_wait_that_timed_out_at_once_fails_on_elapsed() -> None:
    assert verdicts("ETIMEDOUT", elapsed=0.0003) == [
        ("errno", True, "errno ETIMEDOUT"), ("elapsed", False, "0.0003 (errno ETIMEDOUT)")]


def test_a_rejected_wait_without_elapsed_shows_its_errno() -> None:
    assert verdicts("EINVAL") == [("errno", False, "errno EINVAL"), ("elapsed", False, "errno EINVAL")]
