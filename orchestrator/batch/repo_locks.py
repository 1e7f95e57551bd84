"""The lock of one repository's migration branch, held by the run while it works on it.

Two runs on the same repository would otherwise race on the branch (git's ``cannot lock
ref``, or a branch moved under the other run's feet) and on a cached clone's fetch. The lock
is taken before anything reads the branch (for a URL, before the clone is fetched) and
released when the repository ends: by the worker that finishes it, or by the batch when a
worker died or ran out of time. Its owner is the run (the orchestrating process), not the
worker, so a large repository's shards and finish, on other workers, run under the same lock.

Where: a local repository's lock is in its git folder (``npu-codemod-<branch>.lock``, next to
git's own ``*.lock`` files; any workspace, any report dir), a URL's next to its clone in the
workspace cache. ``scan`` and ``--dry-run`` never move a branch: they lock only a URL's clone
(they fetch into it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from npu_codemod.orchestrator.batch import locks
from npu_codemod.orchestrator.batch.jobs import RepoJob
from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.repository import GitError
from npu_codemod.orchestrator.git.workspace import Workspace


def needs_lock(job: RepoJob) -> bool:
    return job.lock_owner is not None and (job.entry.is_url or (job.mode == "run" and not job.dry_run))


def lock_path(job: RepoJob, git_dir: Optional[str] = None) -> Path:
    """The lock file of ``job``'s branch; ``git_dir``: the local repository's common git dir."""
    name = re.sub(r"[^\w.-]+", "-", job.branch).strip("-.") or "branch"
    if job.entry.is_url:
        clone = Workspace(job.workspace).clone_path(job.entry.location)
        try:
            clone.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:  # as the workspace says it (--workspace names a file, ...)
            raise GitError(f"cannot create the workspace folder {clone.parent}: {exc.strerror}") from None
        return clone.with_name(f"{clone.name}.{name}.lock")
    if git_dir is None:
        git_dir = str(gitrepo.open_repo(job.entry.location).common_dir)
    return Path(git_dir) / f"npu-codemod-{name}.lock"


def lock_branch(job: RepoJob, git_dir: Optional[str] = None) -> None:
    """Take the branch lock for the run (``--wait``: until the other run lets go); GitError
    naming the other run when it holds the branch."""
    if not needs_lock(job):
        return
    assert job.lock_owner is not None
    path = lock_path(job, git_dir)
    try:
        locks.acquire(path, job.lock_owner, job.wait)
    except locks.Locked as exc:
        raise GitError(f"branch {job.branch} is being worked on by another npu-codemod run "
                       f"({exc.owner.describe() if exc.owner else '?'}): rerun once it has "
                       f"ended, or pass --wait ({locks.delete_hint(path)})") from None
    except OSError as exc:
        raise GitError(f"cannot lock branch {job.branch}: {exc.strerror}: {exc.filename}") from None


def refresh_branch_lock(job: RepoJob) -> None:
    """The run's heartbeat on ``job``'s branch lock, if it holds it (:func:`locks.refresh`)."""
    if not needs_lock(job):
        return
    assert job.lock_owner is not None
    try:
        locks.refresh(lock_path(job), job.lock_owner)
    except (OSError, GitError):
        pass


def unlock_branch(job: RepoJob, git_dir: Optional[str] = None) -> None:
    """Release the run's branch lock (nothing when another run holds it, or none exists)."""
    if not needs_lock(job):
        return
    assert job.lock_owner is not None
    try:
        locks.release(lock_path(job, git_dir), job.lock_owner)
    except (OSError, GitError):  # the repository went away meanwhile: nothing to release
        pass
