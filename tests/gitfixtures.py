"""Real git repositories for the orchestrator tests: work repos, bare remotes, commits."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping

TF_SCRIPT = (
    "import tensorflow as tf\n"
    "ds = tf.data.Dataset.range(8).batch(4)\n"
    "with tf.Session() as sess:\n"
    "    sess.run(tf.global_variables_initializer())\n"
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_repo(path: Path, files: Mapping[str, str] = {"train.py": TF_SCRIPT}) -> Path:
    """A work repository with one commit on ``main`` holding ``files``."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    commit_files(path, files, "initial")
    return path


def commit_files(path: Path, files: Mapping[str, str], message: str) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "--", *files)
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


def make_remote(repo: Path, bare: Path, name: str = "origin") -> Path:
    """A bare clone of ``repo``, added to it as remote ``name``."""
    git(repo.parent, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", name, str(bare))
    return bare
