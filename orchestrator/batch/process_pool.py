"""A pool of worker processes the parent supervises one task at a time.

``concurrent.futures.ProcessPoolExecutor`` cannot stop one task, and when one worker dies the
whole pool is broken. Here each worker runs one task at a time over its own pipe, so the
parent knows which task a worker holds: a worker that dies fails only that task, a task that
runs out of time is stopped by stopping its worker, and a fresh worker takes the next task.

On Linux a worker is forked from the parent when the parent runs a single thread (the normal
case): it starts in milliseconds with the rules, plugins and compiled query the parent already
built, where a spawned interpreter spends a fifth of a second importing and building them
again. With other threads running (a plugin may start some), fork could copy a lock one of
them holds, so the worker is spawned instead, as everywhere else (macOS system libraries are
not fork-safe). A forked worker closes its copies of the other workers' pipe ends at once, so
each worker still sees the end of its own pipe when the parent closes it.

Each worker leads its own process group: a terminal's Ctrl-C reaches only the parent, which
decides what stops, and stopping a worker also stops the git commands it started (git removes
its lock files on SIGTERM). A worker turns SIGTERM into ``SystemExit`` so ``finally`` blocks
(temporary object files, partial clones) are cleaned up on the way out.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Generic, Hashable, Iterable, Optional, TypeVar

#: Seconds a stopped worker gets to clean up before it is killed.
STOP_GRACE = 5.0

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class TaskOutcome:
    """A task's return value, or why it has none (it raised, or its process died)."""

    value: Any = None
    error: Optional[str] = None


#: The worker's collector thresholds (``gc.set_threshold``): young collections 30 times rarer.
WORKER_GC_THRESHOLDS = (20_000, 10, 10)


class PoolLost(Exception):
    """The pool can run nothing any more (a Dask cluster with no worker left): one line, and
    every repository not finished fails with it."""


class _Worker(Generic[K]):
    def __init__(self, others: Iterable[_Worker[K]]) -> None:
        fork = sys.platform.startswith("linux") and _single_threaded()
        context = multiprocessing.get_context("fork") if fork else multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        # Only a forked worker holds copies of the parent's pipe ends (spawn closes them).
        inherited = [self.conn, *(other.conn for other in others)] if fork else []
        self.process = context.Process(target=_serve, args=(child, inherited), daemon=True)
        gc.freeze()  # the parent's objects stay out of the child's collections (fewer copied pages)
        try:
            self.process.start()
        finally:
            gc.unfreeze()
        child.close()
        self.key: Optional[K] = None

    def stop(self) -> None:
        """SIGTERM the worker's process group, then SIGKILL what is left after the grace."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            _signal(self.process.pid, sig)
            self.process.join(STOP_GRACE)
            if self.process.exitcode is not None:
                break
        self.conn.close()


class ProcessPool(Generic[K]):
    """``slots`` worker processes, started as needed; at most one task per worker, known by its
    key ``K``."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        # Not forkserver: its socket path breaks under a long $TMPDIR, and its server would
        # import everything again before the first worker could start.
        self._idle: list[_Worker[K]] = []
        self._busy: dict[K, _Worker[K]] = {}

    def submit(self, key: K, fn: Callable[..., Any], *args: Any) -> None:
        if len(self._busy) >= self.slots:
            raise RuntimeError("every worker is busy")  # the runner never overfills
        worker = self._idle.pop() if self._idle else _Worker(self._busy.values())
        worker.key = key
        self._busy[key] = worker
        worker.conn.send((fn, args))

    def wait(self, timeout: Optional[float]) -> list[tuple[K, TaskOutcome]]:
        """Outcomes of the tasks that ended within ``timeout`` seconds (maybe none)."""
        by_handle: dict[Any, _Worker[K]] = {}
        for worker in self._busy.values():
            by_handle[worker.conn] = by_handle[worker.process.sentinel] = worker
        done: dict[K, TaskOutcome] = {}
        for handle in wait(list(by_handle), timeout):
            worker, key = by_handle[handle], by_handle[handle].key
            if key is not None and key not in done:  # a busy worker's key is never None
                done[key] = self._collect(key, worker)
        return list(done.items())

    def cancel(self, keys: Iterable[K]) -> None:
        """Stop the tasks (by stopping their workers); their outcomes never come."""
        for key in keys:
            worker = self._busy.pop(key, None)
            if worker is not None:
                worker.stop()

    def close(self) -> None:
        """Stop running tasks, let idle workers exit."""
        self.cancel(list(self._busy))
        for worker in self._idle:  # every worker told first, so they exit side by side
            worker.conn.close()
        for worker in self._idle:
            worker.process.join(STOP_GRACE)
        self._idle.clear()

    def __enter__(self) -> ProcessPool[K]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _collect(self, key: K, worker: _Worker[K]) -> TaskOutcome:
        del self._busy[key]
        try:
            outcome: TaskOutcome = worker.conn.recv()  # what _serve sends
        except (EOFError, OSError):
            worker.process.join(STOP_GRACE)
            worker.conn.close()
            return TaskOutcome(error=f"worker process died ({_exit_reason(worker.process.exitcode)})")
        worker.key = None
        self._idle.append(worker)
        return outcome


def _single_threaded() -> bool:
    """One thread in this process, counting those a C library started (Linux lists every
    thread under /proc/self/task; elsewhere only Python's threads can be counted)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return threading.active_count() == 1


def _signal(pid: Optional[int], sig: int) -> None:
    if pid is None:  # never started
        return
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # not (yet) its own group leader, or already gone
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _exit_reason(code: Optional[int]) -> str:
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _serve(conn: Connection, inherited: Iterable[Connection] = ()) -> None:
    """Worker loop: one ``(fn, args)`` in, one :class:`TaskOutcome` out, until the pipe closes."""
    for other in inherited:  # a forked worker's copies of the parent's pipe ends
        other.close()
    os.setpgrp()
    # The engine and the analysis pause the collector per file and free their trees without
    # it; what it still collects between files is little, and with the default threshold
    # (700) it ran hundreds of young collections over the rules' long-lived objects.
    gc.set_threshold(*WORKER_GC_THRESHOLDS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit)
    while True:
        try:
            fn, args = conn.recv()
        except EOFError:
            return
        try:
            outcome = TaskOutcome(value=fn(*args))
        except Exception as exc:  # the pipeline never raises; this is the last resort
            outcome = TaskOutcome(error=f"{type(exc).__name__}: {exc}")
        try:
            conn.send(outcome)
        except Exception as exc:  # an unpicklable value must not kill the worker silently
            conn.send(TaskOutcome(error=f"cannot return the result: {type(exc).__name__}: {exc}"))


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
