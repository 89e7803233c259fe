"""The runtime audit (`just rehearse` without --static) against known
answers, one boot per machine: the clock probe in each flavour the machine
runs, static (as the guest gets it) and dynamic (with the EOVERFLOW shim
preloaded), and Debian's programs of the real-programs runs in every
userland of the machine's architecture the cache holds
(sandbox/audit/runtime/corpus.py). Every verdict that answers must agree;
`-s` prints the figure.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.audit.runtime.audit import RuntimeOptions
from sandbox.audit.runtime.corpus import run_corpus
from sandbox.base.machines import MACHINES
from sandbox.build.dynamic_probes import build_probes

PROBES = ("clock",)


@pytest.mark.parametrize("machine_name", list(MACHINES))
def test_runtime_verdicts_agree_with_known_answers(machine_name: str, y2038_target: object,
                                                   y2038_evidence: Path, tmp_path: Path) -> None:
    y2038_target(machine_name)  # type: ignore[operator]  # built or reused once per session
    builder = MACHINES[machine_name]
    folders = [build_probes(builder, tmp_path / linkage, linkage, PROBES) for linkage in ("static", "dynamic")]
    found = run_corpus(machine_name, folders, y2038_evidence / machine_name, RuntimeOptions())
    print(f"\n{machine_name}: {found.agreement.figure()}; {found.programs} programs in {found.seconds:.1f} s, "
          f"{found.seconds / max(found.programs, 1):.1f} s per program")
    assert found.agreement.decided >= len(folders)  # the probes at least answered
    assert not found.agreement.disagreeing, "\n".join(found.agreement.disagreeing)
