"""Running host commands with their output kept and a one-line error on failure."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, Mapping, Sequence

from sandbox.base.errors import SandboxError


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
    on_line: Callable[[str], None] | None = None,
) -> str:
    """Run argv and return its stdout; with log, stdout+stderr go to that file
    (and, with on_line, each line to on_line as it comes)."""
    try:
        if log is not None and on_line is not None:
            code, output, detail = _tee(argv, cwd, env, log, on_line), "", f"see {log}"
        elif log is not None:
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


def _tee(argv: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None,
         log: Path, on_line: Callable[[str], None]) -> int:
    """Run argv with stdout+stderr appended to log, each line also to on_line."""
    with log.open("ab") as out, subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT) as proc:
        assert proc.stdout is not None
        try:
            for raw in proc.stdout:
                out.write(raw)
                on_line(raw.decode(errors="replace"))
        except BaseException:  # a signal's exception: stop the command, as subprocess.run does
            proc.kill()
            raise
        return proc.wait()
