"""Git in unusual states, through the real CLI: each repository either migrates untouched or
ends as one clear ``failed`` line, and nothing the user sees in it changes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import git as gitpython
import pytest

from npu_codemod.orchestrator.git import repository as gitrepo

from support.cli import cli
from support.git import git, make_repo, show
from support.repo_state import repo_state

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"
MIGRATED = b"from npu_bridge.npu_init import *\nimport tensorflow as tf\ny = npu_ops.dropout(x, 0.5)\n"


def run(root: Path, repos: str, *extra: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    (root / "repos.txt").write_text(repos)
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--jobs", "1",
               *extra, cwd=root)
    assert "Traceback" not in done.stderr, done.stderr
    return done, json.loads((root / "rep" / "run.json").read_text())["repos"]


def error_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines()
            if line.startswith("npu-codemod: ") and "reports in" not in line]


# --- States that are fine: the run works and leaves them as they are ---------------------------


def test_locked_index_does_not_matter_and_the_lock_is_left_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    (repo / ".git" / "index.lock").write_bytes(b"held by another git process\n")
    before = repo_state(repo, BRANCH)
    done, results = run(tmp_path, "r\n")
    assert done.returncode == 0, done.stderr
    assert results[0]["status"] == "changed"
    assert show(repo, BRANCH, "train.py") == MIGRATED
    assert repo_state(repo, BRANCH) == before  # includes index.lock: bytes and mtime


def test_detached_head_is_the_base_and_stays_detached(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    git(repo, "commit", "-q", "--allow-empty", "-m", "later")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    before = repo_state(repo, BRANCH)
    done, results = run(tmp_path, "r\n")
    assert done.returncode == 0, done.stderr
    assert git(repo, "rev-parse", f"{BRANCH}~1") == git(repo, "rev-parse", "HEAD")
    assert repo_state(repo, BRANCH) == before


def test_bare_repository_as_a_local_path_gets_the_branch_only(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", {"train.py": TRAIN})
    git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "bare.git"))
    before = repo_state(tmp_path / "bare.git", BRANCH)
    done, results = run(tmp_path, "bare.git\n")
    assert done.returncode == 0, done.stderr
    assert results[0]["status"] == "changed"
    assert show(tmp_path / "bare.git", BRANCH, "train.py") == MIGRATED
    assert repo_state(tmp_path / "bare.git", BRANCH) == before


# --- States that fail the repository, with one clear line -------------------------------------


def _fails_alone(tmp_path: Path, repo: Path, entry: str, message: str, *extra: str) -> None:
    good = make_repo(tmp_path / "good", {"train.py": TRAIN})
    before = repo_state(repo)
    done, results = run(tmp_path, f"{entry}\ngood\n", *extra)
    assert done.returncode == 1
    assert [r["status"] for r in results] == ["failed", "failed" if extra else "changed"]
    assert results[0]["error"] == message
    assert f"npu-codemod: {entry.split()[0]}: {message}" in error_lines(done)
    assert repo_state(repo) == before  # not even a branch
    if not extra:
        assert show(good, BRANCH, "train.py") == MIGRATED


def test_missing_base_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    _fails_alone(tmp_path, repo, "r no-such-ref", "repos.txt:1: base ref 'no-such-ref' not found")


def test_repository_without_commits(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "train.py").write_text(TRAIN)
    git(repo, "add", "train.py")  # staged, never committed
    _fails_alone(tmp_path, repo, "r", "the repository has no commits")


def test_workspace_that_is_a_file_fails_a_url_with_one_line(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"train.py": TRAIN})
    (tmp_path / "ws").write_text("not a folder\n")
    done, results = run(tmp_path, f"{(tmp_path / 'r').as_uri()}\n", "--workspace", "ws")
    assert done.returncode == 1
    assert results[0]["error"] == f"cannot create the workspace folder {tmp_path / 'ws' / 'clones'}: Not a directory"


def test_branch_name_that_is_not_a_valid_ref_is_a_usage_error(tmp_path: Path) -> None:
    """Checked once, before any repository is opened: one line, exit 2, nothing written."""
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    before = repo_state(repo)
    (tmp_path / "repos.txt").write_text("r\n")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress",
               "--branch", "bad..name", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["npu-codemod: error: 'bad..name' is not a valid branch name"]
    assert repo_state(repo) == before
    assert not (tmp_path / "rep").exists()


def test_branch_checked_out_in_a_worktree_left_by_a_killed_run(tmp_path: Path) -> None:
    """Moving a branch that a worktree has checked out would make its files look changed:
    refuse, and leave the worktree, its uncommitted edits and the branch as they are."""
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    git(repo, "branch", BRANCH)
    worktree = tmp_path / "stale-worktree"
    git(repo, "worktree", "add", "-q", str(worktree), BRANCH)
    (worktree / "train.py").write_text(TRAIN + "# half-done edit\n")
    before, before_worktree = repo_state(repo), repo_state(worktree)
    done, results = run(tmp_path, "r\n")
    assert done.returncode == 1
    assert results[0]["error"] == (
        f"branch {BRANCH} is checked out in the worktree {worktree}: commit or discard the "
        "work there and remove that worktree (git worktree remove), then rerun")
    assert repo_state(repo) == before
    assert repo_state(worktree) == before_worktree


def test_branch_checked_out_in_the_users_own_checkout_is_not_moved(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    git(repo, "checkout", "-q", "-b", BRANCH)
    before = repo_state(repo)
    done, results = run(tmp_path, "r\n")
    assert done.returncode == 1
    assert results[0]["error"].startswith(f"branch {BRANCH} is checked out in the worktree {repo}:")
    assert repo_state(repo) == before


def test_remote_that_rejects_the_push(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"train.py": TRAIN})
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(remote))
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    git(repo, "remote", "add", "origin", str(remote))
    before, remote_before = repo_state(repo, BRANCH), repo_state(remote)
    done, results = run(tmp_path, "r\n", "--push")
    assert done.returncode == 1
    assert results[0]["status"] == "failed"
    assert results[0]["error"].startswith("push to origin rejected: ")
    assert "pre-receive hook declined" in results[0]["error"]
    assert len(error_lines(done)) == 1
    assert repo_state(repo, BRANCH) == before
    assert repo_state(remote) == remote_before
    assert show(repo, BRANCH, "train.py") == MIGRATED  # committed locally: a rerun pushes it


# --- What is read from a commit -----------------------------------------------------------------


def test_python_files_are_regular_blobs_only(tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub", {"inner.py": TRAIN})
    repo = make_repo(tmp_path / "r", {"a.py": TRAIN, "tool.py": TRAIN, "data.txt": TRAIN})
    os.symlink("a.py", repo / "same.py")
    os.symlink("/etc/passwd", repo / "abs.py")
    (repo / "tool.py").chmod(0o755)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links, submodule, executable")
    files = gitrepo.python_files(gitpython.Repo(repo), git(repo, "rev-parse", "HEAD"))
    assert [(f.path, f.mode) for f in files] == [("a.py", "100644"), ("tool.py", "100755")]


@pytest.mark.parametrize("name", ["-rf", "a b.py", "ünï.py", "new\nline.py", "quote\".py"])
def test_unusual_file_names_are_read_and_written(tmp_path: Path, name: str) -> None:
    repo = make_repo(tmp_path / "r", {name: TRAIN})
    before = repo_state(repo, BRANCH)
    done, results = run(tmp_path, "r\n")
    assert done.returncode == 0, done.stderr
    assert results[0]["files_changed"] == ([name] if name.endswith(".py") else [])
    if name.endswith(".py"):
        assert show(repo, BRANCH, name) == MIGRATED
    assert repo_state(repo, BRANCH) == before
