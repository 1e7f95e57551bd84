"""The PR lifecycle of a campaign, end to end: real repositories pushed to bare remotes, the
fake forge on 127.0.0.1 (GitHub and GitLab), the real CLI in a subprocess: ``prs merge``,
``prs close-stale``, ``prs rebase`` (dry runs change nothing), comments on reruns, waves and
the PR budget, a secondary rate limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.orchestrator.prs.pacing import PrBudget

from support.cli import cli
from support.forge import serve
from support.git import git, make_repo, make_repo_with_remote, show

BRANCH = "npu-codemod/sess-run-to-npu"
TOKEN = "tok-51c0ffee-campaign-secret"
TRAIN = """\
import tensorflow as tf

dataset = tf.data.TFRecordDataset(files)
dataset = dataset.batch(32)
memory.batch(64)
"""
EVAL = """\
import tensorflow as tf

y = tf.nn.dropout(x, 0.5)
items.batch(8)
"""
MIGRATED_BY_HAND = TRAIN.replace("batch(32)", "batch(32, drop_remainder=True)").replace(
    "memory.batch(64)", "memory.batch(64)  # not a dataset")


def commit_to_remote(root: Path, name: str, files: dict[str, str], message: str = "by hand") -> None:
    """Someone pushes ``files`` to the remote's main (through a clone of their own)."""
    clone = root / f"someone-{name}"
    if not clone.exists():
        git(root, "clone", "-q", (root / "remotes" / "org" / f"{name}.git").as_uri(), str(clone))
    git(clone, "pull", "-q", "origin", "main")
    for path, text in files.items():
        (clone / path).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", message)
    git(clone, "push", "-q", "origin", "main")


@pytest.fixture(params=["github", "gitlab"])
def forge(request, monkeypatch):
    variable = "NPU_CODEMOD_TOKEN" if request.param == "github" else "GITLAB_TOKEN"
    monkeypatch.delenv("NPU_CODEMOD_TOKEN", raising=False)
    monkeypatch.setenv(variable, TOKEN)
    fake, server = serve(request.param, TOKEN)
    yield fake
    server.shutdown()


@pytest.fixture
def github(monkeypatch):
    monkeypatch.setenv("NPU_CODEMOD_TOKEN", TOKEN)
    fake, server = serve("github", TOKEN)
    yield fake
    server.shutdown()


def open_prs(root: Path, forge, *extra: str, report: str = "rep"):
    result = cli("run", "--repos", "repos.txt", "--push", "--open-prs", "--forge", forge.kind,
                 "--forge-url", forge.url, "--pr-rate", "0", "--jobs", "1", "--no-progress",
                 "--workspace", "ws", "--report-dir", report, *extra, cwd=root)
    assert TOKEN not in result.stdout + result.stderr
    return result


def prs(root: Path, forge, action: str, *extra: str, report: str = "rep"):
    result = cli("prs", action, f"{report}/run.json", "--forge-url", forge.url, "--workspace", "ws",
                 *extra, cwd=root)
    assert TOKEN not in result.stdout + result.stderr
    return result


def writes(forge) -> list[tuple[str, str]]:
    return [(c.method, c.path) for c in forge.calls if c.method != "GET"]


def pr_of(forge, name: str) -> dict:
    return next(pr for pr in forge.prs if pr["slug"] == f"org/{name}")


def campaign(root: Path, forge, names=("alpha", "beta", "gamma")) -> None:
    for name in names:
        make_repo_with_remote(root, name, {"train.py": TRAIN})
    (root / "repos.txt").write_text("\n".join(names) + "\n")
    first = open_prs(root, forge)
    assert first.returncode == 0, first.stderr
    assert [pr["slug"] for pr in forge.prs] == [f"org/{name}" for name in names]


def approve(pr: dict, *users: str) -> None:
    pr["reviews"] += [{"user": user, "state": "APPROVED"} for user in users]


def all_checks_pass(pr: dict) -> None:
    pr["checks"] = [{"name": "tests", "status": "completed", "conclusion": "success"}]


