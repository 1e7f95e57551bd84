"""Splitting one repository's files across workers, and the records the pieces exchange.

A large repository is processed in three steps: a *plan* (open or fetch, choose the commit to
build on, gather repository-wide facts over every file), *shards* (the rules over a slice of
the files, in parallel), and a *finish* (one commit, the branch, the push). The records here
are what crosses process boundaries between those steps: small, frozen and picklable. Shards
store new contents as git blobs and hand back only their shas, so memory stays bounded by one
file per worker whatever the size of the repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Optional, Sequence

from npu_codemod.codemods.findings import Finding

from npu_codemod.orchestrator.git.repository import PyFile

if TYPE_CHECKING:  # pipeline imports this module
    from npu_codemod.orchestrator.batch.pipeline import RepoJob

#: Fewer files than this are not worth a round trip to another worker.
MIN_SHARD_FILES = 16


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


@dataclass(frozen=True)
class FileChange:
    """One rewritten file: its new blob (``run``) or its diff (``--dry-run``); ``scan`` keeps
    neither."""

    file: PyFile
    blob: Optional[str] = None
    patch: Optional[str] = None


@dataclass(frozen=True)
class ShardOutput:
    findings: tuple[Finding, ...] = ()
    changes: tuple[FileChange, ...] = ()
    files_cached: int = 0  # files whose outcome came from the result cache, unparsed


@dataclass(frozen=True)
class ShardedRepo:
    """A plan whose files are too many for one worker: process each shard, then finish."""

    plan: RepoPlan
    shards: tuple[tuple[PyFile, ...], ...]


def split_files(files: Sequence[PyFile], workers: int) -> list[tuple[PyFile, ...]]:
    """Contiguous slices in file order (so joined outputs read as one serial pass)."""
    size = max(MIN_SHARD_FILES, -(-len(files) // max(workers, 1)))
    return [tuple(files[start:start + size]) for start in range(0, len(files), size)] or [()]
