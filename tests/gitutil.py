"""Real git repositories for tests: create, snapshot (to prove nothing was touched), inspect."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional
from typing import Mapping, Union

Content = Union[str, bytes]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(path: Path, files: Mapping[str, Content], branch: str = "main") -> Path:
    """A git repo at ``path`` with ``files`` committed on ``branch``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    write_files(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write_files(root: Path, files: Mapping[str, Content]) -> None:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def snapshot(repo: Path) -> dict[str, str]:
    """Hashes of every file of the working tree and of .git's index, HEAD and refs."""
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


def commits_on(repo: Path, branch: str) -> list[str]:
    return git(repo, "rev-list", branch).splitlines()


def show(repo: Path, ref: str, path: str) -> bytes:
    return subprocess.run(["git", "show", f"{ref}:{path}"], cwd=repo, check=True,
                          capture_output=True).stdout


def cli(*args: str, cwd: Path, stdin: str = "",
        env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess:
    """The real command line in a subprocess (``python -m npu_codemod``)."""
    return subprocess.run([sys.executable, "-m", "npu_codemod", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=300, env=env)
