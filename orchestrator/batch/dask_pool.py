"""The same per-repo tasks on an existing Dask distributed cluster (``--executor dask``).

Workers import npu-codemod themselves and must see the same paths as this machine: the
repositories of the list and ``--workspace`` (local paths are resolved before the tasks are
sent). A task that raises or whose worker dies fails only its repository. ``--repo-timeout``
fails the repository on time; Dask cannot stop a running task, so the cancelled task may go
on in its worker until it ends on its own. A cluster that has had no worker at all for
``no_workers_grace`` seconds (all of them died, none was ever started) ends the batch with
one line (:class:`PoolLost`): its tasks would wait forever.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Generic, Hashable, Iterable, Optional, TypeVar

from distributed import Client, wait

from npu_codemod.orchestrator.batch.process_pool import PoolLost, TaskOutcome

K = TypeVar("K", bound=Hashable)
#: How long a cluster may have no worker before the batch ends (an adaptive cluster scaling
#: up from zero gets that long to start one).
NO_WORKERS_GRACE = 60.0
#: How often a waiting batch asks the scheduler how many workers it has.
POLL_SECONDS = 2.0


class DaskPool(Generic[K]):
    """One slot per worker thread of the cluster; a task is known by its key ``K``."""

    def __init__(self, address: str, no_workers_grace: float = NO_WORKERS_GRACE) -> None:
        self._address, self._grace = address, no_workers_grace
        self._client = Client(address, timeout="20s")
        self.slots = max(1, sum(self._client.nthreads().values()))
        self._futures: dict[Any, K] = {}
        self._no_workers_since: Optional[float] = None

    def submit(self, key: K, fn: Callable[..., Any], *args: Any) -> None:
        self._futures[self._client.submit(fn, *args, pure=False)] = key

    def wait(self, timeout: Optional[float]) -> list[tuple[K, TaskOutcome]]:
        """The tasks ended within ``timeout`` (None: until one ends); PoolLost when the
        cluster has had no worker for longer than the grace."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            left = POLL_SECONDS if end is None else min(POLL_SECONDS, max(0.0, end - time.monotonic()))
            try:
                done, _ = wait(list(self._futures), timeout=left, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            if done:
                return [(self._futures.pop(future), _outcome(future)) for future in done]
            self._check_workers()
            if end is not None and time.monotonic() >= end:
                return []

    def _check_workers(self) -> None:
        try:
            workers = len(self._client.nthreads())
        except (OSError, TimeoutError) as exc:
            raise PoolLost(f"lost the Dask scheduler at {self._address}: {exc}") from None
        now = time.monotonic()
        if workers:
            self._no_workers_since = None
            return
        self._no_workers_since = self._no_workers_since or now
        if now - self._no_workers_since >= self._grace:
            raise PoolLost(f"the Dask cluster at {self._address} has had no worker for "
                           f"{self._grace:g} s (all died, or none started): the batch stops")

    def cancel(self, keys: Iterable[K]) -> None:
        wanted = set(keys)
        for future, key in list(self._futures.items()):
            if key in wanted:
                del self._futures[future]
                future.cancel()

    def close(self) -> None:
        self.cancel(list(self._futures.values()))
        self._client.close()

    def __enter__(self) -> DaskPool[K]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _outcome(future: Any) -> TaskOutcome:
    if future.status == "finished":
        return TaskOutcome(value=future.result())
    error = future.exception()
    return TaskOutcome(error=f"{type(error).__name__}: {error}")
