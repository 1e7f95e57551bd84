"""The run's one sequence of training steps, shared by every process of the command.

A script that trains twice (``fit``, then a custom loop), or a command that starts several
Python processes, numbers its training steps once: step 11 is the eleventh training step of
the run, whichever process ran it, and the step limit counts them all. The count is a file
in the record folder, read and written under a lock (``fcntl``; where there is none, each
process counts alone).
"""

import os

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux or macOS
    fcntl = None  # type: ignore[assignment]

#: The file holding the number of training steps the run has taken.
COUNT_FILE = "training-steps"


class StepCount:
    """The run's training steps so far, in ``folder``."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, COUNT_FILE)
        self.alone = 0  # the count, where no lock can share it

    def next(self) -> int:
        """Count one training step of the run; its number."""
        if fcntl is None:
            self.alone += 1
            return self.alone
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            number = _read(descriptor) + 1
            os.lseek(descriptor, 0, os.SEEK_SET)
            os.ftruncate(descriptor, 0)
            os.write(descriptor, str(number).encode())
            return number
        finally:
            os.close(descriptor)

    def current(self) -> int:
        """The training steps the run has taken."""
        if fcntl is None:
            return self.alone
        try:
            descriptor = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH)
            return _read(descriptor)
        finally:
            os.close(descriptor)


def _read(descriptor: int) -> int:
    os.lseek(descriptor, 0, os.SEEK_SET)
    text = os.read(descriptor, 32).decode() or "0"
    return int(text) if text.isdigit() else 0
