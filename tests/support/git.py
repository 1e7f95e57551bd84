"""Real git repositories for tests: work repositories, bare remotes, commits, and reading them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping, Optional, Union

Content = Union[str, bytes]

#: What a repository holds when a test does not say (``make_repo(path)``): one TF 1.x script.
TF_SCRIPT = (
    "import tensorflow as tf\n"
    "ds = tf.data.Dataset.range(8).batch(4)\n"
    "with tf.Session() as sess:\n"
    "    sess.run(tf.global_variables_initializer())\n"
)


def git(repo: Path, *args: str) -> str:
    """``git args`` in ``repo``; its stdout without the trailing newline (raises on failure)."""
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(path: Path, files: Optional[Mapping[str, Content]] = None, branch: str = "main") -> Path:
    """A work repository at ``path`` with one commit on ``branch`` holding ``files`` (default:
    ``train.py`` with :data:`TF_SCRIPT`) and whatever ``path`` already held (links, say)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    write_files(path, {"train.py": TF_SCRIPT} if files is None else files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write_files(root: Path, files: Mapping[str, Content]) -> None:
    """Write ``files`` (relative path -> text, written as UTF-8, or bytes) under ``root``."""
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def commit_files(repo: Path, files: Mapping[str, Content], message: str) -> str:
    """Write ``files`` in ``repo`` and commit exactly them; the new commit's id."""
    write_files(repo, files)
    git(repo, "--literal-pathspecs", "add", "--", *files)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_remote(repo: Path, bare: Path, name: str = "origin") -> Path:
    """A bare clone of ``repo`` at ``bare``, added to ``repo`` as remote ``name``."""
    git(repo.parent, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", name, str(bare))
    return bare


def make_repo_with_remote(root: Path, name: str, files: Mapping[str, Content]) -> Path:
    """A work repo ``root/<name>`` whose ``origin`` is a bare repo at
    ``root/remotes/org/<name>.git`` (a file:// URL, so the forge slug is ``org/<name>``)."""
    repo = make_repo(root / name, files)
    bare = root / "remotes" / "org" / f"{name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    git(root, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", bare.as_uri())
    return bare


def commits_on(repo: Path, branch: str) -> list[str]:
    """The ids of the commits reachable from ``branch``, newest first."""
    return git(repo, "rev-list", branch).splitlines()


def show(repo: Path, ref: str, path: str) -> bytes:
    """The bytes of ``path`` as committed at ``ref``."""
    return subprocess.run(["git", "show", f"{ref}:{path}"], cwd=repo, check=True,
                          capture_output=True).stdout
