"""Peak memory (VmHWM) of a process tree, sampled from /proc while it runs (Linux only)."""

from __future__ import annotations

import os
import threading
from typing import Optional


class PeakRss:
    """Polls a process and its descendants; keeps each one's high-water RSS in MB.

    VmHWM is the kernel's own peak, so sampling only has to see a process once before it
    exits; worker pools live for the whole run.
    """

    def __init__(self, root_pid: int, interval: float = 0.05) -> None:
        self.root_pid = root_pid
        self.interval = interval
        self.peaks: dict[int, tuple[str, float]] = {}  # pid -> (role, MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> "PeakRss":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def peak(self, role: str) -> Optional[float]:
        values = [mb for kind, mb in self.peaks.values() if kind == role]
        return max(values) if values else None

    def _poll(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def _sample(self) -> None:
        for pid in _descendants(self.root_pid):
            status = _status(pid)
            if status is None or "VmHWM" not in status:
                continue
            mb = int(status["VmHWM"].split()[0]) / 1024
            if pid == self.root_pid:
                role = "orchestrator"
            elif status.get("Name", "").startswith("python"):  # pool workers (and a forkserver)
                role = "worker"
            else:
                role = status.get("Name", "other")
            old = self.peaks.get(pid, (role, 0.0))[1]
            self.peaks[pid] = (role, max(old, mb))


def _descendants(root: int) -> list[int]:
    """``root`` and its descendants, from the kernel's per-thread child lists: a few small
    reads per sample, where parsing every process's status took a few ms of the CPU the
    measured run needs (on 2 cores, --jobs 2 has none to spare)."""
    found, frontier = [root], [root]
    while frontier:
        frontier = [child for pid in frontier for child in _children(pid)]
        found += frontier
    return found


def _children(pid: int) -> list[int]:
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    children = []
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children") as handle:
                children += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return children


def _status(pid: int) -> Optional[dict[str, str]]:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return dict(line.rstrip("\n").split(":\t", 1) for line in handle if ":\t" in line)
    except OSError:
        return None
