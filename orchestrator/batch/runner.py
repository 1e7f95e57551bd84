"""Running repo jobs on a pool of workers, with one tqdm bar.

A repository is started on a worker (:func:`pipeline.start_repo`); a small one is finished
there, a large one comes back as shards that go to every free worker before any new
repository starts (first to be analysed, then, with the joined facts, to be rewritten), and
then to one finishing task. At most one task per worker is handed out,
so a task starts when it is handed out: that is when a repository's ``--repo-timeout`` clock
starts, and what keeps memory bounded (only the repositories in flight hold plans).
A task that raises, a worker that dies, or a repository out of time ends as that repository's
``failed`` result; the batch goes on. Results are the same whatever the number of workers.
None is kept here: each goes to the caller as it ends, so memory does not grow with the batch.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter, deque
from typing import Any, Callable, Hashable, Iterable, Iterator, Optional, Protocol, Sequence, TypeVar

from npu_codemod.orchestrator.batch.jobs import RepoJob, ShardedRepo, ShardOutput
from npu_codemod.orchestrator.batch.locks import HEARTBEAT_SECONDS
from npu_codemod.orchestrator.batch.pipeline import (
    finish_repo,
    process_shard,
    shard_facts,
    start_repo,
    with_shard_facts,
)
from npu_codemod.orchestrator.batch.process_pool import PoolLost, TaskOutcome
from npu_codemod.orchestrator.batch.progress import ProgressBar
from npu_codemod.orchestrator.batch.repo_locks import unlock_branch
from npu_codemod.orchestrator.loaded_rules import RepoAnalysis
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.results import RepoResult, deferred, failed

K = TypeVar("K", bound=Hashable)
#: A task's key in the pool: (repo index, step, shard number).
Key = tuple[int, str, int]


class Pool(Protocol[K]):
    """Where tasks run: :class:`process_pool.ProcessPool` or :class:`dask_pool.DaskPool`.

    A task is known by its key ``K``; ``with pool:`` closes the pool (running tasks stopped)."""

    slots: int

    def submit(self, key: K, fn: Callable[..., Any], *args: Any) -> None: ...

    def wait(self, timeout: Optional[float]) -> list[tuple[K, TaskOutcome]]: ...

    def cancel(self, keys: Iterable[K]) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Pool[K]: ...

    def __exit__(self, *exc_info: object) -> None: ...


def run_jobs(
    jobs: Sequence[RepoJob],
    pool: Pool[Key],
    on_result: Callable[[int, RepoResult], None],
    progress: bool = True,
    repo_timeout: Optional[float] = None,
    deferral: Callable[[], Optional[str]] = lambda: None,
    heartbeat: Callable[[Sequence[int]], None] = lambda in_flight: None,
) -> None:
    """Process every job; each result goes to ``on_result`` with its job's index as it ends
    (in the order repositories finish, not the order of ``jobs``). Once ``deferral`` gives a
    reason, no repository starts any more: those left end ``deferred`` with that reason."""
    with ProgressBar(len(jobs), progress) as bar:
        batch = _Batch(jobs, pool, repo_timeout, on_start=bar.started, on_files=bar.add_files)
        batch.deferral, batch.heartbeat = deferral, heartbeat
        for index, result in batch:
            bar.ended(index, result.status)
            on_result(index, result)


#: A task not handed out yet: its key, the function, its arguments.
_Task = tuple[Key, Callable[..., Any], tuple[Any, ...]]


class _Batch:
    """The scheduling state of one run: which task of which repository runs where."""

    def __init__(self, jobs: Sequence[RepoJob], pool: Pool[Key], timeout: Optional[float],
                 on_start: Callable[[int, str], None], on_files: Callable[[int], Any]) -> None:
        self.jobs, self.pool, self.timeout, self.on_start = jobs, pool, timeout, on_start
        self.on_files = on_files  # progress: files done, as shards and repositories end
        self.files_counted: Counter[int] = Counter()  # per repository, from its shards
        self.unstarted = deque(range(len(jobs)))
        self.ready: deque[_Task] = deque()  # started repositories' next tasks
        self.running: set[Key] = set()
        self.deadlines: dict[int, float] = {}
        self.sharded: dict[int, ShardedRepo] = {}
        self.outputs: dict[int, dict[int, ShardOutput]] = {}
        self.analyses: dict[int, dict[int, RepoAnalysis]] = {}  # of shards not rewritten yet
        self.done: set[int] = set()
        self.deferral: Callable[[], Optional[str]] = lambda: None
        self.deferred: list[tuple[int, RepoResult]] = []  # not started: ended as deferred
        #: Called every HEARTBEAT_SECONDS with the repositories in flight (their locks live).
        self.heartbeat: Callable[[Sequence[int]], None] = lambda in_flight: None
        self.last_beat = time.monotonic()

    def __iter__(self) -> Iterator[tuple[int, RepoResult]]:
        self._fill()
        while len(self.done) < len(self.jobs) or self.deferred:
            ended, self.deferred = self.deferred, []  # repositories that will not start
            if self.running:
                try:
                    outcomes = self.pool.wait(self._time_left())
                except PoolLost as exc:  # nothing can run any more: every repository left fails
                    yield from ended
                    yield from self._abandon(str(exc))
                    return
                for key, outcome in outcomes:
                    self.running.discard(key)
                    if key[0] not in self.done:
                        ended.extend(self._take(key, outcome))
                ended.extend(self._expire())
                self._beat()
                # Workers get their next task before the caller handles these results
                # (reports, hooks): a worker never waits on the parent.
                self._fill()
            yield from ended

    def _fill(self) -> None:
        reason = self.deferral() if self.unstarted else None
        while reason and self.unstarted:
            index = self.unstarted.popleft()
            self.deferred.append(self._end(index, deferred(self.jobs[index].entry, reason)))
        while len(self.running) < self.pool.slots and (self.ready or self.unstarted):
            if self.ready:
                key, fn, args = self.ready.popleft()
            else:
                index = self.unstarted.popleft()
                self.deadlines[index] = time.monotonic() + (self.timeout or math.inf)
                self.on_start(index, self.jobs[index].entry.name)
                key, fn, args = (index, "start", 0), start_repo, (self.jobs[index], self.pool.slots, True)
            self.pool.submit(key, fn, *args)
            self.running.add(key)

    def _take(self, key: Key, outcome: TaskOutcome) -> Iterator[tuple[int, RepoResult]]:
        index, step, number = key
        value = outcome.value
        if outcome.error is not None:
            yield self._fail(index, f"crashed: {mask_secrets(outcome.error)}")
        elif isinstance(value, RepoResult):
            if step in ("analyze", "shard"):  # a shard failed the repository: no finish
                unlock_branch(self.jobs[index])
            yield self._end(index, value)
        elif isinstance(value, ShardedRepo):
            self._sharded(index, value)
        elif step == "analyze":
            parts, sharded = self.analyses[index], self.sharded[index]
            parts[number] = value
            if len(parts) == len(sharded.shards):
                del self.analyses[index]
                self._sharded(index, with_shard_facts(sharded, [parts[n] for n in range(len(parts))]))
        else:
            outputs, sharded = self.outputs[index], self.sharded[index]
            outputs[number] = value
            self._count_files(index, len(sharded.shards[number]))
            if len(outputs) == len(sharded.shards):
                ordered = [outputs[n] for n in range(len(outputs))]
                self.ready.append(((index, "finish", 0), finish_repo, (sharded.plan, ordered)))

    def _sharded(self, index: int, value: ShardedRepo) -> None:
        """Queue the shards of a repository: to be analysed first when they are not yet."""
        self.sharded[index] = value
        if value.unanalysed is not None:
            self.analyses[index] = {}
            self.ready.extend(((index, "analyze", n), shard_facts, (value.plan, files))
                              for n, files in enumerate(value.shards))
            return
        self.outputs[index] = {}
        self.ready.extend(((index, "shard", n), process_shard, (value.plan, files))
                          for n, files in enumerate(value.shards))

    def _count_files(self, index: int, count: int) -> None:
        self.files_counted[index] += count
        self.on_files(count)

    def _expire(self) -> Iterator[tuple[int, RepoResult]]:
        now = time.monotonic()
        for index in [i for i, deadline in self.deadlines.items() if deadline <= now]:
            yield self._fail(index, f"timed out after {self.timeout:g} s (--repo-timeout)")

    def _time_left(self) -> float:
        """Until the next deadline or heartbeat, whichever comes first."""
        now = time.monotonic()
        beat = max(0.0, self.last_beat + HEARTBEAT_SECONDS - now)
        if not self.timeout or not self.deadlines:
            return beat
        return min(beat, max(0.0, min(self.deadlines.values()) - now))

    def _beat(self) -> None:
        if time.monotonic() - self.last_beat >= HEARTBEAT_SECONDS:
            self.last_beat = time.monotonic()
            self.heartbeat(sorted(self.deadlines))  # started, not ended

    def _abandon(self, reason: str) -> Iterator[tuple[int, RepoResult]]:
        """Fail every repository not finished with ``reason``, said once on stderr."""
        print(f"npu-codemod: {reason}", file=sys.stderr)
        for index in range(len(self.jobs)):
            if index not in self.done:
                yield self._fail(index, reason)

    def _fail(self, index: int, reason: str) -> tuple[int, RepoResult]:
        ended = self._end(index, failed(self.jobs[index].entry, reason))  # stops its tasks
        unlock_branch(self.jobs[index])  # which may have held it
        return ended

    def _end(self, index: int, result: RepoResult) -> tuple[int, RepoResult]:
        """Mark the repository done; stop and forget whatever else of it is pending."""
        self.done.add(index)
        self.on_files(max(0, result.files_scanned - self.files_counted.pop(index, 0)))
        self.deadlines.pop(index, None)
        self.sharded.pop(index, None)
        self.outputs.pop(index, None)
        self.analyses.pop(index, None)
        mine = [key for key in self.running if key[0] == index]
        self.pool.cancel(mine)
        self.running.difference_update(mine)
        self.ready = deque(task for task in self.ready if task[0][0] != index)
        return index, result
