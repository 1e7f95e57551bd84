"""Children that a test interrupts with SIGINT, as Ctrl-C would."""

from __future__ import annotations

import signal


def interruptible() -> None:
    """``preexec_fn`` of such a child: SIGINT back to its default action. A process started
    with SIGINT ignored keeps ignoring it, and Python then installs no KeyboardInterrupt
    handler; a test runner started as a background job of a non-interactive shell (as some
    CI runners start it) has SIGINT ignored, and every child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
