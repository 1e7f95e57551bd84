"""Many repositories: local paths and file:// remotes, --jobs, --push, one broken entry,
an interrupted run completed by a rerun, crash and timeout isolation, Dask."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_codemod.orchestrator.cli import main

from support.git import TF_SCRIPT, git, make_remote, make_repo
from support.signals import interruptible

BRANCH = "npu-codemod/sess-run-to-npu"
README = "# a tiny project\n"


def make_fleet(root: Path, count: int, extra: str = "", mark=lambda i: "") -> list[str]:
    """``count`` repos under ``root``: even ones local (with a bare ``origin``), odd ones only
    as a ``file://`` bare remote. Returns the repo list lines (paths relative to ``root``).

    Repos with the same content are copies of one template (git would take seconds for 40).
    """
    root.mkdir(parents=True, exist_ok=True)
    templates: dict[str, Path] = {}
    lines = []
    for i in range(count):
        work, bare = root / f"r{i:02}", root / f"r{i:02}.git"
        template = templates.get(mark(i))
        if template is None:
            make_repo(work, {"train.py": TF_SCRIPT + mark(i), "README.md": README})
            templates[mark(i)] = make_remote(work, bare).with_suffix("")
        else:
            shutil.copytree(template, work, symlinks=True)
            shutil.copytree(template.with_suffix(".git"), bare, symlinks=True)
            config = work / ".git" / "config"
            config.write_text(config.read_text().replace(f"{template}.git", str(bare)))
        lines.append(f"r{i:02}" if i % 2 == 0 else f"file://{bare}")
    (root / "repos.txt").write_text("\n".join(lines + [extra]) + "\n")
    return lines


def run_cli(root: Path, *args: str) -> int:
    return main(["run", "--repos", str(root / "repos.txt"), "--workspace", str(root / "ws"),
                 "--report-dir", str(root / "report"), "--no-progress", *args])


def findings_csv(root: Path) -> str:
    return (root / "report" / "findings.csv").read_text().replace(str(root), "ROOT")


def run_json(root: Path) -> dict:
    return json.loads((root / "report" / "run.json").read_text())


def test_forty_repos_two_jobs_push_each_branch_and_match_one_job(tmp_path, capsys):
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    for root in (serial, parallel):
        make_fleet(root, 40, extra="does-not-exist")
    assert run_cli(serial, "--jobs", "1") == 1
    assert run_cli(parallel, "--jobs", "2", "--push") == 1
    stderr = capsys.readouterr().err

    assert findings_csv(parallel) == findings_csv(serial)
    assert f"npu-codemod: does-not-exist: {parallel}/repos.txt:41: no such path: {parallel}/does-not-exist" in stderr
    repos = run_json(parallel)["repos"]
    assert len(repos) == 41
    assert [r["status"] for r in repos] == ["changed"] * 40 + ["failed"]
    assert repos[-1]["error"] == f"{parallel}/repos.txt:41: no such path: {parallel}/does-not-exist"
    assert all(r["pushed"] for r in repos[:40])
    for i, repo in enumerate(repos[:40]):
        remote = parallel / f"r{i:02}.git"
        assert git(remote, "rev-parse", BRANCH) == repo["commit"]
        assert git(remote, "rev-list", "--count", f"main..{BRANCH}") == "1"
    serial_repos = run_json(serial)["repos"]
    assert [r["files_changed"] for r in serial_repos] == [r["files_changed"] for r in repos]


def test_rerun_reuses_branches_and_adds_no_commit(tmp_path):
    make_fleet(tmp_path, 4)
    assert run_cli(tmp_path, "--jobs", "2", "--push") == 0
    first = [r["commit"] for r in run_json(tmp_path)["repos"]]
    assert run_cli(tmp_path, "--jobs", "2", "--push") == 0
    repos = run_json(tmp_path)["repos"]
    assert [r["status"] for r in repos] == ["unchanged"] * 4
    assert [r["commit"] for r in repos] == first


def test_same_repo_listed_twice_is_processed_once(tmp_path):
    make_repo(tmp_path / "a")
    (tmp_path / "repos.txt").write_text(f"a\n./a\n{tmp_path}/a\n")
    assert run_cli(tmp_path, "--jobs", "2") == 0
    assert [r["repo"] for r in run_json(tmp_path)["repos"]] == ["a"]


def test_only_failed_reruns_just_the_failed_repos(tmp_path):
    make_fleet(tmp_path, 2, extra="late")
    assert run_cli(tmp_path, "--jobs", "2") == 1
    (tmp_path / "report").rename(tmp_path / "first")
    make_repo(tmp_path / "late")
    assert run_cli(tmp_path, "--jobs", "2", "--only-failed", str(tmp_path / "first" / "run.json")) == 0
    # The others are carried over from the first run: the reports cover the whole list.
    first = json.loads((tmp_path / "first" / "run.json").read_text())
    assert [(r["repo"], r["status"], r.get("carried_over")) for r in run_json(tmp_path)["repos"]] == [
        (r["repo"], r["status"], first["id"]) for r in first["repos"][:2]] + [("late", "changed", None)]


def test_only_failed_tells_a_malformed_line_from_a_good_entry_of_the_same_name(tmp_path):
    make_repo(tmp_path / "a")
    (tmp_path / "repos.txt").write_text("a\na main extra\n")
    assert run_cli(tmp_path, "--jobs", "1") == 1
    (tmp_path / "report").rename(tmp_path / "first")
    assert run_cli(tmp_path, "--jobs", "1", "--only-failed", str(tmp_path / "first" / "run.json")) == 1
    assert [(r["repo"], r["status"], bool(r.get("carried_over"))) for r in run_json(tmp_path)["repos"]] == [
        ("a", "changed", True), ("a", "failed", False)]


SABOTAGE_PLUGIN = '''
import os, signal, time
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    if "# crash" in text:
        os.kill(os.getpid(), signal.SIGKILL)
    if "# hang" in text:
        time.sleep(600)
    return ()
'''


# The healthy repositories get 20 s each: enough on a loaded 2-core machine, which a 3 s
# deadline was not (every repository timed out at load 9); the hanging one sleeps for 600 s.
def test_a_dying_worker_and_a_hanging_repo_fail_alone(tmp_path, capsys):
    plugin = tmp_path / "sabotage.py"
    plugin.write_text(SABOTAGE_PLUGIN)
    marks = {1: "# crash\n", 2: "# hang\n"}
    make_fleet(tmp_path, 6, mark=lambda i: marks.get(i, ""))
    code = run_cli(tmp_path, "--jobs", "2", "--repo-timeout", "20", "--plugin", str(plugin))
    assert code == 1
    repos = run_json(tmp_path)["repos"]
    assert [r["status"] for r in repos] == ["changed", "failed", "failed", "changed", "changed", "changed"]
    assert repos[1]["error"] == "crashed: worker process died (killed by SIGKILL)"
    assert repos[2]["error"] == "timed out after 20 s (--repo-timeout)"


SLOW_PLUGIN = '''
import os
import time
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    if "# slow" in text:
        open(os.path.join(os.environ["SLOW_MARKS"], str(os.getpid())), "w").close()  # this worker is stuck
        time.sleep(600)
    return ()
'''


def test_interrupted_run_then_rerun_processes_every_repo_once(tmp_path):
    """A real SIGINT to a real CLI process midway: repos 0-9 are done, 10-39 are stuck in
    a slow plugin. The rerun (without it) completes the rest with one commit each."""
    plugin = tmp_path / "slow.py"
    plugin.write_text(SLOW_PLUGIN)
    root = tmp_path / "fleet"
    make_fleet(root, 40, mark=lambda i: "# slow\n" if i >= 10 else "")
    scratch, marks = tmp_path / "tmp", tmp_path / "marks"
    scratch.mkdir()
    marks.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "SLOW_MARKS": str(marks)}
    command = [sys.executable, "-m", "npu_codemod", "run", "--repos", str(root / "repos.txt"),
               "--workspace", str(root / "ws"), "--report-dir", str(root / "report"),
               "--no-progress", "--jobs", "2"]
    process = subprocess.Popen(command + ["--plugin", str(plugin)], env=env,
                               stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    # Both workers stuck in slow repositories: each took its slow one only after the parent had
    # its last result, so every one of 0-9 is in (a branch alone may be ahead of its result).
    while sum(_has_branch(root, i) for i in range(10)) < 10 or len(list(marks.iterdir())) < 2:
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert "interrupted; rerun (or rerun with --only-failed RUN_JSON) to complete the remaining " \
        "repositories" in process.stderr.read()
    assert not any(_has_branch(root, i) for i in range(10, 40))
    partial = run_json(root)["repos"]  # what finished, and the rest as interrupted
    assert [r["status"] for r in partial] == ["changed"] * 10 + ["failed"] * 30
    assert {r["error"] for r in partial[10:]} == {
        "interrupted before it finished: rerun, or rerun with --only-failed RUN_JSON"}
    assert list(scratch.iterdir()) == []  # no temporary index left behind
    assert not list((root / "ws" / "clones").glob("*.partial-*"))

    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    statuses = [r["status"] for r in run_json(root)["repos"]]
    assert statuses == ["unchanged"] * 10 + ["changed"] * 30
    for i in range(40):
        repo = _repo_path(root, i)
        assert git(repo, "rev-list", "--count", f"main..{BRANCH}") == "1"
        assert git(repo, "worktree", "list").count("\n") == 0  # only the repo's own
    assert list(scratch.iterdir()) == []


def _repo_path(root: Path, i: int) -> Path:
    if i % 2 == 0:
        return root / f"r{i:02}"
    # The finished clone: not its .lock, nor a .partial-* clone that is renamed in meanwhile.
    return next(path for path in (root / "ws" / "clones").glob(f"r{i:02}.git-*")
                if not path.name.endswith(".lock") and ".partial-" not in path.name)


def _has_branch(root: Path, i: int) -> bool:
    try:
        path = _repo_path(root, i)
    except StopIteration:
        return False
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{BRANCH}"],
                          cwd=path, capture_output=True)
    return done.returncode == 0


def test_dask_executor_gives_the_same_findings_as_the_local_pool(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    local, remote = tmp_path / "local", tmp_path / "dask"
    for root in (local, remote):
        make_fleet(root, 6)
    assert run_cli(local, "--jobs", "2") == 0
    monkeypatch.chdir(tmp_path)  # the scheduler's workers must not depend on our cwd
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert run_cli(remote, "--executor", "dask", "--scheduler", cluster.scheduler_address) == 0
    assert findings_csv(remote) == findings_csv(local)
    assert [r["status"] for r in run_json(remote)["repos"]] == ["changed"] * 6


def test_dask_without_scheduler_is_a_usage_error(tmp_path, capsys):
    make_fleet(tmp_path, 1)
    assert run_cli(tmp_path, "--executor", "dask") == 2
    assert capsys.readouterr().err.strip() == "npu-codemod: error: --executor dask needs --scheduler ADDRESS"
