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
from pathlib import Path

import pytest

from sandbox.audit.corpus import agreement, build_probes, flavour_of
from sandbox.audit.static import audit_static
from sandbox.base.machines import MACHINES

PROBES = ("clock",)
MACHINE_NAMES = ("x86_64", "armhf")


@pytest.fixture(scope="module", params=["static", "dynamic"])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    linkage = request.param
    folders = []
    for name in MACHINE_NAMES:
        machine = MACHINES[name]
        if not shutil.which(machine.cc):
            pytest.skip(f"no {machine.cc} here")
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
