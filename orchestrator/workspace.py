"""Where a repository is worked on: the user's local repository itself (read-only use: only
objects and the migration branch are added), or a clone kept in the workspace cache for URLs.
"""

from __future__ import annotations

from pathlib import Path

import git

from . import gitrepo
from .repolist import RepoEntry


class Workspace:
    """The ``--workspace`` folder: clone cache and scratch space of a run."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def open(self, entry: RepoEntry) -> git.Repo:
        """The git repository to work on for ``entry``."""
        if entry.is_url:
            raise gitrepo.GitError(f"{entry.name}: git URLs are not supported yet")
        return gitrepo.open_repo(entry.location)
