"""Forges (GitHub, GitLab, ...): the interface a forge plugin provides and how one is chosen.

A forge client is bound to one repository on the forge (``owner/name``). Plugins return one
from the ``npu_codemod_forge`` hook (first result wins); the built-in GitHub and GitLab
clients live in ``npu_codemod.plugins.forges`` and do all their HTTP through
:mod:`.forge_http`.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Protocol, Sequence

from npu_codemod.orchestrator.prs.http import ForgeError
from npu_codemod.orchestrator.redact import SECRET_ENV_VARS, add_secret, mask_secrets
from npu_codemod.orchestrator.results import PullRequestRecord

__all__ = ["Forge", "ForgeError", "MERGE_METHODS", "PrDetails", "PullRequest", "PrState", "RepoInfo", "find_token",
           "forge_host", "slug_from_url", "open_forge"]

#: Environment variables searched for the API token, in order.
TOKEN_VARIABLES = SECRET_ENV_VARS  # one list: the tokens read are the values masked
_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!//).*)$")


@dataclass(frozen=True)
class RepoInfo:
    """What a PR needs to know about the repository on the forge."""

    default_branch: str
    web_url: str


@dataclass(frozen=True)
class PullRequest:
    """An open pull (merge) request as the forge reports it."""

    number: int  # GitHub number, GitLab iid
    url: str  # the web page
    title: str = ""
    body: str = ""
    draft: bool = False


@dataclass(frozen=True)
class PrState:
    """A pull request's state for ``npu-codemod status``."""

    state: str  # open, merged, closed (draft PRs are open)
    checks: str  # e.g. "2 passed, 1 pending", "none"


@dataclass(frozen=True)
class PrDetails:
    """What the PR lifecycle (``npu-codemod prs``, the campaign view) needs of a pull request."""

    number: int
    url: str
    state: str  # open, merged, closed
    head: str  # the source branch
    head_sha: str
    base: str  # the target branch
    approvals: int = 0  # reviewers whose latest review approves
    changes_requested: bool = False
    checks: str = "none"  # passed, failed, pending, none: all checks and statuses of the head
    conflicts: Optional[bool] = None  # None: the forge has not computed mergeability yet
    labels: tuple[str, ...] = ()
    draft: bool = False
    created_at: str = ""  # ISO 8601, as the forge gives it


#: Merge methods: GitHub has all three; GitLab merges or squashes (rebase is a project setting).
MERGE_METHODS = ("merge", "squash", "rebase")


