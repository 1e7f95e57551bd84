"""What the PR lifecycle asks of git (``npu-codemod prs``): does a branch still differ from its
base, and replacing a remote branch only if nobody moved it meanwhile."""

from __future__ import annotations

from typing import Mapping, Optional

import git
from git.exc import GitCommandError

from npu_codemod.orchestrator.git.repository import (
    NON_INTERACTIVE,
    RECEIVE_PACK,
    GitError,
    NoSuchRemote,
    _stderr,
)


def base_has_the_changes(repo: git.Repo, base: str, tip: str) -> bool:
    """Whether every file ``tip`` changed since it left ``base``'s history is, at ``base``'s
    tip, exactly as on ``tip``: the branch no longer differs from the base where it matters."""
    try:
        fork = repo.git.merge_base(base, tip).strip()
        paths = [p for p in repo.git.diff("--name-only", "-z", fork, tip).split("\0") if p]
        if not paths:
            return True
        repo.git.diff("--quiet", base, tip, "--", *paths)
    except GitCommandError as exc:
        if exc.status == 1:  # git diff --quiet: they differ
            return False
        raise GitError(f"cannot compare {tip[:12]} with {base[:12]}: {_stderr(exc)}") from None
    return True


def push_with_lease(repo: git.Repo, remote: str, branch: str, expected: Optional[str],
                    access: Optional[Mapping[str, str]] = None) -> None:
    """Force-push ``branch`` to ``remote`` only while the remote branch is at ``expected``:
    a commit someone pushed meanwhile is never overwritten (git refuses: GitError)."""
    if remote not in {r.name for r in repo.remotes}:
        raise NoSuchRemote(f"no remote named {remote!r}")
    lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
    try:
        repo.git.push("--porcelain", RECEIVE_PACK, lease, remote, f"refs/heads/{branch}:refs/heads/{branch}",
                      env={**NON_INTERACTIVE, **(access or {})})
    except GitCommandError as exc:
        raise GitError(f"push to {remote} rejected: {_stderr(exc)}") from None
