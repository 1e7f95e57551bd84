"""The migration's base and target branches: never pushed onto the base or the remote's
default branch, ``refs/heads/`` taken as the branch it names, and a checkout left on the
migration branch still migrates the branch it was made from (real repositories and remotes)."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import cli
from support.git import commit_files, git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
DROPOUT = "import tensorflow as tf\n\n\ndef head(x):\n    return tf.nn.dropout(x, 0.5)\n"


def cloned_work(tmp_path: Path, name: str = "work") -> tuple[Path, Path]:
    """A work repository cloned from a bare ``origin`` (so it knows origin's default branch)."""
    seed = make_repo(tmp_path / "seed", {"model/head.py": DROPOUT})
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    work = tmp_path / name
    git(tmp_path, "clone", "-q", str(bare), str(work))
    return work, bare


def run(tmp_path: Path, *args: str, lines: str = "work\n") -> tuple[int, dict, str]:
    (tmp_path / "repos.txt").write_text(lines)
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", *args, cwd=tmp_path)
    record = json.loads((tmp_path / "rep" / "run.json").read_text())
    return done.returncode, record["repos"][0], done.stderr


def test_the_base_branch_is_never_the_push_target(tmp_path: Path):
    work, bare = cloned_work(tmp_path)
    before = git(bare, "rev-parse", "main")

    code, repo, _ = run(tmp_path, "--branch", "main", "--push")

    assert code == 1 and repo["status"] == "failed"
    assert repo["error"] == "--branch main is the base branch: the migration is never pushed onto it; choose another --branch"
    assert git(bare, "rev-parse", "main") == before == git(work, "rev-parse", "main")


def test_the_remotes_default_branch_is_never_the_push_target(tmp_path: Path):
    work, bare = cloned_work(tmp_path)
    git(work, "checkout", "-q", "-b", "dev")  # the base is dev; origin's default is main

    code, repo, _ = run(tmp_path, "--branch", "main", "--push")

    assert code == 1
    assert repo["error"] == "--branch main is origin's default branch: the migration is never pushed onto it; choose another --branch"
    assert git(bare, "rev-parse", "main") == git(work, "rev-parse", "dev")


def test_a_branch_given_as_refs_heads_is_that_branch(tmp_path: Path):
    work, bare = cloned_work(tmp_path)

    code, repo, stderr = run(tmp_path, "--branch", "refs/heads/npu/port", "--push")

    assert code == 0, stderr
    assert repo["branch"] == "npu/port"
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/heads/") == "refs/heads/main\nrefs/heads/npu/port"
    assert git(bare, "rev-parse", "npu/port") == repo["commit"]


def test_a_checkout_on_the_migration_branch_migrates_the_branch_it_was_made_from(tmp_path: Path):
    work, _ = cloned_work(tmp_path)
    assert run(tmp_path)[0] == 0
    git(work, "checkout", "-q", BRANCH)  # the user looks at the migration
    new_main = commit_on_main(work)  # while main gets new unmigrated code

    code, repo, stderr = run(tmp_path, "--dry-run")

    assert code == 0, stderr
    assert repo["base"] == new_main
    assert repo["status"] == "changed" and "model/late.py" in repo["files_changed"]
    assert f"HEAD is the migration branch {BRANCH}: the base is main, the branch it was made from" in repo["notes"]


def commit_on_main(work: Path) -> str:
    """A commit on main made while the migration branch stays checked out (a worktree)."""
    side = work.parent / "main-worktree"
    git(work, "worktree", "add", "-q", str(side), "main")
    sha = commit_files(side, {"model/late.py": DROPOUT}, "late unmigrated code")
    git(work, "worktree", "remove", str(side))
    return sha


def test_a_migration_branch_made_from_no_single_branch_asks_for_a_base(tmp_path: Path):
    work, _ = cloned_work(tmp_path)
    assert run(tmp_path)[0] == 0
    git(work, "branch", "release", "main")
    git(work, "remote", "set-head", "origin", "-d")  # no default branch known
    git(work, "checkout", "-q", BRANCH)

    code, repo, _ = run(tmp_path, "--dry-run")

    assert code == 1
    assert repo["error"] == (f"HEAD is the migration branch {BRANCH}, not a base: check out the base "
                             "branch, or give the base ref after the repository in the repo list")
