"""Nothing of a repository's own runs when npu-codemod writes to it: hooks (in ``.git/hooks``
or wherever its ``core.hooksPath`` points) never run for ``update-ref`` or ``push``, and a
push never starts the repository's ``remote.origin.receivepack`` command (real repositories,
a real bare remote, hooks that would leave a mark)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from support.cli import cli
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
HOOKS = ("reference-transaction", "pre-push", "post-commit", "pre-commit", "post-checkout")


def marking_hook(folder: Path, name: str, marks: Path) -> None:
    hook = folder / name
    hook.write_text(f"#!/bin/sh\necho {name} >> '{marks}'\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)


def test_no_hook_and_no_receivepack_command_of_the_repository_runs(tmp_path: Path):
    marks = tmp_path / "marks"
    own = make_repo(tmp_path / "own")  # hooks in .git/hooks
    elsewhere = make_repo(tmp_path / "elsewhere")  # hooks where its core.hooksPath points
    shared = tmp_path / "shared-hooks"
    shared.mkdir()
    for name in HOOKS:
        marking_hook(own / ".git" / "hooks", name, marks)
        marking_hook(shared, name, marks)
    git(elsewhere, "config", "core.hooksPath", str(shared))
    for repo in (own, elsewhere):
        bare = tmp_path / f"{repo.name}.git"
        git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
        git(repo, "remote", "add", "origin", str(bare))
        git(repo, "config", "remote.origin.receivepack", f"echo receivepack >> '{marks}'; git-receive-pack")
    (tmp_path / "repos.txt").write_text("own\nelsewhere\n")

    done = cli("run", "--repos", "repos.txt", "--push", "--report-dir", "rep", "--no-progress", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert not marks.exists(), marks.read_text()
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [(r["status"], r["pushed"]) for r in run["repos"]] == [("changed", True), ("changed", True)]
    for repo in (own, elsewhere):
        assert git(tmp_path / f"{repo.name}.git", "rev-parse", BRANCH) == git(repo, "rev-parse", BRANCH)


def test_a_repository_git_refuses_says_why_not_that_it_has_no_commits(tmp_path: Path):
    """git's own refusal of another user's repository (git's test knob makes it see one: the
    same check, without changing the owner, which needs root)."""
    make_repo(tmp_path / "theirs")
    (tmp_path / "repos.txt").write_text("theirs\n")
    env = {**os.environ, "GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}

    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path, env=env)

    assert done.returncode == 1
    (repo,) = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"]
    assert repo["error"] == (
        f"git refuses the repository: fatal: detected dubious ownership in repository at "
        f"'{tmp_path / 'theirs'}' (it belongs to another user: if you trust it, git config --global "
        f"--add safe.directory {tmp_path / 'theirs'})")
