"""SIGTERM is handled like Ctrl-C: the same clean stop, one line, exit code 128 + signal.

A batch killed by a CI timeout or ``kill`` must stop its workers and leave repositories and
reports whole, exactly as after Ctrl-C; the default SIGTERM action would end the parent at
once and leave its workers running on their own.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class Terminated(KeyboardInterrupt):
    """A termination signal, raised where the main thread is (like KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (only the main thread can)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupt_exit_code(exc: KeyboardInterrupt) -> int:
    """128 + the signal number, as a shell reports a process ended by that signal."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)
