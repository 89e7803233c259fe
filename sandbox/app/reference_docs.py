"""The docs generated from the repository's own data, not from runs: the
probe reference of docs/scenario-authoring.md, from rootfs/manifest.toml.

    python3 -m sandbox.app.reference_docs     rewrites it between its markers

(sandbox/app/evidence_docs.py writes the docs generated from runs' evidence.)
"""
from __future__ import annotations

import sys
from pathlib import Path

from sandbox.base.errors import SandboxError
from sandbox.base.paths import REPO
from sandbox.report import probe_reference
from sandbox.scenario.catalogue import load_catalogue

AUTHORING_GUIDE = REPO / "docs" / "scenario-authoring.md"


def probes_doc(target: Path = AUTHORING_GUIDE) -> Path:
    """Rewrite the probe reference of the authoring guide from the manifest."""
    text = probe_reference.markdown(load_catalogue())
    try:
        target.write_text(probe_reference.replace_between(
            target.read_text(), probe_reference.BEGIN, probe_reference.END, text))
    except ValueError as err:
        raise SandboxError(f"{target}: {err}") from None
    return target


if __name__ == "__main__":
    try:
        print(probes_doc())
    except SandboxError as err:
        sys.exit(f"error: {err}")
