"""Splitting one repository's files across workers (the records they exchange: :mod:`jobs`).

A large repository is processed in three steps: a *plan* (open or fetch, choose the commit to
build on, gather repository-wide facts over every file), *shards* (the rules over a slice of
the files, in parallel), and a *finish* (one commit, the branch, the push). Shards
store new contents as git blobs and hand back only their shas, so memory stays bounded by one
file per worker whatever the size of the repository.
"""

from __future__ import annotations

from typing import Sequence

from npu_codemod.orchestrator.git.repository import PyFile

#: Fewer files than this are not worth a round trip to another worker.
MIN_SHARD_FILES = 16


def split_files(files: Sequence[PyFile], workers: int) -> list[tuple[PyFile, ...]]:
    """Contiguous slices in file order (so joined outputs read as one serial pass)."""
    size = max(MIN_SHARD_FILES, -(-len(files) // max(workers, 1)))
    return [tuple(files[start:start + size]) for start in range(0, len(files), size)] or [()]