def test_merge_takes_the_approved_with_passing_checks_and_one_failure_does_not_stop_the_rest(
        tmp_path: Path, forge) -> None:
    campaign(tmp_path, forge, ("alpha", "beta", "gamma", "delta"))
    alpha, beta, gamma, delta = forge.prs
    for pr in (alpha, gamma, delta):
        approve(pr, "alice")
        all_checks_pass(pr)
    if forge.kind == "gitlab":
        alpha["pipeline"] = delta["pipeline"] = "success"
        gamma["pipeline"] = "running"
    else:
        gamma["checks"].append({"name": "lint", "status": "in_progress", "conclusion": None})
    forge.refuse_merge.add(delta["number"])
    before = len(writes(forge))

    dry = prs(tmp_path, forge, "merge", "--dry-run")

    assert dry.returncode == 0, dry.stderr
    assert dry.stderr == "npu-codemod prs merge: dry run, nothing is changed\n"
    assert dry.stdout.splitlines() == [
        f"alpha  {BRANCH}  #1  would merge: merge: 1 approval(s), checks passed",
        f"beta  {BRANCH}  #2  skipped: 0 of 1 approval(s)",
        f"gamma  {BRANCH}  #3  skipped: checks pending",
        f"delta  {BRANCH}  #4  would merge: merge: 1 approval(s), checks passed",
        "4 pull request(s): 2 would merge, 2 skipped"]
    assert len(writes(forge)) == before  # a dry run writes nothing

    merged = prs(tmp_path, forge, "merge", "--merge-method", "squash")

    assert merged.returncode == 1  # delta's merge was refused
    lines = merged.stdout.splitlines()
    assert lines[0] == f"alpha  {BRANCH}  #1  merged: squash: 1 approval(s), checks passed"
    assert lines[3].startswith(f"delta  {BRANCH}  #4  failed: PUT ")
    assert lines[3].endswith("HTTP 405: Pull Request is not mergeable")
    assert lines[-1] == "4 pull request(s): 1 merged, 2 skipped, 1 failed"
    assert [pr["state"] for pr in forge.prs] == ["merged", "open", "open", "open"]
    assert alpha["merge_method"] == "squash"

    again = prs(tmp_path, forge, "merge", "--approvals", "2")
    assert again.stdout.splitlines()[:2] == [f"alpha  {BRANCH}  #1  skipped: already merged",
                                             f"beta  {BRANCH}  #2  skipped: 0 of 2 approval(s)"]


def test_merge_only_labelled(tmp_path: Path, github) -> None:
    campaign(tmp_path, github, ("alpha", "beta"))
    for pr in github.prs:
        approve(pr, "alice")
        all_checks_pass(pr)
    github.prs[1]["labels"].append("npu-ready")
    result = prs(tmp_path, github, "merge", "--label", "npu-ready")
    assert result.stdout.splitlines()[:2] == [
        f"alpha  {BRANCH}  #1  skipped: not labelled npu-ready",
        f"beta  {BRANCH}  #2  merged: merge: 1 approval(s), checks passed"]
    assert github.calls_to("PUT", r"/repos/org/beta/pulls/2/merge")[0].body["sha"] == github.prs[1]["head_sha"]


def test_close_stale_closes_what_the_base_has_or_was_migrated_by_hand(tmp_path: Path, forge) -> None:
    campaign(tmp_path, forge)
    ours = show(tmp_path / "alpha", BRANCH, "train.py").decode()
    commit_to_remote(tmp_path, "alpha", {"train.py": ours}, "cherry-pick the migration")
    commit_to_remote(tmp_path, "beta", {"train.py": MIGRATED_BY_HAND.replace(
        "import tensorflow", "from npu_bridge.npu_init import *\nimport tensorflow")})
    before = len(writes(forge))

    dry = prs(tmp_path, forge, "close-stale", "--dry-run", "--delete-branch")

    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        f"alpha  {BRANCH}  #1  would close: the branch no longer differs from main: main has its "
        "changes; and delete its branch",
        f"beta  {BRANCH}  #2  would close: main was migrated by hand: npu-codemod finds nothing left "
        "to rewrite there; and delete its branch",
        f"gamma  {BRANCH}  #3  kept: still changes main, and main still needs it",
        "3 pull request(s): 2 would close, 1 kept"]
    assert len(writes(forge)) == before

    closed = prs(tmp_path, forge, "close-stale", "--delete-branch")

    assert closed.returncode == 0, closed.stderr
    assert closed.stdout.splitlines()[-1] == "3 pull request(s): 2 closed, 1 kept"
    assert [pr["state"] for pr in forge.prs] == ["closed", "closed", "open"]
    assert forge.prs[0]["comments"] == [
        "npu-codemod closes this pull request: the branch no longer differs from main: main has its "
        f"changes. Its branch `{BRANCH}` is deleted."]
    assert forge.deleted_branches == [("org/alpha", BRANCH), ("org/beta", BRANCH)]
    assert prs(tmp_path, forge, "close-stale").stdout.splitlines()[0] == \
        f"alpha  {BRANCH}  #1  skipped: already closed"
    # The user's checkouts were not used: their main is where it was.
    assert git(tmp_path / "alpha", "log", "-1", "--format=%s", "main") == "initial"


