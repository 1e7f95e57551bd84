"""Per-repo outcomes: frozen, picklable records that workers return instead of raising."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, Mapping, Optional

from npu_codemod.codemods.api_sites import ApiSites, readiness, sites_of
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.merge_verdict import MergeVerdict, merge_verdict
from npu_codemod.codemods.sites import SiteCounts
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.verify.records import VerifyRecord

#: ``deferred``: not started in this run (its PR budget, ``--max-prs``, was spent); the next
#: run takes it: not a failure.
RepoStatus = Literal["changed", "unchanged", "failed", "deferred"]


@dataclass(frozen=True)
class ChangeGroup:
    """One part of a ``--split-by`` change: its owners, files, and its own branch and commit.

    ``files`` were changed and committed on ``branch``; ``paths`` are all the group's files
    that have changes or findings. A group that changed nothing has no branch.
    """

    name: str
    owners: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    branch: Optional[str] = None
    commit: Optional[str] = None


@dataclass(frozen=True)
class PullRequestRecord:
    """The pull request of one branch: where it is, what was done, or the forge's error.

    ``forge``, ``api_url`` (``--forge-url``), ``remote_url`` (credentials masked) and ``slug``
    let ``npu-codemod status`` find it again later.
    """

    branch: str
    group: str = ""  # the ChangeGroup's name; empty for an unsplit change
    action: str = ""  # created, updated, unchanged, failed
    url: Optional[str] = None
    number: Optional[int] = None
    error: Optional[str] = None
    forge: str = ""
    api_url: str = ""
    remote_url: str = ""
    slug: str = ""
    reviewers: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepoResult:
    """What happened to one repository."""

    repo: str
    status: RepoStatus
    location: str = ""
    branch: Optional[str] = None
    base: Optional[str] = None
    commit: Optional[str] = None
    files_changed: tuple[str, ...] = ()
    files_scanned: int = 0  # .py files the rules ran over
    files_skipped: int = 0  # test files left out (codemods.file_kinds); --include-tests: 0
    files_cached: int = 0  # files served from the result cache (not parsed); 0 with --no-cache
    error: Optional[str] = None
    notes: tuple[str, ...] = ()
    #: Paths of a local repository's working tree that differ from HEAD or are untracked: not
    #: part of the migration, which is built from commits (a note says so).
    uncommitted: int = 0
    pushed: bool = False
    pr_url: Optional[str] = None  # the repo's pull request (the first one of a split change)
    pr_error: Optional[str] = None  # the forge's refusal; the migration itself stands
    groups: tuple[ChangeGroup, ...] = ()  # --split-by: one per branch/PR
    pull_requests: tuple[PullRequestRecord, ...] = ()
    patch: Optional[str] = None  # dry-run: the diff that would be committed
    verify: Optional[VerifyRecord] = None  # ``verify`` / ``run --verify``: the verdict
    findings: tuple[Finding, ...] = field(default=(), repr=False)
    #: The API use sites the audit counted over the repository's files (``api_sites``).
    api_sites: tuple[ApiSites, ...] = field(default=(), repr=False)
    #: Files per kind (``codemods.tf_versions``: tf1, tf2, tf2-compat, tf-neutral, conflict,
    #: non-tf), in that order, kinds with no file left out.
    file_kinds: Mapping[str, int] = field(default_factory=dict)

    @property
    def sites(self) -> SiteCounts:
        """The repository's sites per state (``codemods/sites.py``): ``left`` is what is left."""
        return SiteCounts.of_findings(self.findings)

    @property
    def merge(self) -> MergeVerdict:
        """The repository's merge verdict (``codemods/merge_verdict.py``)."""
        return merge_verdict(self.status, ((f.rule_id, f.status, f.level, f.path, f.line)
                                           for f in self.findings), self.api_sites,
                             self.verify.verdict if self.verify else None, self.files_scanned)

    @property
    def api_readiness(self) -> Optional[float]:
        """Share of the API use sites with a known status that are ready (None: no such site)."""
        return readiness(self.api_sites)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RepoResult":
        """A repository's record as ``run.json`` holds it (what :meth:`to_dict` made, or an older
        record without the fields added since): the typed record every report reads."""
        verify = data.get("verify")
        return cls(**{**known_fields(cls, data),
                      "groups": tuple(ChangeGroup(**known_fields(ChangeGroup, group))
                                      for group in data.get("groups") or ()),
                      "pull_requests": tuple(PullRequestRecord(**known_fields(PullRequestRecord, pr))
                                             for pr in data.get("pull_requests") or ()),
                      "findings": tuple(Finding.from_dict(finding) for finding in data["findings"]),
                      "api_sites": sites_of(data.get("api_sites")),
                      "verify": VerifyRecord(**known_fields(VerifyRecord, verify)) if verify else None,
                      "file_kinds": dict(data.get("file_kinds") or {})})

    def with_changes(self, **changes: Any) -> "RepoResult":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        # Field by field, not asdict(self), which also deep-copies every finding only to have
        # them replaced: the parent calls this per repository while workers wait.
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["groups"] = tuple(asdict(group) for group in self.groups)
        data["pull_requests"] = tuple(asdict(record) for record in self.pull_requests)
        data["files_changed"] = list(self.files_changed)
        data["notes"] = list(self.notes)
        data["findings"] = [finding.to_dict() for finding in self.findings]
        data["api_sites"] = [row.to_dict() for row in self.api_sites]
        data["api_readiness"] = self.api_readiness
        data["sites"] = self.sites.to_dict()
        merge = self.merge
        data["verdict"], data["verdict_reason"] = merge.verdict, merge.reason
        data["verify"] = self.verify.to_dict() if self.verify is not None else None
        return data


def known_fields(cls: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``data`` for the fields of the dataclass ``cls`` (JSON lists as tuples);
    the fields ``data`` lacks keep their defaults, keys ``cls`` does not know are left out."""
    names = {spec.name for spec in fields(cls)}
    return {name: tuple(value) if isinstance(value, list) else value
            for name, value in data.items() if name in names}


def failed(entry: RepoEntry, error: str) -> RepoResult:
    """A failed result: one human sentence in ``error``, no traceback; the location masked."""
    return RepoResult(repo=entry.name, status="failed", location=mask_secrets(entry.location),
                      error=error)


def deferred(entry: RepoEntry, reason: str) -> RepoResult:
    """A repository this run did not start, and why (a note): the next run takes it."""
    return RepoResult(repo=entry.name, status="deferred", location=mask_secrets(entry.location),
                      notes=(reason,))
