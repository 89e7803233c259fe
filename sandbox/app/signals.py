"""A signal ends a run at once: the command line and the pytest plugin
install these handlers, so every fatal signal Python can catch unwinds the
main thread (every `with` block stops its QEMU, the runner records the run as
interrupted, with the signal's name) and the process exits 128 + the
signal's number. What Python cannot catch (SIGKILL, a crash) the parent of
sandbox/app/supervisor.py maps to 128 + n the same way."""
from __future__ import annotations

import signal

from sandbox.base.errors import Interrupted

FATAL_SIGNALS: dict[signal.Signals, str] = {
    signal.SIGINT: "Ctrl-C at the terminal (130)",
    signal.SIGTERM: "kill, a CI runner's timeout, systemd's stop (143)",
    signal.SIGHUP: "the terminal closed (129)",
    signal.SIGQUIT: "Ctrl-\\ at the terminal; its default would dump core (131)",
    signal.SIGUSR1: "a user's signal; its default ends the process (138)",
    signal.SIGUSR2: "a user's signal; its default ends the process (140)",
    signal.SIGALRM: "a stray alarm; its default ends the process (142)",
    signal.SIGVTALRM: "a virtual timer; its default ends the process (154)",
    signal.SIGXCPU: "the CPU-time limit (ulimit -t) reached (152)",
    signal.SIGPWR: "a power failure from a UPS daemon (158)",
}
"""Every signal whose default action ends the process and that Python can
catch, with where it comes from. Left out: SIGKILL and SIGSTOP (no handler is
possible), SIGPIPE and SIGXFSZ (Python ignores them: a write fails with an
error instead), SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT and SIGSYS (a crash
of the interpreter itself, not a request to stop; no Python code can run
after them), SIGPROF (profilers use it). The parent maps each of those to
128 + n (sandbox/app/supervisor.py)."""

STOP_SIGNALS = tuple(FATAL_SIGNALS)
received: list[int] = []
"""The signal that stopped this process, once one did (for the pytest
plugin, whose session exits 2 on any interruption: it makes that 128 + n)."""


def exit_code_of(signum: int) -> int:
    return 128 + signum


def _on_signal(signum: int, frame: object) -> None:
    """The first signal unwinds the main thread; later ones are ignored
    while that clean-up, a few seconds at most, runs."""
    for other in STOP_SIGNALS:
        signal.signal(other, lambda *_: None)
    received.append(signum)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(signum, _on_signal)