def test_rebase_only_on_conflict_rebuilds_on_the_moved_base_and_pushes_with_lease(
        tmp_path: Path, forge) -> None:
    campaign(tmp_path, forge, ("alpha", "beta", "gamma"))
    moved = TRAIN.replace("dataset.batch(32)", "dataset.batch(64)")
    for name in ("alpha", "beta", "gamma"):
        commit_to_remote(tmp_path, name, {"train.py": moved}, "bigger batches")
    bare = {name: tmp_path / "remotes" / "org" / f"{name}.git" for name in ("alpha", "beta", "gamma")}
    old_tips = {name: git(path, "rev-parse", BRANCH) for name, path in bare.items()}
    forge.prs[0]["mergeable"] = False  # alpha: conflicts
    forge.prs[1]["mergeable"] = True  # beta: none
    forge.prs[2]["mergeable"] = False  # gamma: conflicts, but someone else committed to the branch
    someone = tmp_path / "someone-gamma-branch"
    git(tmp_path, "clone", "-q", "-b", BRANCH, bare["gamma"].as_uri(), str(someone))
    (someone / "notes.txt").write_text("mine\n")
    git(someone, "add", "-A")
    git(someone, "commit", "-qm", "a note")
    git(someone, "push", "-q", "origin", BRANCH)
    old_tips["gamma"] = git(bare["gamma"], "rev-parse", BRANCH)
    before = len(writes(forge))

    dry = prs(tmp_path, forge, "rebase", "--dry-run")

    main = {name: git(path, "rev-parse", "main") for name, path in bare.items()}
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        f"alpha  {BRANCH}  #1  would rebase: rebuild on main ({main['alpha'][:12]}), force-push with lease",
        f"beta  {BRANCH}  #2  skipped: no conflicts: left as it is (a rebase only on conflict)",
        f"gamma  {BRANCH}  #3  skipped: the branch has commits by others: merge main into it by hand",
        "3 pull request(s): 1 would rebase, 2 skipped"]
    assert len(writes(forge)) == before
    assert {name: git(path, "rev-parse", BRANCH) for name, path in bare.items()} == old_tips

    rebased = prs(tmp_path, forge, "rebase")

    assert rebased.returncode == 0, rebased.stderr
    tip = git(bare["alpha"], "rev-parse", BRANCH)
    assert rebased.stdout.splitlines()[0] == \
        f"alpha  {BRANCH}  #1  rebased: on main {main['alpha'][:12]}: now {tip[:12]}"
    assert git(bare["alpha"], "rev-parse", f"{BRANCH}~1") == main["alpha"]  # one commit on the new base
    assert "batch(64, drop_remainder=True)" in git(bare["alpha"], "show", f"{BRANCH}:train.py")
    assert git(bare["beta"], "rev-parse", BRANCH) == old_tips["beta"]
    assert git(bare["gamma"], "rev-parse", BRANCH) == old_tips["gamma"]
    assert forge.prs[0]["comments"] == [
        f"npu-codemod rebuilt this branch on `main` (`{main['alpha'][:12]}`): it had conflicts with it."]


def test_a_rerun_that_changes_a_pr_comments_what_changed_once(tmp_path: Path, forge) -> None:
    campaign(tmp_path, forge, ("alpha",))
    repo = tmp_path / "alpha"
    (repo / "eval.py").write_text(EVAL)
    (repo / "train.py").write_text(TRAIN.replace("memory.batch(64)\n", ""))  # fixed by hand
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an eval script; no more memory.batch")

    rerun = open_prs(tmp_path, forge, "--force-push")

    assert rerun.returncode == 0, rerun.stderr
    [comment] = forge.prs[0]["comments"]
    commit = git(repo, "rev-parse", BRANCH)
    lines = comment.splitlines()
    assert lines[0] == f"npu-codemod updated this branch (commit `{commit[:12]}`)."
    assert "- fixed: no longer need a person: 1 site(s)" in lines
    assert any(line.startswith("  - `train.py` NPU002: ") for line in lines)
    assert "- new: need a person: 1 site(s)" in lines
    assert any(line.startswith("  - `eval.py` NPU002: ") for line in lines)
    assert "- migrated: 2 site(s) (before: 1)" in lines  # the npu_init import line is no site
    assert lines[-1] == f"<!-- npu-codemod:change:{commit} -->"

    same = open_prs(tmp_path, forge)  # no change: no comment
    assert same.returncode == 0, same.stderr
    assert len(forge.prs[0]["comments"]) == 1


