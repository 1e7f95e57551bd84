"""Opening or updating one pull request per pushed migration branch (``run --open-prs``).

Runs in the orchestrating process as each repository ends (before its record is spooled for
the reports), one forge request at a time, writes paced by ``--pr-rate``: the forge's answers
overlap the other repositories' work instead of following the whole batch, and the branch is
proposed from the result at hand, findings and all (no record read back from disk). While it
waits on the forge, workers that finish wait for their next task, and an unfinished
repository's ``--repo-timeout`` clock keeps running.

Idempotent: the open PR of a branch is found and its title and body updated (only when they
differ); a new PR is opened only when there is none. Labels and reviewers are set when a PR is
opened, so a rerun never re-pings reviewers. A forge's refusal becomes the repo's
``pr_error``: the migration and the push still stand.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Optional

from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.repository import GitError
from npu_codemod.orchestrator.prs.change_comment import Previous, change_comment, marker, site_keys
from npu_codemod.orchestrator.prs.forge import Forge, ForgeError, PullRequest, open_forge, slug_from_url
from npu_codemod.orchestrator.prs.pacing import Pacer, PrBudget
from npu_codemod.orchestrator.prs.text import PrTemplates, pr_context
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.results import ChangeGroup, PullRequestRecord, RepoResult
from npu_codemod.orchestrator.run_record import RuleRecord

_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")


@dataclass(frozen=True)
class PrSettings:
    """The ``--open-prs`` options of a run (the token stays out of every record)."""

    templates: PrTemplates
    token: Optional[str]
    pacer: Pacer
    forge: Optional[str] = None
    forge_url: Optional[str] = None
    draft: bool = False
    labels: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()
    remote: str = "origin"
    budget: PrBudget = field(default_factory=PrBudget)  # --max-prs, --prs-per-hour


@dataclass(frozen=True)
class _Target:
    """One branch to propose: the whole change, or one group of a split change."""

    branch: str
    files: tuple[str, ...]
    findings: tuple[Any, ...]
    group: Optional[ChangeGroup] = None


class Publisher:
    """Proposes the branches of finished repositories on their forges."""

    def __init__(self, settings: PrSettings, hook: Any, rules: Mapping[str, RuleRecord],
                 branch: str, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
                 previous: Optional[Previous] = None):
        self.settings, self.hook, self.rules, self.branch, self.log = settings, hook, rules, branch, log
        self.previous = previous  # the sites of the campaign's previous state (change_comment)

    def publish(self, entry: RepoEntry, result: RepoResult) -> RepoResult:
        """``result`` with its pull requests (or the reason there are none) filled in."""
        targets = _targets(result)
        if not targets:
            return result
        if not result.pushed:
            return self._failed(result, "the branch was not pushed, so no pull request was opened")
        try:
            remote = _remote_url(entry, self.settings.remote)
            slug = entry.option("slug") or slug_from_url(remote)
            forge = open_forge(self.hook, self.settings.forge, remote, self.settings.forge_url,
                               self.settings.token, slug)
        except (ForgeError, GitError) as exc:
            return self._failed(result, str(exc))
        blank = PullRequestRecord(branch="", forge=forge.name, api_url=self.settings.forge_url or "",
                                  remote_url=mask_secrets(remote), slug=slug)
        records = [self._propose(forge, entry, result, target, blank) for target in targets]
        errors = [f"{r.branch}: {r.error}" if r.group else r.error for r in records if r.error]
        urls = [r.url for r in records if r.url]
        return result.with_changes(pull_requests=tuple(records), pr_url=urls[0] if urls else None,
                                   pr_error="; ".join(errors) or None)

    def _failed(self, result: RepoResult, error: str) -> RepoResult:
        error = mask_secrets(error)
        self.log(f"npu-codemod: {result.repo}: no pull request: {error}")
        return result.with_changes(pr_error=error)

    def _propose(self, forge: Forge, entry: RepoEntry, result: RepoResult, target: _Target,
                 blank: PullRequestRecord) -> PullRequestRecord:
        import jinja2  # loaded with the templates: a run that opens no PR never imports it

        record = replace(blank, branch=target.branch, group=target.group.name if target.group else "")
        try:
            base = _base_branch(entry.base_ref, self.settings.remote) or forge.repository().default_branch
            context = pr_context(result.repo, record.slug, target.branch, base, target.findings,
                                 target.files, self.rules,
                                 # the base commit: findings' line numbers are its lines (the
                                 # branch has lines inserted above them); pushed with the branch
                                 lambda path, line: forge.blob_url(result.base or target.branch, path, line),
                                 target.group, self.branch,
                                 verify=result.verify.to_dict() if result.verify else None,
                                 merge=result.merge)
            title, body = self.settings.templates.render(context)
            found = forge.find_open_pr(target.branch)
            if found is None:
                record = self._create(forge, record, target, base, title, body)
            else:
                record = self._update(forge, record, found, title, body)
                if result.status == "changed" and result.commit:  # this run changed its content
                    self._comment_change(forge, found.number, result, target)
        except ForgeError as exc:
            record = replace(record, action="failed", error=mask_secrets(str(exc)))
        except jinja2.TemplateError as exc:
            record = replace(record, action="failed", error=f"PR template: {exc}")
        except Exception as exc:  # a forge plugin's bug: this repository's PR alone fails
            record = replace(record, action="failed", error=mask_secrets(
                f"the {forge.name} forge client failed: {type(exc).__name__}: {exc}"))
        what = record.error or f"{record.action} {record.url}"
        if record.action == "deferred":
            what = f"deferred: {self.settings.budget.reason()}; the next run opens it"
        self.log(f"npu-codemod: {result.repo}: {target.branch}: pull request {what}")
        return record

    def _comment_change(self, forge: Forge, number: int, result: RepoResult, target: _Target) -> None:
        """Say on the PR what this run changed (once per change: :mod:`.change_comment`)."""
        commit = (target.group.commit if target.group else result.commit) or ""
        if any(marker(commit) in text for text in forge.comments(number)):
            return
        before = None if self.previous is None else self.previous.get((result.repo, target.branch), Counter())
        self.settings.pacer.wait()
        forge.comment(number, change_comment(commit, site_keys(target.findings), before,
                                             _verdict(result)))

    def _create(self, forge: Forge, record: PullRequestRecord, target: _Target, base: str,
                title: str, body: str) -> PullRequestRecord:
        if not self.settings.budget.take():  # the rest wait for the next run
            return replace(record, action="deferred")
        self.settings.pacer.wait()
        try:
            pr = forge.create_pr(target.branch, base, title, body, self.settings.draft)
        except ForgeError as exc:  # opened meanwhile (422/409 "already exists"): update it
            found = forge.find_open_pr(target.branch) if "already exist" in str(exc) else None
            if found is None:
                raise
            return self._update(forge, record, found, title, body)
        if self.settings.labels:
            forge.add_labels(pr.number, self.settings.labels)
        wanted = _unique((*(target.group.owners if target.group else ()), *self.settings.reviewers))
        skipped = forge.request_reviewers(pr.number, wanted) if wanted else []
        if skipped:
            self.log(f"npu-codemod: {record.slug}: {forge.name} cannot request review from "
                     f"{', '.join(skipped)}")
        requested = tuple(r for r in wanted if r not in skipped)
        return replace(record, action="created", url=pr.url, number=pr.number, reviewers=requested)

    def _update(self, forge: Forge, record: PullRequestRecord, found: PullRequest, title: str,
                body: str) -> PullRequestRecord:
        if (found.title, found.body.strip()) == (title, body.strip()):
            return replace(record, action="unchanged", url=found.url, number=found.number)
        self.settings.pacer.wait()
        pr = forge.update_pr(found.number, title, body, found.draft or self.settings.draft)
        return replace(record, action="updated", url=pr.url, number=pr.number)


def _verdict(result: RepoResult) -> Optional[str]:
    """``equivalent`` / ``diverged (step 3: ...)``: the run's verify verdict, if it has one."""
    record = result.verify
    if record is None:
        return None
    return record.verdict + (f" ({record.reason})" if record.reason else "")


def _targets(result: RepoResult) -> list[_Target]:
    """The branches of a result that hold a migration commit (no change: no PR)."""
    if result.status == "failed":
        return []
    if result.groups:
        return [_Target(g.branch, g.files, tuple(f for f in result.findings if f.path in g.paths), g)
                for g in result.groups if g.branch and g.commit]
    if result.branch and result.commit and result.commit != result.base:
        return [_Target(result.branch, result.files_changed, result.findings)]
    return []


def _remote_url(entry: RepoEntry, remote: str) -> str:
    if entry.is_url:
        return entry.location
    url = gitrepo.remote_url(gitrepo.open_repo(entry.location), remote)
    if url is None:
        raise ForgeError(f"no remote named {remote!r} to tell the forge from")
    return url


def _base_branch(base_ref: Optional[str], remote: str) -> Optional[str]:
    """The PR's target: the repo list's base ref when it names a branch, else None (the
    forge's default branch)."""
    if not base_ref or base_ref == "HEAD" or _SHA.match(base_ref):
        return None
    for prefix in ("refs/heads/", f"refs/remotes/{remote}/", f"{remote}/"):
        if base_ref.startswith(prefix):
            return base_ref[len(prefix):]
    return base_ref


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
