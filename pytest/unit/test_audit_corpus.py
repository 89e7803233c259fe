"""The static audit against a known answer: the project's own probes
(rootfs/Makefile), whose flavour says how each was built. Every verdict the
static audit gives must match the flavour; what it leaves to the runtime
audit is counted, and the agreement printed (`-s` shows it).

Built here from rootfs/ (as pytest/unit/test_probe_calls.py does), one
probe, on x86_64 (its -m32 flavours are the i386 binaries) and armhf: as the
guest gets them (static, stripped) and dynamically linked.
"""
from __future__ import annotations

import shutil

import pytest

from sandbox.audit.corpus import BROKE_AFTER, agree, agreement, cached_userland, flavour_of, \
    program_answers, program_files
from sandbox.audit.static import audit_static
from sandbox.base.machines import MACHINES
from sandbox.build.dynamic_probes import build_probes

PROBES = ("clock",)
MACHINE_NAMES = ("x86_64", "armhf")


@pytest.fixture(scope="module", params=["static", "dynamic"])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    linkage = request.param
    folders = []
    for name in MACHINE_NAMES:
        machine = MACHINES[name]
        if not shutil.which(machine.toolchain.cc):
            pytest.skip(f"no {machine.toolchain.cc} here")
        folders.append(build_probes(machine, tmp_path_factory.mktemp(f"{name}-{linkage}"), linkage, PROBES))
    result = audit_static([str(f) for f in folders])
    assert result.rejected == []
    return linkage, result.audits


def test_every_decided_verdict_matches_the_flavour(corpus) -> None:
    linkage, audits = corpus
    found = agreement(audits)
    print(f"\nstatic audit on the probe flavours ({linkage}, {', '.join(MACHINE_NAMES)}): {found.figure()}")
    assert found.files == len(PROBES) * (4 + 3)
    assert found.disagreeing == ()


def test_what_each_linkage_leaves_to_the_runtime_audit(corpus) -> None:
    linkage, audits = corpus
    left = sorted({(a.machine, flavour_of(a)) for a in audits if a.verdict == "unknown-needs-runtime"})
    if linkage == "static":  # both entry points linked in: only the 64-bit ABI decides
        assert left == [("armhf", f) for f in ("time32-libc", "time32-syscall", "time64")] + \
            [("i386", f) for f in ("time32-libc", "time32-syscall", "time64")]
    else:  # syscall(__NR_clock_gettime, ...) alone is the time32-syscall flavour's clock
        assert left == [("armhf", "time32-syscall"), ("i386", "time32-syscall")]


def test_debian_programs_agree_with_what_their_runs_saw(capsys: pytest.CaptureFixture[str]) -> None:
    """The programs of docs/real-programs.md, in every userland the cache
    holds (unpacked by sandbox/build/userland.py; none is downloaded here)."""
    judged, seen = [], []
    for name in BROKE_AFTER:
        root = cached_userland(name)
        if root is None:
            continue
        result = audit_static([str(f) for f in program_files(root)])
        answers = program_answers(name, result.audits)
        assert len(answers) == 14, f"{name}: {[a.origin.name for a, _ in answers]}"
        judged += answers
        seen.append(name)
    if not judged:
        pytest.skip("no userland in the cache (just build-all, or a run of scenarios/programs/)")
    found = agree(judged)
    with capsys.disabled():
        print(f"\nstatic audit on Debian's programs ({', '.join(seen)}) against their runs: {found.figure()}")
    assert found.disagreeing == ()
    assert found.decided >= len(judged) - 2  # Debian 13 armhf's perl and python3.13 call syscall()


def test_lintians_list_misses_debian_12s_dash() -> None:
    """dash broke after the rollover (docs/real-programs.md: `sh: 1: touch:
    Value too large`); the only time names it binds are large-file ones."""
    from sandbox.audit.symbols import load_others
    root = cached_userland("debian12-armhf")
    if root is None:
        pytest.skip("debian12-armhf is not in the cache")
    (dash,) = audit_static([str(root / "bin" / "dash")]).audits
    assert dash.verdict == "time32"
    assert not set(dash.time32) & load_others()["lintian"]
