"""The life of a campaign's pull requests after ``run --open-prs``: ``npu-codemod prs
close-stale | merge | rebase RUN_JSON``.

Each goes over the pull requests of a run record, one at a time, asks the forge where each
stands (:meth:`Forge.pr_details`) and acts on it, or with ``--dry-run`` only says what it
would do. One pull request's failure (a forge refusal, a git error) is its own line: the
others go on. Git work happens in the workspace's clone of each remote (fetched first), never
in the user's repositories.

- ``close-stale``: close (with a comment saying why) an open PR whose branch no longer differs
  from the base (the base has its changes), or whose base was migrated by hand (a scan of the
  base tip finds nothing to rewrite); ``--delete-branch`` deletes its branch too.
- ``merge``: merge the open PRs that are approved (``--approvals N``, no changes requested)
  and whose checks passed, by ``--merge-method``; ``--label L``: only those labelled L.
- ``rebase``: only a PR with conflicts (CI cost: a rebuilt branch reruns CI): rebuild the
  branch on the moved base (it must hold only npu-codemod's commits), force-push with lease.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional

import git

from npu_codemod.orchestrator.batch.jobs import RepoJob
from npu_codemod.orchestrator.batch.locks import LockOwner
from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.branch_reuse import build_point
from npu_codemod.orchestrator.git.compare import base_has_the_changes, push_with_lease
from npu_codemod.orchestrator.git.repository import GitError
from npu_codemod.orchestrator.git.workspace import Workspace
from npu_codemod.orchestrator.loaded_rules import RuleSelection
from npu_codemod.orchestrator.prs.forge import Forge, ForgeError, PrDetails, forge_of
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.results import PullRequestRecord, RepoResult
from npu_codemod.orchestrator.run_record import RunRecord


@dataclass(frozen=True)
class LifecycleSettings:
    """The options of ``npu-codemod prs``; the token stays out of every record."""

    token: Optional[str]
    workspace: str
    forge: Optional[str] = None
    forge_url: Optional[str] = None
    dry_run: bool = False
    selection: RuleSelection = RuleSelection()
    merge_method: str = "merge"
    approvals: int = 1
    label: Optional[str] = None
    delete_branch: bool = False


@dataclass(frozen=True)
class PrOutcome:
    """What was done to one pull request: ``action`` (merged, would merge, closed, kept,
    rebased, skipped, failed, ...) and why."""

    repo: str
    branch: str
    number: int
    action: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.action == "failed"


Step = Callable[[Forge, RepoResult, PullRequestRecord, PrDetails, LifecycleSettings], tuple[str, str]]


def pull_requests(run: Mapping[str, Any]) -> Iterator[tuple[RepoResult, PullRequestRecord]]:
    """(repo record, pull-request record) of every PR the run opened or found."""
    for repo in RunRecord.of(run).repos:
        for pr in repo.pull_requests:
            if pr.number is not None:
                yield repo, pr


def each_pr(run: Mapping[str, Any], hook: Any, settings: LifecycleSettings,
            step: Step) -> Iterator[PrOutcome]:
    """``step`` on every pull request of ``run``, one outcome each; a failure is its outcome."""
    for repo, pr in pull_requests(run):
        number, branch = int(pr.number or 0), pr.branch or "?"
        try:
            forge = forge_of(hook, pr, settings.token, settings.forge_url, settings.forge)
            details = forge.pr_details(number)
            if details.state != "open":
                action, detail = "skipped", f"already {details.state}"
            else:
                action, detail = step(forge, repo, pr, details, settings)
        except (ForgeError, GitError) as exc:
            action, detail = "failed", mask_secrets(str(exc))
        except AttributeError as exc:  # a third-party forge without the lifecycle's methods
            action, detail = "failed", f"this forge plugin cannot do that ({exc})"
        except (KeyError, TypeError, ValueError, IndexError) as exc:  # an answer of the wrong shape
            action, detail = "failed", mask_secrets(f"unexpected answer from the forge: {type(exc).__name__}: {exc}")
        yield PrOutcome(repo.repo, branch, number, action, detail)


def merge_refusal(details: PrDetails, settings: LifecycleSettings) -> Optional[str]:
    """Why the policy does not merge this open PR, or None."""
    if details.draft:
        return "a draft"
    if settings.label and settings.label not in details.labels:
        return f"not labelled {settings.label}"
    if details.changes_requested:
        return "changes requested"
    if details.approvals < settings.approvals:
        return f"{details.approvals} of {settings.approvals} approval(s)"
    if details.conflicts:
        return "has conflicts: `npu-codemod prs rebase` rebuilds it"
    if details.checks != "passed":
        return "no checks ran" if details.checks == "none" else f"checks {details.checks}"
    return None


def merge_step(forge: Forge, repo: RepoResult, pr: PullRequestRecord, details: PrDetails,
               settings: LifecycleSettings) -> tuple[str, str]:
    refusal = merge_refusal(details, settings)
    if refusal:
        return "skipped", refusal
    why = f"{settings.merge_method}: {details.approvals} approval(s), checks passed"
    if settings.dry_run:
        return "would merge", why
    forge.merge_pr(details.number, settings.merge_method, details.head_sha)
    return "merged", why


def close_step(forge: Forge, repo: RepoResult, pr: PullRequestRecord, details: PrDetails,
               settings: LifecycleSettings) -> tuple[str, str]:
    reason = stale_reason(repo, pr, details, settings)
    if reason is None:
        return "kept", f"still changes {details.base}, and {details.base} still needs it"
    if settings.dry_run:
        return "would close", reason + ("; and delete its branch" if settings.delete_branch else "")
    forge.comment(details.number, f"npu-codemod closes this pull request: {reason}." +
                  (f" Its branch `{details.head}` is deleted." if settings.delete_branch else ""))
    forge.close_pr(details.number)
    if settings.delete_branch:
        forge.delete_branch(details.head)
        reason += "; branch deleted"
    return "closed", reason


def stale_reason(repo: RepoResult, pr: PullRequestRecord, details: PrDetails,
                 settings: LifecycleSettings) -> Optional[str]:
    """Why the PR has nothing left to propose, or None."""
    mirror = _mirror(repo, pr, settings)
    tip = gitrepo.branch_tip(mirror, details.head)
    if tip is None:
        return f"its branch {details.head} is gone"
    base = gitrepo.resolve_commit(mirror, details.base)
    if base_has_the_changes(mirror, base, tip):
        return f"the branch no longer differs from {details.base}: {details.base} has its changes"
    scan = _process(repo, pr, settings, mode="scan", base_ref=base, branch=details.head)
    if not scan.files_changed:
        return f"{details.base} was migrated by hand: npu-codemod finds nothing left to rewrite there"
    return None


def rebase_step(forge: Forge, repo: RepoResult, pr: PullRequestRecord, details: PrDetails,
                settings: LifecycleSettings) -> tuple[str, str]:
    if details.conflicts is None:
        return "skipped", "the forge has not worked out yet whether it has conflicts: try again later"
    if not details.conflicts:
        return "skipped", "no conflicts: left as it is (a rebase only on conflict)"
    mirror = _mirror(repo, pr, settings)
    tip = gitrepo.branch_tip(mirror, details.head)
    if tip is None:
        return "failed", f"its branch {details.head} is gone"
    base = gitrepo.resolve_commit(mirror, details.base)
    if gitrepo.is_ancestor(mirror, base, tip):
        return "skipped", f"the branch already contains {details.base} ({base[:12]}): resolve by hand"
    if build_point(mirror, base, tip).source == tip:
        return "skipped", f"the branch has commits by others: merge {details.base} into it by hand"
    if settings.dry_run:
        return "would rebase", f"rebuild on {details.base} ({base[:12]}), force-push with lease"
    result = _process(repo, pr, settings, mode="run", base_ref=base, branch=details.head)
    push_with_lease(_mirror(repo, pr, settings, fetch=False), "origin", details.head, tip)
    forge.comment(details.number, f"npu-codemod rebuilt this branch on `{details.base}` "
                  f"(`{base[:12]}`): it had conflicts with it.")
    return "rebased", f"on {details.base} {base[:12]}: now {(result.commit or '')[:12]}"


def _mirror(repo: RepoResult, pr: PullRequestRecord, settings: LifecycleSettings, fetch: bool = True) -> git.Repo:
    """The workspace's clone of the PR's remote, fetched (the user's checkout is not used)."""
    entry = _entry(repo, pr)
    if not fetch:
        return gitrepo.open_repo(str(Workspace(settings.workspace).clone_path(entry.location)))
    return Workspace(settings.workspace).open(entry)


def _entry(repo: RepoResult, pr: PullRequestRecord, base_ref: Optional[str] = None) -> RepoEntry:
    url = pr.remote_url or ""
    if "***" in url:
        raise GitError(f"the run record holds {url} with its credentials masked: git cannot reach it")
    return RepoEntry(repo.repo, url, base_ref)


def _process(repo: RepoResult, pr: PullRequestRecord, settings: LifecycleSettings, mode: str, base_ref: str,
             branch: str) -> RepoResult:
    """The pipeline over the clone of the PR's remote: a ``scan`` of the base, or a ``run``
    that rebuilds the branch there (nothing pushed); GitError when it fails."""
    from npu_codemod.orchestrator.batch.pipeline import process_repo

    job = RepoJob(entry=_entry(repo, pr, base_ref), mode=mode, branch=branch,  # type: ignore[arg-type]
                  workspace=settings.workspace, selection=settings.selection, cache=False,
                  lock_owner=LockOwner.of_this_process())
    result = process_repo(job)
    if result.status == "failed":
        raise GitError(result.error or "failed")
    return result
