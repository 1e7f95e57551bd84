"""Locks between runs: one run at a time per report dir and per repository branch.

A lock is a small file naming its owner, the run (``pid``, the process's start time as the
kernel counts it, the host, and when the run started), created atomically: the owner's line
is written to a private file first and hard-linked into place, so a reader never sees a
half-written lock and two runs can never both create it. A lock whose owner process is gone
(no such pid, or the pid now belongs to a process that started at another time) is stale and
taken over; taking one over happens under ``flock`` of the folder that holds it, after
reading it again, so two runs never both take over the same stale lock.

A lock of another host cannot be judged by its pid: the run holding it beats a heartbeat
instead, touching the file every :data:`HEARTBEAT_SECONDS` (:func:`refresh`), and a lock of
another host not touched for :data:`EXPIRY_SECONDS` (a killed CI pod's) has expired and is
taken over. A refusal names the lock file, to delete by hand if its run is known to be gone.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import socket
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

#: How often a run that ``--wait``\\ s looks at a lock again.
POLL_SECONDS = 0.2
#: How often a run touches the locks it holds; after how long without a touch another
#: host's lock has expired (its run died without removing it).
HEARTBEAT_SECONDS = 60.0
EXPIRY_SECONDS = 600.0


@dataclass(frozen=True)
class LockOwner:
    """The run that holds a lock (picklable: a batch hands it to its workers)."""

    pid: int
    ticks: Optional[int]  # the process's start time in clock ticks since boot (Linux), or None
    host: str
    started: str  # when the run started, for people

    @classmethod
    def of_this_process(cls) -> "LockOwner":
        started = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
        return cls(os.getpid(), process_ticks(os.getpid()), socket.gethostname(), started)

    def describe(self) -> str:
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"pid {self.pid}{where}, started {self.started}"

    def is_alive(self) -> bool:
        """Whether the owner process still runs (always True for another host's)."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            pass
        ticks = process_ticks(self.pid)
        return self.ticks is None or ticks is None or ticks == self.ticks


class Locked(Exception):
    """The lock is held by another live run: ``owner``."""

    def __init__(self, path: Path, owner: Optional[LockOwner]) -> None:
        super().__init__(f"{path} is held by {owner.describe() if owner else 'another run'}")
        self.path, self.owner = path, owner


def delete_hint(path: Path) -> str:
    """What a refusal says about the lock file itself."""
    return f"lock file {path}: delete it if that run is gone"


def expired(path: Path, owner: LockOwner, now: Optional[float] = None) -> bool:
    """Whether another host's lock at ``path`` has had no heartbeat for :data:`EXPIRY_SECONDS`."""
    if owner.host == socket.gethostname():
        return False  # judged by its pid
    try:
        touched = path.stat().st_mtime
    except OSError:
        return False
    return (time.time() if now is None else now) - touched > EXPIRY_SECONDS


def refresh(path: Path, owner: LockOwner) -> None:
    """The heartbeat: touch ``path`` if it is ``owner``'s lock (never another run's)."""
    try:
        if read_owner(path) == owner:
            os.utime(path)
    except OSError:  # gone meanwhile: nothing to keep alive
        pass


def process_ticks(pid: int) -> Optional[int]:
    """Field 22 of ``/proc/PID/stat`` (start time); None where there is no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # the command name may hold spaces and ')'
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def read_owner(path: Path) -> Optional[LockOwner]:
    """The owner a lock file names; None when there is no lock (or it is unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LockOwner(int(data["pid"]), data.get("ticks"), str(data["host"]), str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def try_lock(path: Path, owner: LockOwner) -> Optional[LockOwner]:
    """Take the lock at ``path`` for ``owner``: None when taken (or already ``owner``'s),
    else the live owner that holds it. A stale lock is taken over."""
    for _ in range(3):  # a lock released or taken over between two steps: look again
        if _create(path, owner):
            return None
        holder = read_owner(path)
        if holder == owner:
            return None
        if holder is not None and holder.is_alive() and not expired(path, holder):
            return holder
        _remove_if(path, holder)
    return read_owner(path) or LockOwner(0, None, "?", "?")


def acquire(path: Path, owner: LockOwner, wait: bool = False,
            sleep: Callable[[float], None] = time.sleep) -> None:
    """Take the lock; with ``wait``, until the other run ends; else raise :class:`Locked`."""
    while True:
        holder = try_lock(path, owner)
        if holder is None:
            return
        if not wait:
            raise Locked(path, holder)
        sleep(POLL_SECONDS)


def release(path: Path, owner: LockOwner) -> None:
    """Remove the lock if it is ``owner``'s (never another run's)."""
    _remove_if(path, owner)


@contextmanager
def held(path: Path, owner: LockOwner, wait: bool = False) -> Iterator[None]:
    acquire(path, owner, wait)
    try:
        yield
    finally:
        release(path, owner)


def _create(path: Path, owner: LockOwner) -> bool:
    """Link a complete file holding ``owner`` to ``path``; False when ``path`` exists."""
    private = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}")
    private.write_text(json.dumps(asdict(owner)), encoding="utf-8")
    try:
        os.link(private, path)
        return True
    except FileExistsError:
        return False
    finally:
        private.unlink()


def _remove_if(path: Path, expected: Optional[LockOwner]) -> None:
    """Remove ``path`` if it still names ``expected`` (None: an unreadable lock), under the
    folder's flock, so that a lock another run has just made is never removed."""
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if path.exists() and read_owner(path) == expected:
            path.unlink()
    finally:
        os.close(fd)  # also releases the flock
