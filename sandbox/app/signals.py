"""A signal ends a run at once: the command line and the pytest plugin
install these handlers, so SIGINT, SIGTERM or SIGHUP unwinds the main thread
(every `with` block stops its QEMU, the runner records the run as
interrupted) and the process exits 128 + the signal's number."""
from __future__ import annotations

import signal

from sandbox.base.errors import Interrupted

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each ends a run at once: QEMU stopped, the run recorded as interrupted,
exit code 128 + the signal's number (130, 143, 129)."""


def _on_signal(signum: int, frame: object) -> None:
    """The first signal unwinds the main thread; later ones are ignored
    while that clean-up, a few seconds at most, runs."""
    for other in STOP_SIGNALS:
        signal.signal(other, lambda *_: None)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup's SIGHUP stays ignored
            signal.signal(signum, _on_signal)
