"""gitrepo.push_branch: the one place a branch is pushed (also used by pull requests)."""

from __future__ import annotations

import git as gitpython
import pytest

from npu_codemod.orchestrator.git import repository as gitrepo

from support.git import commit_files, git, make_remote, make_repo

BRANCH = "npu-codemod/test"


@pytest.fixture
def work(tmp_path):
    repo = make_repo(tmp_path / "work")
    make_remote(repo, tmp_path / "remote.git")
    git(repo, "branch", BRANCH)
    return repo


def test_push_lands_branch_in_remote(work, tmp_path):
    summary = gitrepo.push_branch(gitpython.Repo(work), "origin", BRANCH)
    assert summary == "[new branch]"
    assert git(tmp_path / "remote.git", "rev-parse", BRANCH) == git(work, "rev-parse", BRANCH)


def test_missing_remote_is_its_own_error(work):
    with pytest.raises(gitrepo.NoSuchRemote, match="no remote named 'upstream'"):
        gitrepo.push_branch(gitpython.Repo(work), "upstream", BRANCH)


def test_non_fast_forward_is_rejected_with_gits_reason_unless_forced(work, tmp_path):
    repo = gitpython.Repo(work)
    gitrepo.push_branch(repo, "origin", BRANCH)
    git(work, "checkout", "-q", BRANCH)
    commit_files(work, {"a.py": "x = 1\n"}, "one")
    gitrepo.push_branch(repo, "origin", BRANCH)
    git(work, "reset", "-q", "--hard", "HEAD~1")
    commit_files(work, {"a.py": "x = 2\n"}, "rewritten")
    with pytest.raises(gitrepo.GitError, match=r"push to origin rejected: \[rejected\] \(non-fast-forward\)"):
        gitrepo.push_branch(repo, "origin", BRANCH)
    assert gitrepo.push_branch(repo, "origin", BRANCH, force=True).endswith("(forced update)")
    assert git(tmp_path / "remote.git", "rev-parse", BRANCH) == git(work, "rev-parse", "HEAD")


def test_rejection_message_masks_credentials(work):
    git(work, "remote", "add", "secret", "https://user:tok3n@127.0.0.1:9/none.git")
    with pytest.raises(gitrepo.GitError) as info:
        gitrepo.push_branch(gitpython.Repo(work), "secret", BRANCH)
    assert "tok3n" not in str(info.value)
