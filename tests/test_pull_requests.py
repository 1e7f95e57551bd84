"""``run --push --open-prs`` end to end: real repos, real pushes to bare remotes, a stand-in
forge on 127.0.0.1, the real CLI in a subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.cli import cli
from support.csvfiles import read_csv
from support.forge import serve
from support.git import git, make_repo_with_remote

BRANCH = "npu-codemod/sess-run-to-npu"
TOKEN = "tok-3f9a1c7e-never-show-me"
TRAIN = """\
import tensorflow as tf

dataset = tf.data.TFRecordDataset(files)
dataset = dataset.batch(32)
memory.batch(64)
"""


@pytest.fixture
def github(monkeypatch):
    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    forge, server = serve("github", TOKEN)
    yield forge
    server.shutdown()


@pytest.fixture
def gitlab(monkeypatch):
    monkeypatch.delenv("NPU_CODEMOD_TOKEN", raising=False)
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    forge, server = serve("gitlab", TOKEN)
    yield forge
    server.shutdown()


def run_prs(tmp_path: Path, forge, *extra: str, report: str = "rep"):
    return cli("run", "--repos", "repos.txt", "--push", "--open-prs", "--forge", forge.kind,
               "--forge-url", forge.url, "--pr-rate", "0", "--jobs", "1", "--no-progress",
               "--report-dir", report, *extra, cwd=tmp_path)


def assert_no_token(tmp_path: Path, *results) -> None:
    for result in results:
        assert TOKEN not in result.stdout and TOKEN not in result.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file() and "remotes" not in path.parts:
            assert TOKEN.encode() not in path.read_bytes(), path


def test_one_pr_per_changed_repo_and_a_rerun_updates_it(tmp_path: Path, github):
    for name in ("alpha", "beta"):
        make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
    make_repo_with_remote(tmp_path, "gamma", {"util.py": "x = 1\n"})
    (tmp_path / "repos.txt").write_text("alpha\nbeta\ngamma\n")
    github.rate_limit["POST /repos/org/alpha/pulls"] = 1

    first = run_prs(tmp_path, github, "--label", "npu", "--reviewer", "@alice")

    assert first.returncode == 0, first.stderr
    assert [(pr["slug"], pr["head"], pr["base"]) for pr in github.prs] == [
        ("org/alpha", BRANCH, "main"), ("org/beta", BRANCH, "main")]
    alpha = github.prs[0]
    assert alpha["title"] == "Migrate TensorFlow sess.run training code to Ascend NPU"
    assert "| NPU002 dataset-batch-drop-remainder |" in alpha["body"]
    base = git(tmp_path / "alpha", "rev-parse", "main")  # the lines reported are the base's
    link = f"https://forge.example/org/alpha/blob/{base}/train.py#L5"
    assert f"| [train.py:5]({link}) | NPU002 dataset-batch-drop-remainder | if this is a tf.data.Dataset" in alpha["body"]
    assert "## Guide sections" in alpha["body"]
    assert alpha["labels"] == ["npu"] and alpha["reviewers"] == ["alice"]
    assert all(call.authorized for call in github.calls)
    # the 403 with rate-limit headers was retried after the 1 second it asked for
    limited, retried = github.calls_to("POST", "/repos/org/alpha/pulls")
    assert retried.at - limited.at >= 0.9
    assert "rate limited (HTTP 403); retrying in 1s" in first.stderr
    for name in ("alpha", "beta"):
        remote = tmp_path / "remotes" / "org" / f"{name}.git"
        assert git(remote, "rev-parse", BRANCH) == git(tmp_path / name, "rev-parse", BRANCH)
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [r["pr_url"] for r in run["repos"]] == [
        "https://forge.example/org/alpha/pull/1", "https://forge.example/org/beta/pull/2", None]
    assert [r["status"] for r in run["repos"]] == ["changed", "changed", "unchanged"]
    rows = read_csv(tmp_path / "rep" / "repos.csv")
    assert [(r["repo"], r["branch"], r["pr_url"]) for r in rows] == [
        ("alpha", BRANCH, "https://forge.example/org/alpha/pull/1"),
        ("beta", BRANCH, "https://forge.example/org/beta/pull/2"), ("gamma", "", "")]
    assert "https://forge.example/org/alpha/pull/1" in (tmp_path / "rep" / "report.html").read_text()

    second = run_prs(tmp_path, github, "--pr-title", "NPU migration of {{ repo }}", report="rep2")

    assert second.returncode == 0, second.stderr
    assert len(github.prs) == 2
    assert len(github.calls_to("POST", r"/repos/org/\w+/pulls")) == 3  # no new PR
    assert [pr["title"] for pr in github.prs] == ["NPU migration of alpha", "NPU migration of beta"]
    assert len(github.calls_to("PATCH", r"/repos/org/\w+/pulls/\d")) == 2
    assert github.prs[0]["reviewers"] == ["alice"]  # reviewers are not asked twice
    assert_no_token(tmp_path, first, second)

    status = cli("status", "rep2/run.json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "#1  open   1 passed, 1 pending  https://forge.example/org/alpha/pull/1" in status.stdout

    edited = json.loads((tmp_path / "rep2" / "run.json").read_text())  # by hand: fields dropped
    del edited["repos"][0]["pull_requests"][0]["slug"], edited["repos"][0]["pull_requests"][0]["forge"]
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    status = cli("status", "edited.json", cwd=tmp_path)
    assert status.returncode == 1 and "Traceback" not in status.stderr
    assert "unknown  the run record's entry lacks forge, slug" in status.stdout
    assert "#2  open" in status.stdout  # the other PRs are still looked up


def test_split_by_codeowners_gives_each_team_its_own_pr(tmp_path: Path, github):
    make_repo_with_remote(tmp_path, "mono", {
        ".github/CODEOWNERS": "*  @org/platform\n/vision/ @org/vision-team\nnlp/  @org/nlp-team\n",
        "vision/train.py": TRAIN, "vision/data/input.py": TRAIN, "nlp/train.py": TRAIN,
        "README.md": "mono\n",
    })
    (tmp_path / "repos.txt").write_text("mono\n")

    first = run_prs(tmp_path, github, "--split-by", "codeowners")

    assert first.returncode == 0, first.stderr
    remote = tmp_path / "remotes" / "org" / "mono.git"
    by_branch = {pr["head"]: pr for pr in github.prs}
    assert sorted(by_branch) == [f"{BRANCH}/org-nlp-team", f"{BRANCH}/org-vision-team"]
    for team, files in (("vision-team", "vision/data/input.py\nvision/train.py"), ("nlp-team", "nlp/train.py")):
        branch = f"{BRANCH}/org-{team}"
        assert git(remote, "diff", "--name-only", f"main..{branch}") == files
        assert by_branch[branch]["team_reviewers"] == [team]
        assert by_branch[branch]["title"].endswith(f"(org-{team})")
    assert "nlp/train.py" not in by_branch[f"{BRANCH}/org-vision-team"]["body"]
    rows = read_csv(tmp_path / "rep" / "pr-files.csv")
    assert {(r["path"], r["group"]) for r in rows} == {
        ("nlp/train.py", "org-nlp-team"), ("vision/train.py", "org-vision-team"),
        ("vision/data/input.py", "org-vision-team")}
    assert all(r["pr_url"] == by_branch[r["branch"]]["html_url"] for r in rows)
    page = (tmp_path / "rep" / "report.html").read_text()
    assert f'<a href="{by_branch[f"{BRANCH}/org-nlp-team"]["html_url"]}">org-nlp-team</a>' in page

    tips = {branch: git(remote, "rev-parse", branch) for branch in by_branch}
    second = run_prs(tmp_path, github, "--split-by", "codeowners", report="rep2")
    assert second.returncode == 0, second.stderr
    assert {branch: git(remote, "rev-parse", branch) for branch in by_branch} == tips
    assert len(github.prs) == 2
    assert_no_token(tmp_path, first, second)


@pytest.mark.parametrize("kind", ["github", "gitlab"])  # 422 and 409 "already exists"
def test_a_pr_opened_meanwhile_is_updated_not_duplicated(tmp_path: Path, request, kind):
    forge = request.getfixturevalue(kind)
    make_repo_with_remote(tmp_path, "alpha", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\n")
    forge.race_on_create = 1

    result = run_prs(tmp_path, forge)

    assert result.returncode == 0, result.stderr
    assert len(forge.prs) == 1
    assert forge.prs[0]["body"].startswith("This pull request was prepared by npu-codemod")
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert run["repos"][0]["pull_requests"][0]["action"] == "updated"


def test_a_forge_refusal_is_the_repos_pr_error_and_the_batch_goes_on(tmp_path: Path, github):
    make_repo_with_remote(tmp_path, "alpha", {"train.py": TRAIN})
    make_repo_with_remote(tmp_path, "beta", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha slug=org/missing\nbeta\n")

    result = run_prs(tmp_path, github)

    assert result.returncode == 1
    assert "alpha: npu-codemod/sess-run-to-npu: pull request GET" in result.stderr
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    alpha, beta = run["repos"]
    assert alpha["status"] == "changed" and alpha["pushed"] and alpha["pr_url"] is None
    assert alpha["pr_error"].endswith("/repos/org/missing: HTTP 404: Not Found")
    assert beta["pr_url"] == "https://forge.example/org/beta/pull/1"
    rows = read_csv(tmp_path / "rep" / "repos.csv")
    assert rows[0]["error"] == alpha["pr_error"]


def test_prs_proposed_as_repos_end_land_on_their_own_repos_rows(tmp_path: Path, github):
    names = ["alpha", "beta", "gamma", "delta"]
    for name in names:
        make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha slug=org/missing\nbeta\ngamma\ndelta\n")

    result = run_prs(tmp_path, github, "--jobs", "2")  # repos end in any order

    assert result.returncode == 1  # alpha's PR was refused
    assert sorted(pr["slug"] for pr in github.prs) == ["org/beta", "org/delta", "org/gamma"]
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [r["repo"] for r in run["repos"]] == names
    assert run["repos"][0]["pr_url"] is None and "HTTP 404" in run["repos"][0]["pr_error"]
    for repo in run["repos"][1:]:
        assert re.fullmatch(rf"https://forge.example/org/{repo['repo']}/pull/\d", repo["pr_url"])
        assert repo["pull_requests"][0]["url"] == repo["pr_url"]
    rows = read_csv(tmp_path / "rep" / "repos.csv")
    assert [(r["repo"], r["pr_url"]) for r in rows] == [(r["repo"], r["pr_url"] or "") for r in run["repos"]]
    assert rows[0]["error"] == run["repos"][0]["pr_error"]


def test_gitlab_merge_requests(tmp_path: Path, gitlab):
    make_repo_with_remote(tmp_path, "alpha", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\n")

    first = run_prs(tmp_path, gitlab, "--draft", "--label", "npu", "--label", "tf1",
                    "--reviewer", "@alice", "--reviewer", "@org/ml")

    assert first.returncode == 0, first.stderr
    (mr,) = gitlab.prs
    assert (mr["slug"], mr["head"], mr["base"]) == ("org/alpha", BRANCH, "main")
    assert mr["title"] == "Draft: Migrate TensorFlow sess.run training code to Ascend NPU"
    assert mr["labels"] == ["npu", "tf1"] and mr["reviewers"] == [11]
    base = git(tmp_path / "alpha", "rev-parse", "main")
    assert f"https://forge.example/org/alpha/-/blob/{base}/train.py#L5" in mr["body"]
    assert "gitlab cannot request review from @org/ml" in first.stderr

    second = run_prs(tmp_path, gitlab, "--pr-title", "NPU: {{ slug }}", report="rep2")
    assert second.returncode == 0, second.stderr
    assert len(gitlab.prs) == 1 and mr["title"] == "Draft: NPU: org/alpha"  # still a draft

    status = cli("status", "rep2/run.json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "open   pipeline success" in status.stdout
    assert_no_token(tmp_path, first, second, status)


@pytest.mark.parametrize("args, message", [
    (("--open-prs",), "--open-prs needs --push"),
    (("--push", "--open-prs", "--pr-rate", "fast"), "--pr-rate 'fast': expected N/min"),
    (("--push", "--open-prs", "--pr-title", "{{ repo"), "--pr-title is not a valid template"),
    (("--split-by", "directory", "--dry-run"), "--split-by commits one branch per group"),
    (("--push", "--label", "npu"), "--label needs --open-prs"),
    (("--pr-rate", "fast"), "--pr-rate needs --open-prs"),
    (("--draft",), "--draft needs --open-prs"),
])
def test_pr_usage_errors_exit_2(tmp_path: Path, monkeypatch, args, message):
    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    (tmp_path / "repos.txt").write_text("")
    result = cli("run", "--repos", "repos.txt", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith(f"npu-codemod: error: {message}")


def test_open_prs_needs_a_token(tmp_path: Path, monkeypatch):
    for variable in ("NPU_CODEMOD_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    (tmp_path / "repos.txt").write_text("")
    result = cli("run", "--repos", "repos.txt", "--push", "--open-prs", cwd=tmp_path)
    assert result.returncode == 2
    assert "--open-prs needs an API token: set NPU_CODEMOD_TOKEN or GITHUB_TOKEN or GITLAB_TOKEN" in result.stderr


def test_an_identical_rerun_keeps_the_body_and_sends_no_update(tmp_path: Path, github):
    make_repo_with_remote(tmp_path, "alpha", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\n")
    assert run_prs(tmp_path, github).returncode == 0
    body = github.prs[0]["body"]
    assert f"Files changed on `{BRANCH}`: `train.py`." in body

    second = run_prs(tmp_path, github, report="rep2")

    assert second.returncode == 0, second.stderr
    assert github.prs[0]["body"] == body  # the branch's files, though this run committed nothing
    assert github.calls_to("PATCH", r"/repos/org/\w+/pulls/\d") == []
    run = json.loads((tmp_path / "rep2" / "run.json").read_text())
    assert [(r["status"], r["files_changed"]) for r in run["repos"]] == [("unchanged", ["train.py"])]
