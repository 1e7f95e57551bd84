"""The same per-repo tasks on an existing Dask distributed cluster (``--executor dask``).

Workers import npu-codemod themselves and must see the same paths as this machine: the
repositories of the list and ``--workspace`` (local paths are resolved before the tasks are
sent). A task that raises or whose worker dies fails only its repository. ``--repo-timeout``
fails the repository on time; Dask cannot stop a running task, so the cancelled task may go
on in its worker until it ends on its own.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Hashable, Iterable, Optional, TypeVar

from distributed import Client, wait

from npu_codemod.orchestrator.batch.process_pool import TaskOutcome

K = TypeVar("K", bound=Hashable)


class DaskPool(Generic[K]):
    """One slot per worker thread of the cluster; a task is known by its key ``K``."""

    def __init__(self, address: str) -> None:
        self._client = Client(address, timeout="20s")
        self.slots = max(1, sum(self._client.nthreads().values()))
        self._futures: dict[Any, K] = {}

    def submit(self, key: K, fn: Callable[..., Any], *args: Any) -> None:
        self._futures[self._client.submit(fn, *args, pure=False)] = key

    def wait(self, timeout: Optional[float]) -> list[tuple[K, TaskOutcome]]:
        try:
            done, _ = wait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return [(self._futures.pop(future), _outcome(future)) for future in done]

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
