"""A death is never a verdict: a small parent between the caller and the
Python that does the work, for one job, mapping the child's death by a
signal to 128 + n.

    python3 -m sandbox VERB ...        (sandbox/__main__.py: the parent, then the child)
    python3 -m sandbox.app.supervisor -m pytest ...   (the justfile's pytest)

A process killed by SIGKILL (the OOM killer, `kill -9`) sets no exit code of
its own, and `just` turns a recipe killed by a signal into exit 1, the code
of "an expectation failed". So the parent starts the child, forwards every
signal of sandbox/app/signals.py FATAL_SIGNALS to it (the child records its
runs as interrupted and exits 128 + n itself), and exits with the child's
code, or 128 + n when a signal n killed the child outright; its runs' run.json
then still say `running` with the child's pid, which `just report` reads
back as killed (sandbox/base/evidence.py state_of).

The child runs in the parent's process group (a Ctrl-C at the terminal
reaches both; the second copy forwarded is ignored by the child's handler).
QEMU keeps its own group and PR_SET_PDEATHSIG (sandbox/guest/qemu.py); the
child's lifeline (sandbox/app/lifeline.py) watches this parent and the `just`
above it, so a SIGKILL to the parent stops the child as SIGTERM does.
Standard library only: it runs before the Debian packages are checked.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from sandbox.app.signals import STOP_SIGNALS

CHILD_ENV = "Y2038_SUPERVISOR"
"""Set in the child's environment to the parent's pid: the child knows it is
supervised (a `python3 -m sandbox` started further down sees another parent
and supervises itself)."""


def exit_of(returncode: int) -> int:
    """Popen's returncode as a shell shows it: -n (killed by signal n) is 128 + n."""
    return 128 - returncode if returncode < 0 else returncode


def supervised() -> bool:
    """This process is the child of a supervising parent."""
    return os.environ.get(CHILD_ENV) == str(os.getppid())


def supervise(args: list[str]) -> int:
    """Run `sys.executable ARGS` as the child; its exit code, 128 + n for a death by signal n."""
    child: subprocess.Popen[bytes] | None = None
    pending: list[int] = []

    def forward(signum: int, frame: object) -> None:
        if child is None:
            pending.append(signum)  # before the child exists: sent once it does
        else:
            try:
                child.send_signal(signum)
            except ProcessLookupError:
                pass
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored in both
            signal.signal(signum, forward)
    child = subprocess.Popen([sys.executable, *args], env={**os.environ, CHILD_ENV: str(os.getpid())})
    for early in pending:
        child.send_signal(early)
    returncode = child.wait()  # PEP 475: a forwarded signal does not end the wait
    code = exit_of(returncode)
    if returncode < 0 and signal.Signals(-returncode) not in STOP_SIGNALS:  # it could not record itself
        print(f"error: process {child.pid} was killed by {signal.Signals(-returncode).name} (exit {code}): "
              f"not a verdict; a run it left says killed in its run.json (`just report`)", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1:]))