class Forge(Protocol):
    """A client for one repository on one forge; every method raises ForgeError on refusal.

    Opening and updating PRs (``run --open-prs``) needs the methods up to :meth:`pr_state`;
    the lifecycle (``npu-codemod prs``, :mod:`..batch.pr_lifecycle`) and the campaign view also use
    :meth:`pr_details`, :meth:`comments`, :meth:`comment`, :meth:`close_pr`, :meth:`merge_pr`
    and :meth:`delete_branch`. A plugin without them works for ``run``; ``prs`` says which
    method its forge lacks.
    """

    name: str

    def repository(self) -> RepoInfo: ...

    def blob_url(self, branch: str, path: str, line: int) -> str:
        """Web link to ``path:line`` at ``branch`` (a branch name or a commit id)."""

    def find_open_pr(self, head: str) -> Optional[PullRequest]:
        """The open PR whose source branch is ``head``, if any."""

    def create_pr(self, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest: ...

    def update_pr(self, number: int, title: str, body: str, draft: bool) -> PullRequest:
        """New title and body; ``draft`` keeps a draft a draft where the title carries it (GitLab)."""

    def add_labels(self, number: int, labels: Sequence[str]) -> None: ...

    def request_reviewers(self, number: int, reviewers: Sequence[str]) -> list[str]:
        """Ask ``@user`` / ``@org/team`` reviewers; return the ones this forge cannot ask."""

    def pr_state(self, number: int) -> PrState: ...

    def pr_details(self, number: int) -> PrDetails:
        """State, head, approvals, checks, conflicts and labels of the PR ``number``."""

    def comments(self, number: int) -> list[str]:
        """The bodies of the PR's comments (GitLab: notes), oldest first."""

    def comment(self, number: int, body: str) -> None:
        """Add a comment (GitLab: a note) to the PR."""

    def close_pr(self, number: int) -> None:
        """Close the PR without merging it."""

    def merge_pr(self, number: int, method: str, sha: str) -> None:
        """Merge the PR by ``method`` (:data:`MERGE_METHODS`), only while its head is ``sha``."""

    def delete_branch(self, branch: str) -> None:
        """Delete ``branch`` of the repository on the forge."""


def find_token(environ: Mapping[str, str] = os.environ) -> Optional[str]:
    """The first token set in :data:`TOKEN_VARIABLES`; registered so it is masked everywhere."""
    for variable in TOKEN_VARIABLES:
        token = environ.get(variable, "").strip()
        if token:
            add_secret(token)
            return token
    return None


def _split_url(remote_url: str) -> tuple[str, str]:
    """(host, path) of a git remote URL, scp-like ``git@host:path`` included."""
    scp = _SCP_LIKE.match(remote_url)
    if scp and "://" not in remote_url:
        return scp.group("host").lower(), scp.group("path")
    parsed = urllib.parse.urlsplit(remote_url)
    return (parsed.hostname or "").lower(), urllib.parse.unquote(parsed.path)


def forge_host(remote_url: str) -> str:
    """The host of a remote URL (empty for ``file://`` and plain paths)."""
    return _split_url(remote_url)[0]


def slug_from_url(remote_url: str) -> str:
    """``owner/name`` from the last two path components of a remote URL (``.git`` dropped)."""
    parts = [part for part in _split_url(remote_url)[1].split("/") if part]
    if len(parts) < 2:
        raise ForgeError(f"cannot tell owner/name from remote {mask_secrets(remote_url)!r}; "
                         "add slug=owner/name to its repo list entry")
    name = parts[-1][:-4] if parts[-1].endswith(".git") else parts[-1]
    return f"{parts[-2]}/{name}"


def open_forge(hook, name: Optional[str], remote_url: str, api_url: Optional[str],
               token: Optional[str], slug: str) -> Forge:
    """Ask the forge plugins for a client; ForgeError when none answers."""
    forge = hook.npu_codemod_forge(name=name, remote_url=remote_url, api_url=api_url,
                                   token=token, slug=slug)
    if forge is None:
        if name:
            raise ForgeError(f"no forge plugin answers to --forge {name}")
        raise ForgeError(f"cannot tell the forge of {mask_secrets(remote_url)}; pass --forge github|gitlab")
    return forge


def reviewer_kind(reviewer: str) -> tuple[str, str]:
    """(``user``|``team``|``email``, name) of a CODEOWNERS-style owner: ``@u``, ``@org/team``, ``a@b.c``."""
    if not reviewer.startswith("@") and "@" in reviewer:
        return "email", reviewer
    name = reviewer.lstrip("@")
    return ("team" if "/" in name else "user"), name


def overall_checks(outcomes: Sequence[str]) -> str:
    """One word for a head's checks: ``failed`` if any failed, else ``pending`` if any is
    running, else ``passed`` if any passed (skipped ones aside), else ``none``."""
    for word in ("failed", "pending", "passed"):
        if word in outcomes:
            return word
    return "none"


def forge_of(hook: Any, pr: PullRequestRecord, token: Optional[str], forge_url: Optional[str] = None,
             forge: Optional[str] = None) -> Forge:
    """The forge client of a PR record (``status`` and ``prs``); ForgeError when it cannot be had."""
    missing = [key for key in ("forge", "remote_url", "slug") if not getattr(pr, key)]
    if missing:  # the tool always writes them: a run.json edited by hand
        raise ForgeError(f"the run record's entry lacks {', '.join(missing)}")
    return open_forge(hook, forge or pr.forge, pr.remote_url, forge_url or pr.api_url or None,
                      token, pr.slug)
