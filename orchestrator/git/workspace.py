"""Where a repository is worked on: the user's local repository itself (read-only use: only
objects and the migration branch are added), or a bare clone kept in the workspace cache for
URLs (fetched, not re-cloned, on later runs).

The cache is ours, so it is a bare clone whose ``refs/heads/*`` track the remote's branches
directly: the base ``HEAD`` is the remote's default branch, and a migration branch pushed by
an earlier run comes back with the fetch. No worktree is ever needed: files are read from git
objects (see :mod:`gitrepo`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import git

from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.repository import GitError
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry

CLONES = "clones"


class Workspace:
    """The ``--workspace`` folder: clone cache and scratch space of a run."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def open(self, entry: RepoEntry) -> git.Repo:
        """The git repository to work on for ``entry`` (cloned or fetched first for a URL)."""
        if not entry.is_url:
            return gitrepo.open_repo(entry.location)
        cache = self.clone_path(entry.location)
        with self._locked(cache):
            if cache.exists():
                gitrepo.fetch_mirror(gitrepo.open_repo(str(cache)), entry.location)
            else:
                self._clone(entry.location, cache)
        return gitrepo.open_repo(str(cache))

    def clone_path(self, url: str) -> Path:
        """Cache folder of ``url``: readable name plus a hash of the URL without credentials."""
        public = mask_secrets(url)
        name = re.sub(r"[^\w.-]+", "-", public.rstrip("/").rsplit("/", 1)[-1]).strip("-.")
        digest = hashlib.sha256(public.encode()).hexdigest()[:12]
        return self.root / CLONES / f"{name or 'repo'}-{digest}"

    @staticmethod
    def _clone(url: str, cache: Path) -> None:
        """Clone next to ``cache`` and rename into place: an interrupted clone leaves nothing."""
        partial = cache.with_name(f"{cache.name}.partial-{os.getpid()}")
        try:
            gitrepo.clone_mirror(url, str(partial))
            partial.rename(cache)
        finally:
            shutil.rmtree(partial, ignore_errors=True)

    @contextmanager
    def _locked(self, cache: Path) -> Iterator[None]:
        """One clone or fetch of a URL at a time (the same URL may be listed with two bases);
        leftovers of a clone killed mid-way are removed under the lock."""
        try:
            cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:  # --workspace names a file, or a folder we may not write
            raise GitError(f"cannot create the workspace folder {cache.parent}: {exc.strerror}") from None
        with open(cache.with_name(f"{cache.name}.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for stale in cache.parent.glob(f"{cache.name}.partial-*"):
                shutil.rmtree(stale, ignore_errors=True)
            yield
