"""gitrepo's in-process plumbing against git's own answers on the same real repositories:
the file listing (``ls-tree -r``), the rewritten trees (an index built with ``update-index``)
and which worktree holds a branch (``worktree list``); and that a repository costs two git
processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from npu_codemod.orchestrator.git import repository as gitrepo

from support.git import git, make_repo

NAMES = {  # nested folders, a space, non-ASCII, a name sorting between "a" and "a/"
    "top.py": "x = 1\n",
    "a.py": "a = 1\n",
    "a-b.py": "ab = 1\n",
    "a/b/deep.py": "deep = 1\n",
    "a/b/other.txt": "text\n",
    "a/c d.py": "space = 1\n",
    "ünï/côdé.py": "u = 1\n",
    "exec.py": "#!/usr/bin/env python\n",
    "z/keep.py": "keep = 1\n",
}


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    path = make_repo(tmp_path / "r", NAMES)
    os.symlink("top.py", path / "link.py")
    (path / "exec.py").chmod(0o755)
    sub = make_repo(tmp_path / "sub", {"s.py": "s = 1\n"})
    git(path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor/sub")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "links and a submodule")
    return path


def test_python_files_are_what_ls_tree_lists(repo: Path) -> None:
    listing = subprocess.run(["git", "ls-tree", "-r", "-z", "HEAD"], cwd=repo, check=True,
                             capture_output=True).stdout.decode("utf-8", "surrogateescape")
    expected = []
    for record in filter(None, listing.split("\0")):
        meta, path = record.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode in ("100644", "100755") and path.endswith(".py"):
            expected.append(gitrepo.PyFile(path, mode, blob))
    files = gitrepo.python_files(gitrepo.open_repo(str(repo)), git(repo, "rev-parse", "HEAD"))
    assert files == expected
    assert {"link.py", "vendor/sub/s.py"}.isdisjoint(f.path for f in files)


def test_commit_blobs_gives_the_tree_git_gives(repo: Path, tmp_path: Path) -> None:
    handle = gitrepo.open_repo(str(repo))
    head = git(repo, "rev-parse", "HEAD")
    files = {f.path: f for f in gitrepo.python_files(handle, head)}
    new = {path: gitrepo.store_blob(handle, f"# {path}\n".encode()) for path in
           ("a/b/deep.py", "a/c d.py", "ünï/côdé.py", "exec.py", "top.py")}
    commit = gitrepo.commit_blobs(handle, head, {files[p]: blob for p, blob in new.items()}, "msg\n")

    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    subprocess.run(["git", "read-tree", head], cwd=repo, env=env, check=True)
    info = "".join(f"{files[p].mode} {blob}\t{p}\n" for p, blob in new.items())
    subprocess.run(["git", "update-index", "--index-info"], cwd=repo, env=env, check=True,
                   input=info.encode())
    expected = subprocess.run(["git", "write-tree"], cwd=repo, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()
    assert git(repo, "rev-parse", f"{commit}^{{tree}}") == expected
    assert git(repo, "rev-parse", f"{commit}^") == head
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_commit_blobs_refuses_a_file_missing_from_the_parent(repo: Path) -> None:
    handle = gitrepo.open_repo(str(repo))
    ghost = gitrepo.PyFile("a/b/gone.py", "100644", "0" * 40)
    with pytest.raises(gitrepo.GitError, match="no longer in the tree"):
        gitrepo.commit_blobs(handle, git(repo, "rev-parse", "HEAD"), {ghost: "1" * 40}, "msg\n")


def _git_says(repo: Path, branch: str) -> str | None:
    path = None
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree "):]
        elif line == f"branch refs/heads/{branch}":
            return path
    return None


def test_checked_out_at_agrees_with_git_worktree_list(repo: Path, tmp_path: Path) -> None:
    git(repo, "branch", "elsewhere")
    git(repo, "branch", "free")
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "elsewhere")
    for where in (repo, tmp_path / "linked"):  # asked from the main worktree and a linked one
        handle = gitrepo.open_repo(str(where))
        for branch in ("main", "elsewhere", "free", "missing"):
            assert gitrepo.checked_out_at(handle, branch) == _git_says(where, branch), (where, branch)
    assert gitrepo.checked_out_at(gitrepo.open_repo(str(repo)), "elsewhere") == str(tmp_path / "linked")


def test_a_bare_repository_has_no_branch_checked_out(repo: Path, tmp_path: Path) -> None:
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
    handle = gitrepo.open_repo(str(tmp_path / "bare.git"))
    assert gitrepo.checked_out_at(handle, "main") is None
    assert _git_says(tmp_path / "bare.git", "main") is None


def test_a_repository_costs_two_git_processes(tmp_path: Path, monkeypatch) -> None:
    """Batched git: per repository one ``cat-file --batch`` for every read and one ``update-ref``
    (a ``git`` on PATH that logs each command, then runs the real one)."""
    real = shutil.which("git")
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    # the command's name: after the -c core.hooksPath=... every command carries
    (bin_dir / "git").write_text(f'#!/bin/sh\n[ "$1" = -c ] && echo "$3" >> "{log}" || echo "$1" >> "{log}"\n'
                                 f'exec "{real}" "$@"\n')
    (bin_dir / "git").chmod(0o755)
    names = ["r1", "r2", "r3"]
    for name in names:
        make_repo(tmp_path / name, {"train.py": "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n",
                                    "pkg/model.py": "import tensorflow as tf\nsess = tf.Session()\n"})
    (tmp_path / "repos.txt").write_text("".join(f"{name}\n" for name in names))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt",
                           "--no-progress", "--no-cache", "--jobs", "2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    commands = Counter(log.read_text().split())
    commands.pop("version", None)  # GitPython asks each process's git version once
    assert commands == {"cat-file": 3, "update-ref": 3, "check-ref-format": 1}
    for name in names:
        assert git(tmp_path / name, "rev-list", "--count", "npu-codemod/sess-run-to-npu") == "2"
