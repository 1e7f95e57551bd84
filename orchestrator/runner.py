"""Running repo jobs in parallel (a process pool) with one tqdm bar; serial is a pool of one."""

from __future__ import annotations

import sys
from collections import Counter
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from typing import Callable, Iterator, Sequence

from tqdm import tqdm

from .pipeline import RepoJob, process_repo
from .results import RepoResult


class InlineExecutor(Executor):
    """A pool of one that runs in this process: same code path, no pickling, easy debugging."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # pragma: no cover - process_repo never raises
            future.set_exception(exc)
        return future


def run_jobs(
    jobs: Sequence[RepoJob],
    workers: int,
    on_result: Callable[[RepoResult], None] = lambda result: None,
    progress: bool = True,
) -> list[RepoResult]:
    """Process every job; results come back in the order of ``jobs``."""
    results: dict[int, RepoResult] = {}
    counts: Counter[str] = Counter()
    with _executor(workers, len(jobs)) as executor, tqdm(
        total=len(jobs), desc="repos", unit="repo", file=sys.stderr, disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for index, result in _completed(executor, jobs):
            results[index] = result
            counts[result.status] += 1
            bar.set_postfix_str(
                f"{result.repo[-30:]} | changed {counts['changed']} unchanged "
                f"{counts['unchanged']} failed {counts['failed']}", refresh=False)
            bar.update()
            on_result(result)
    return [results[index] for index in range(len(jobs))]


def _executor(workers: int, job_count: int) -> Executor:
    if workers <= 1 or job_count <= 1:
        return InlineExecutor()
    return ProcessPoolExecutor(max_workers=min(workers, job_count))


def _completed(executor: Executor, jobs: Sequence[RepoJob]) -> Iterator[tuple[int, RepoResult]]:
    futures = {executor.submit(process_repo, job): index for index, job in enumerate(jobs)}
    for future in as_completed(futures):
        yield futures[future], future.result()
