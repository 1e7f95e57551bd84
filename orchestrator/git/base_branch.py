"""Which branch a repository's migration starts from, and which branch it must never be.

Without a base ref in the repo list the base is the checkout's ``HEAD``, unless ``HEAD`` is
the migration branch itself (the user checked it out to look at it): the base is then the
branch it was made from, the local branch (the remote's default one first) that holds the
commit the migration's own commits sit on; when that is not one branch, one line asks for a
base ref. ``--push`` never pushes the migration onto the base branch nor onto the remote's
default branch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import git
from git.exc import GitCommandError

from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.branch_reuse import OWN_COMMIT_MARK
from npu_codemod.orchestrator.git.repository import GitError

#: How far down the migration branch its first own commit is looked for.
_MAX_WALK = 200


@dataclass(frozen=True)
class Base:
    commit: str
    branch: Optional[str]  # the base's branch name, when it is one
    note: Optional[str] = None  # how it was chosen, when not as the list says


def resolve_base(repo: git.Repo, base_ref: Optional[str], branch: str, remote: str = "origin") -> Base:
    """The base of the migration to ``branch``; GitError (one line) when it cannot be told."""
    if base_ref:
        return Base(gitrepo.resolve_commit(repo, base_ref), _branch_name(repo, base_ref))
    head = head_branch(repo)
    fork = _below_own_commits(repo, branch) if head == branch else None
    if fork is None:  # HEAD is not a migration branch (--branch main names the base itself)
        return Base(gitrepo.resolve_commit(repo, None), head)
    made_from = _made_from(repo, branch, fork, remote)
    if made_from is None:
        raise GitError(f"HEAD is the migration branch {branch}, not a base: check out the base "
                       "branch, or give the base ref after the repository in the repo list")
    return Base(gitrepo.resolve_commit(repo, made_from), made_from,
                f"HEAD is the migration branch {branch}: the base is {made_from}, the branch it was made from")


def check_push_target(repo: git.Repo, branch: str, base: Base, remote: str) -> None:
    """GitError unless ``branch`` may be pushed: never the base branch, nor the remote's default."""
    default = remote_default_branch(repo, remote)
    for name, what in ((base.branch, "the base branch"), (default, f"{remote}'s default branch")):
        if name is not None and name == branch:
            raise GitError(f"--branch {branch} is {what}: the migration is never pushed onto it; "
                           "choose another --branch")


def head_branch(repo: git.Repo) -> Optional[str]:
    """The branch ``HEAD`` names (a bare clone's: the remote's default), or None when
    detached; read from the file, no git process."""
    return _symbolic(os.path.join(repo.git_dir, "HEAD"), "refs/heads/")


def remote_default_branch(repo: git.Repo, remote: str) -> Optional[str]:
    """The remote's default branch as this repository last saw it (``refs/remotes/R/HEAD``);
    a bare clone of ours: its own ``HEAD``."""
    if repo.bare:
        return head_branch(repo)
    return _symbolic(os.path.join(repo.common_dir, "refs", "remotes", remote, "HEAD"),
                     f"refs/remotes/{remote}/")


def _symbolic(path: str, prefix: str) -> Optional[str]:
    """The name under ``prefix`` a symbolic ref file points to (symbolic refs are never packed)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read().strip()
    except OSError:
        return None
    target = text[len("ref: "):] if text.startswith("ref: ") else ""
    return target[len(prefix):] if target.startswith(prefix) else None


def _branch_name(repo: git.Repo, ref: str) -> Optional[str]:
    name = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else ref
    return name if gitrepo.branch_tip(repo, name) is not None else None


def _made_from(repo: git.Repo, branch: str, fork: str, remote: str) -> Optional[str]:
    """The local branch ``branch`` was made from: the one holding ``fork``, the commit below
    its own commits (the remote's default branch first); None when that is not one branch."""
    out = repo.git.for_each_ref("--contains", fork, "--format=%(refname:short)", "refs/heads/")
    candidates = [name for name in out.split("\n") if name and name != branch]
    default = remote_default_branch(repo, remote)
    if default in candidates:
        return default
    return candidates[0] if len(candidates) == 1 else None


def _below_own_commits(repo: git.Repo, branch: str) -> Optional[str]:
    """The first commit under the oldest of npu-codemod's commits on ``branch``'s first-parent line."""
    seen_own = False
    try:
        commits = list(repo.iter_commits(f"refs/heads/{branch}", first_parent=True, max_count=_MAX_WALK))
    except (GitCommandError, ValueError):  # an unborn branch
        return None
    for commit in commits:
        message = commit.message if isinstance(commit.message, str) else commit.message.decode("utf-8", "replace")
        if OWN_COMMIT_MARK in message:
            seen_own = True
        elif seen_own:
            return commit.hexsha
    return None