def test_waves_and_max_prs_then_the_next_run_continues(tmp_path: Path, github) -> None:
    for name in ("a", "b", "c", "d"):
        make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("a\nb wave=2\nc wave=1\nd wave=2\n")

    first = open_prs(tmp_path, github, "--max-prs", "2")

    assert first.returncode == 0, first.stderr
    assert [pr["slug"] for pr in github.prs] == ["org/c", "org/b"]  # wave 1, then wave 2 in list order
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    # d was handed to the worker while b's PR was being opened: migrated, its PR deferred;
    # a was not started at all.
    assert [(r["repo"], r["status"]) for r in run["repos"]] == [
        ("a", "deferred"), ("b", "changed"), ("c", "changed"), ("d", "changed")]
    assert run["repos"][0]["notes"] == [
        "deferred to the next run: --max-prs 2: this run has opened its 2 pull request(s)"]
    assert [pr["action"] for pr in run["repos"][3]["pull_requests"]] == ["deferred"]
    assert f"npu-codemod: d: {BRANCH}: pull request deferred: --max-prs 2: this run has opened its 2 " \
        "pull request(s); the next run opens it" in first.stderr.splitlines()
    assert git(tmp_path / "a", "branch", "--list", BRANCH) == ""
    assert "npu-codemod: 1 deferred: not started, the PR budget of this run is spent (--max-prs); the " \
        "next run continues with them" in first.stderr.splitlines()

    second = open_prs(tmp_path, github, "--max-prs", "2")

    assert second.returncode == 0, second.stderr
    assert [pr["slug"] for pr in github.prs] == ["org/c", "org/b", "org/d", "org/a"]
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [(r["repo"], r["status"]) for r in run["repos"]] == [
        ("a", "changed"), ("b", "unchanged"), ("c", "unchanged"), ("d", "unchanged")]


def test_a_bad_wave_cites_the_line(tmp_path: Path) -> None:
    make_repo(tmp_path / "a", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("# list\na wave=first\n")
    result = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    assert result.returncode == 1
    assert "npu-codemod: a: repos.txt:2: wave='first': expected a whole number (wave=1, wave=2, ...)" \
        in result.stderr.splitlines()


def test_secondary_rate_limit_is_waited_out(tmp_path: Path, github) -> None:
    github.secondary_limit["POST /repos/org/beta/pulls"] = 1
    campaign(tmp_path, github, ("alpha", "beta"))
    creates = github.calls_to("POST", r"/repos/org/beta/pulls")
    assert len(creates) == 2 and creates[1].at - creates[0].at >= 1.0
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [r["pr_error"] for r in run["repos"]] == [None, None]  # waited out: no error


def test_secondary_rate_limit_message_in_the_log(tmp_path: Path, github) -> None:
    for name in ("alpha", "beta"):
        make_repo_with_remote(tmp_path, name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\nbeta\n")
    github.secondary_limit["POST /repos/org/beta/pulls"] = 1
    result = open_prs(tmp_path, github)
    assert result.returncode == 0, result.stderr
    assert f"npu-codemod: POST {github.url}/repos/org/beta/pulls: secondary rate limit (HTTP 403); " \
        "retrying in 1s" in result.stderr.splitlines()
    assert [pr["slug"] for pr in github.prs] == ["org/alpha", "org/beta"]


def test_prs_per_hour_waits_for_the_oldest_of_the_last_n() -> None:
    now, slept, log = [0.0], [], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    budget = PrBudget(max_prs=5, per_hour=2, sleep=sleep, clock=lambda: now[0], log=log.append)
    assert budget.take() and budget.take()
    now[0] = 600.0
    assert budget.take()  # the third waits until the first is an hour old
    assert slept == [3000.0]
    assert log == ["npu-codemod: --prs-per-hour 2: 2 pull request(s) opened in the last hour; waiting 50 min"]
    assert budget.take() and budget.take()
    assert budget.spent and not budget.take()
