"""Running host commands with their output kept and a one-line error on failure."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from sandbox.base.errors import SandboxError


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
) -> str:
    """Run argv and return its stdout; with log, stdout+stderr go to that file."""
    try:
        if log is not None:
            with log.open("ab") as out:
                code = subprocess.run(argv, cwd=cwd, env=env, stdout=out,
                                      stderr=subprocess.STDOUT, check=False).returncode
            output, detail = "", f"see {log}"
        else:
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True,
                                  text=True, check=False)
            code, output = proc.returncode, proc.stdout
            detail = (proc.stderr.strip() or proc.stdout.strip())[-300:]
    except FileNotFoundError:
        raise SandboxError(f"command not found: {argv[0]} (run 'just deps')") from None
    if code != 0:
        shown = " ".join(argv)[:160]
        raise SandboxError(f"'{shown}' failed with exit code {code}: {detail}")
    return output
