"""Every user-visible byte of a git repository, to prove a run left it as it was.

``repo_state`` records the working tree (content, mode, symlink target of every entry), the
index file, HEAD, every ref and reflog except those of the migration branch, the stash,
registered worktrees and any lock files in ``.git``. Only git objects and the migration branch
may be added by a run; neither changes what the user sees.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Optional

from gitutil import git

_GIT_FILES = ("HEAD", "index", "index.lock", "packed-refs", "config", "ORIG_HEAD", "FETCH_HEAD")


def _entry(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"link -> {os.readlink(path)}"
    digest = hashlib.sha1(path.read_bytes()).hexdigest()
    return f"{stat.filemode(info.st_mode)} {info.st_mtime_ns} {digest}"


def repo_state(repo: Path, branch: Optional[str] = None) -> dict[str, str]:
    """Snapshot of ``repo`` (a work tree or a bare repository); ``branch`` is left out."""
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    state: dict[str, str] = {}
    if git_dir != repo:  # a work tree
        for root, dirs, files in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files + [d for d in dirs if Path(root, d).is_symlink()]:
                path = Path(root, name)
                state[f"tree:{path.relative_to(repo)}"] = _entry(path)
        state["status"] = git(repo, "--no-optional-locks", "status", "--porcelain",
                              "--untracked-files=all", "--ignored")
    for name in _GIT_FILES:
        if (git_dir / name).exists():
            state[f"git:{name}"] = _entry(git_dir / name)
    own = f"refs/heads/{branch}" if branch else None
    for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname) %(symref)").splitlines():
        ref = line.split()[0]
        if ref != own:
            state[f"ref:{ref}"] = line.strip()
    logs = git_dir / "logs"
    for path in logs.rglob("*") if logs.exists() else ():
        relative = path.relative_to(logs).as_posix()
        if path.is_file() and relative != own:
            state[f"log:{relative}"] = _entry(path)
    state["worktrees"] = git(repo, "worktree", "list", "--porcelain")
    state["stash"] = git(repo, "stash", "list") if git_dir != repo else ""
    return state
