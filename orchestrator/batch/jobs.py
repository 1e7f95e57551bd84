"""The records of one repository's work, as they cross process boundaries: the job a worker
gets, the plan its shards share, what each shard hands back. Small, frozen and picklable; the
pipeline, the shards, the runner and the git steps all import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Iterable, Literal, Optional

from npu_codemod.codemods.api_sites import ApiSites
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.batch.locks import LockOwner
from npu_codemod.orchestrator.git.repository import PyFile
from npu_codemod.orchestrator.loaded_rules import RuleSelection
from npu_codemod.orchestrator.prs.groups import SplitBy
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.verify.settings import VerifyOptions

Mode = Literal["run", "scan", "verify"]
DEFAULT_BRANCH = "npu-codemod/sess-run-to-npu"


@dataclass(frozen=True)
class RepoJob:
    """Everything a worker needs to process one repository (picklable)."""

    entry: RepoEntry
    mode: Mode = "run"
    branch: str = DEFAULT_BRANCH
    dry_run: bool = False
    workspace: str = ".npu-codemod"
    selection: RuleSelection = RuleSelection()
    push: bool = False
    remote: str = "origin"
    force_push: bool = False
    split_by: Optional[SplitBy] = None  # a branch per group
    cache: bool = True  # reuse outcomes of unchanged files (result_cache); --no-cache: False
    include_tests: bool = False  # --include-tests: test files are migrated too
    lock_owner: Optional[LockOwner] = None  # the run: it holds the branch lock (batch.repo_locks)
    wait: bool = False  # --wait: for another run's lock of the branch, instead of failing
    verify: Optional[VerifyOptions] = None  # ``verify``, ``run --verify``: run before and after


@dataclass(frozen=True)
class RepoPlan:
    """What every shard and the finish of one repository need to know."""

    job: "RepoJob"
    path: str  # the repository to open: the user's, or the clone in the workspace cache
    base: str
    tip: Optional[str]  # the migration branch before this run, if it existed
    source: str  # the commit whose files are rewritten: ``base``, or ``tip`` with others' work
    parent: str  # the commit a new commit goes on: ``tip``, or ``base`` when rebuilt
    files_scanned: int
    facts: FrozenSet[str]
    files_skipped: int = 0  # test files left out (see RepoResult.files_skipped)
    findings: tuple[Finding, ...] = ()  # from the repository-wide analysis
    notes: tuple[str, ...] = ()
    uncommitted: int = 0  # paths of the working tree that differ from HEAD (see RepoResult)
    manifests: tuple[tuple[str, str], ...] = ()  # (path, text) of files that may pin TensorFlow
    code_folders: tuple[str, ...] = ()  # folders with TensorFlow pins and Python code (``tf_scopes``)


@dataclass(frozen=True)
class FileChange:
    """One rewritten file: its new blob (``run``) or its diff (``--dry-run``); ``scan`` keeps
    neither."""

    file: PyFile
    blob: Optional[str] = None
    patch: Optional[str] = None


def new_blobs(changes: Iterable[FileChange]) -> dict[PyFile, str]:
    """``{file: new blob}`` of the changes, for the git steps: ``run`` and ``--dry-run`` record
    every change's blob, ``scan`` none (and never asks)."""
    return {change.file: change.blob for change in changes if change.blob is not None}


@dataclass(frozen=True)
class ShardOutput:
    findings: tuple[Finding, ...] = ()
    changes: tuple[FileChange, ...] = ()
    files_cached: int = 0  # files whose outcome came from the result cache, unparsed
    api_sites: tuple[ApiSites, ...] = ()  # the shard's API use sites (api_sites.merge_sites)
    kinds: tuple[str, ...] = ()  # the kind of each TensorFlow file (tf_versions.KINDS)


@dataclass(frozen=True)
class ShardedRepo:
    """A plan whose files are too many for one worker: process each shard, then finish."""

    plan: RepoPlan
    shards: tuple[tuple[PyFile, ...], ...]
    #: Not None while the plan has no facts yet: each shard is analysed first
    #: (``pipeline.shard_facts``, joined by ``pipeline.with_shard_facts``), and these findings of the
    #: plan (symlinks not followed) go after the analysis's.
    unanalysed: Optional[tuple[Finding, ...]] = None
