"""The scheduler hands a worker its next task before the parent handles the last result."""

from __future__ import annotations

from npu_codemod.orchestrator.batch.jobs import RepoJob
from npu_codemod.orchestrator.batch.process_pool import TaskOutcome
from npu_codemod.orchestrator.batch.runner import run_jobs
from npu_codemod.orchestrator.repolist import RepoEntry


class InlinePool:
    """Runs each task at submit, in this process; records what happens when."""

    slots = 1

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.outcomes: dict = {}

    def submit(self, key, fn, *args) -> None:
        self.events.append(f"submit {key[0]}")
        self.outcomes[key] = TaskOutcome(value=fn(*args))

    def wait(self, timeout):
        done, self.outcomes = list(self.outcomes.items()), {}
        return done

    def cancel(self, keys) -> None:
        for key in keys:
            self.outcomes.pop(key, None)


def test_next_task_is_submitted_before_the_result_is_handled() -> None:
    events: list[str] = []
    jobs = [RepoJob(entry=RepoEntry(f"r{i}", f"/nowhere/r{i}", error="bad line")) for i in range(3)]
    indexes: list[int] = []

    def on_result(index, result) -> None:
        indexes.append(index)
        events.append(f"result {result.repo}")

    run_jobs(jobs, InlinePool(events), on_result, progress=False)
    assert indexes == [0, 1, 2]
    assert events == ["submit 0", "submit 1", "result r0", "submit 2", "result r1", "result r2"]
