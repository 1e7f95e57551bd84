"""What a git repository looks like to its user, to prove a run left it as it was.

``snapshot`` is the checkout only: the content of every working-tree file, ``.git``'s index
and HEAD files, and ``git status``. ``repo_state`` is every user-visible byte: the working
tree (content, mode, mtime, symlink target of every entry), the index file, HEAD, every ref
and reflog except those of the migration branch, the stash, registered worktrees and any lock
files in ``.git``. Only git objects and the migration branch may be added by a run; neither
changes what the user sees.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Optional

from support.git import git

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


def snapshot(repo: Path) -> dict[str, str]:
    """Hashes of every file of the working tree and of .git's index and HEAD, and the status."""
    state: dict[str, str] = {}
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(root, name)
            state[str(path.relative_to(repo))] = hashlib.sha1(path.read_bytes()).hexdigest()
    git_dir = repo / ".git"
    for name in ("index", "HEAD"):
        if (git_dir / name).exists():
            state[f".git/{name}"] = hashlib.sha1((git_dir / name).read_bytes()).hexdigest()
    state["status"] = git(repo, "status", "--porcelain")
    return state
