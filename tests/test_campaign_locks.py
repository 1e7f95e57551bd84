"""Two runs at once (real processes, the real CLI, real git): the report dir and each
repository's branch are locked by the run that has them; a second run waits (``--wait``) or
is refused with one line naming the other run; a dead run's lock is taken over."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch import locks
from npu_codemod.orchestrator.batch.locks import LockOwner

from support.cli import cli
from support.git import git, make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"
MIGRATED = b"from npu_bridge.npu_init import *\nimport tensorflow as tf\ny = npu_ops.dropout(x, 0.5)\n"
#: Holds a worker inside the analysis of a file that asks for it, until the test lets go:
#: the first run is then in the middle of that repository, deterministically.
HOLDING_PLUGIN = '''
import os, pathlib, time
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    if "hold me" in text:
        markers = pathlib.Path(os.environ["NPU_TEST_MARKERS"])
        (markers / "held").write_text(str(os.getpid()))
        while not (markers / "go").exists():
            time.sleep(0.05)
'''
HELD_PATTERN = re.compile(r"pid (\d+), started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    make_repo(tmp_path / "held", {"train.py": TRAIN + "# hold me\n"})
    for name in ("free1", "free2"):
        make_repo(tmp_path / name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("held\nfree1\nfree2\n")
    (tmp_path / "holding.py").write_text(HOLDING_PLUGIN)
    (tmp_path / "markers").mkdir()
    return tmp_path


def start_first(root: Path, *extra: str) -> subprocess.Popen:
    """The first run, holding the repository ``held`` (its branch lock taken) until ``go``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir", "rep1",
         "--no-progress", "--jobs", "1", "--plugin", str(root / "holding.py"), *extra],
        cwd=root, env={**os.environ, "NPU_TEST_MARKERS": str(root / "markers")},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (root / "markers" / "held").exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the first run never reached the held repository"
        time.sleep(0.05)
    return process


def finish(root: Path, process: subprocess.Popen) -> tuple[int, str]:
    (root / "markers" / "go").write_text("")
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr


def second(root: Path, report: str, *extra: str) -> subprocess.CompletedProcess:
    return cli("run", "--repos", "repos.txt", "--report-dir", report, "--no-progress", "--jobs", "1",
               *extra, cwd=root)


def repos_of(root: Path, report: str) -> list[tuple[str, str]]:
    return [(r["repo"], r["status"]) for r in json.loads((root / report / "run.json").read_text())["repos"]]


def test_same_report_dir_is_refused_in_one_line_naming_the_other_run(repos: Path) -> None:
    root = repos
    first = start_first(root)
    refused = second(root, "rep1")
    code, stderr = finish(root, first)

    assert refused.returncode == 2
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith("npu-codemod: error: report dir 'rep1' is in use by another npu-codemod run (")
    assert line.endswith("): wait for it with --wait, or use another --report-dir (lock file "
                         "rep1/.npu-codemod.lock: delete it if that run is gone)")
    assert HELD_PATTERN.search(line).group(1) == str(first.pid)
    assert code == 0, stderr
    assert repos_of(root, "rep1") == [("held", "changed"), ("free1", "changed"), ("free2", "changed")]
    assert not (root / "rep1" / ".npu-codemod.lock").exists()


def test_same_repositories_other_report_dir_refuse_the_held_branch_only(repos: Path) -> None:
    root = repos
    first = start_first(root)
    other = second(root, "rep2")
    code, stderr = finish(root, first)

    assert other.returncode == 1
    [line] = [line for line in other.stderr.splitlines() if line.startswith("npu-codemod: held:")]
    assert line.startswith(f"npu-codemod: held: branch {BRANCH} is being worked on by another "
                           "npu-codemod run (pid ")
    assert line.endswith("): rerun once it has ended, or pass --wait (lock file "
                         f"{root / 'held' / '.git' / 'npu-codemod-npu-codemod-sess-run-to-npu.lock'}: "
                         "delete it if that run is gone)")
    assert HELD_PATTERN.search(line).group(1) == str(first.pid)
    ours = str(root / "held" / ".git" / "npu-codemod-npu-codemod-sess-run-to-npu.lock")
    assert "cannot lock" not in other.stderr and ".lock" not in other.stderr.replace(ours, "")  # no git's
    # The first run holds "held" (first in the list) while the second migrates the rest.
    assert repos_of(root, "rep2") == [("held", "failed"), ("free1", "changed"), ("free2", "changed")]
    assert code == 0, stderr
    assert repos_of(root, "rep1") == [("held", "changed"), ("free1", "unchanged"), ("free2", "unchanged")]
    for name in ("held", "free1", "free2"):  # one migration commit each, whoever made it
        assert show(root / name, BRANCH, "train.py").startswith(MIGRATED)
        assert git(root / name, "rev-list", "--count", BRANCH) == "2"
        assert not list((root / name / ".git").glob("npu-codemod-*.lock"))


def test_wait_waits_for_the_other_run_then_does_its_own_work(repos: Path) -> None:
    root = repos
    first = start_first(root)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir", "rep1",
         "--no-progress", "--jobs", "2", "--wait"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert waiting.stderr is not None
    said = waiting.stderr.readline()  # once it has met the first run's lock
    assert waiting.poll() is None  # still waiting on the first run
    rep1_during = (root / "rep1" / "run.json").exists()
    code, stderr = finish(root, first)
    _, waited = waiting.communicate(timeout=120)

    assert not rep1_during
    assert code == 0, stderr
    assert waiting.returncode == 0, waited
    assert said.startswith(f"npu-codemod: waiting for the run that is writing rep1 (pid {first.pid}, started ")
    assert "error:" not in waited
    # The second run's reports are its own: every repo already migrated by the first.
    assert repos_of(root, "rep1") == [("held", "unchanged"), ("free1", "unchanged"), ("free2", "unchanged")]
    history = [json.loads(line) for line in (root / "rep1" / "history.jsonl").read_text().splitlines()]
    assert [entry["repos"]["changed"] for entry in history] == [3, 0]


def test_wait_on_a_held_branch_with_another_report_dir(repos: Path) -> None:
    root = repos
    first = start_first(root)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir", "rep2",
         "--no-progress", "--jobs", "1", "--wait"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    assert waiting.poll() is None  # its worker waits on the branch of "held"
    code, stderr = finish(root, first)
    _, waited = waiting.communicate(timeout=120)

    assert (code, waiting.returncode) == (0, 0), (stderr, waited)
    assert repos_of(root, "rep2")[0] == ("held", "unchanged")
    assert git(root / "held", "rev-list", "--count", BRANCH) == "2"


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_dead_runs_locks_are_taken_over(repos: Path) -> None:
    root = repos
    import socket

    dead = LockOwner(dead_pid(), 1, socket.gethostname(), "2026-01-01T00:00:00+00:00")
    (root / "rep").mkdir()
    (root / "rep" / ".npu-codemod.lock").write_text(json.dumps(dead.__dict__))
    stale = root / "held" / ".git" / "npu-codemod-npu-codemod-sess-run-to-npu.lock"
    stale.write_text(json.dumps(dead.__dict__))

    result = second(root, "rep")

    assert result.returncode == 0, result.stderr
    assert repos_of(root, "rep") == [("held", "changed"), ("free1", "changed"), ("free2", "changed")]
    assert not stale.exists() and not (root / "rep" / ".npu-codemod.lock").exists()


def test_a_killed_run_leaves_a_lock_the_next_run_takes_over(repos: Path) -> None:
    root = repos
    first = start_first(root)
    first.kill()
    first.wait(timeout=60)
    worker = int((root / "markers" / "held").read_text())
    os.kill(worker, 9)  # its orphaned worker
    lock = root / "held" / ".git" / "npu-codemod-npu-codemod-sess-run-to-npu.lock"
    assert locks.read_owner(lock).pid == first.pid  # left behind, naming the dead run

    result = second(root, "rep1")

    assert result.returncode == 0, result.stderr
    assert repos_of(root, "rep1")[0] == ("held", "changed")
    assert not lock.exists()


def test_lock_of_a_reused_pid_is_stale_and_another_hosts_is_not(tmp_path: Path) -> None:
    me = LockOwner.of_this_process()
    assert me.is_alive()
    reused = LockOwner(me.pid, (me.ticks or 0) + 1, me.host, me.started)  # same pid, other process
    assert not reused.is_alive()
    remote = LockOwner(dead_pid(), None, "elsewhere.example", "2026-01-01T00:00:00+00:00")
    assert remote.is_alive()
    path = tmp_path / "x.lock"
    path.write_text(json.dumps(reused.__dict__))
    assert locks.try_lock(path, me) is None and locks.read_owner(path) == me
    assert locks.try_lock(path, me) is None  # one's own lock: held already
    path.write_text(json.dumps(remote.__dict__))
    assert locks.try_lock(path, me) == remote
    with pytest.raises(locks.Locked):
        locks.acquire(path, me)
    locks.release(path, me)  # not ours: left alone
    assert locks.read_owner(path) == remote
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.lock"]


def other_hosts_lock(path: Path, age: float) -> LockOwner:
    """A lock at ``path`` left by a run on another host, last touched ``age`` seconds ago."""
    owner = LockOwner(4242, 99, "ci-pod-7f9c.example", "2026-01-01T00:00:00+00:00")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(owner.__dict__))
    then = time.time() - age
    os.utime(path, (then, then))
    return owner


def test_another_hosts_expired_locks_are_taken_over(repos: Path) -> None:
    root = repos
    report_lock = root / "rep" / ".npu-codemod.lock"
    branch_lock = root / "held" / ".git" / "npu-codemod-npu-codemod-sess-run-to-npu.lock"
    for path in (report_lock, branch_lock):
        other_hosts_lock(path, locks.EXPIRY_SECONDS + 60)  # a killed CI pod's

    result = second(root, "rep")

    assert result.returncode == 0, result.stderr
    assert repos_of(root, "rep") == [("held", "changed"), ("free1", "changed"), ("free2", "changed")]
    assert not report_lock.exists() and not branch_lock.exists()


def test_another_hosts_live_lock_is_refused_naming_the_lock_file(repos: Path) -> None:
    root = repos
    branch_lock = root / "held" / ".git" / "npu-codemod-npu-codemod-sess-run-to-npu.lock"
    other_hosts_lock(branch_lock, 5)  # its heartbeat is recent
    report_lock = root / "rep2" / ".npu-codemod.lock"
    other_hosts_lock(report_lock, 5)

    refused = second(root, "rep2")
    result = second(root, "rep")

    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(f"(lock file {Path('rep2') / '.npu-codemod.lock'}: delete it if "
                                           "that run is gone)")
    assert result.returncode == 1
    held = json.loads((root / "rep" / "run.json").read_text())["repos"][0]
    assert held["status"] == "failed" and "on ci-pod-7f9c.example" in held["error"]
    assert held["error"].endswith(f"(lock file {branch_lock}: delete it if that run is gone)")
    assert branch_lock.exists()


def test_the_heartbeat_touches_only_ones_own_lock(tmp_path: Path) -> None:
    me = LockOwner.of_this_process()
    mine, theirs = tmp_path / "mine.lock", tmp_path / "theirs.lock"
    locks.acquire(mine, me)
    other = other_hosts_lock(theirs, 300)
    old = time.time() - 300
    os.utime(mine, (old, old))
    locks.refresh(mine, me)
    locks.refresh(theirs, me)
    assert mine.stat().st_mtime > old + 200
    assert theirs.stat().st_mtime < time.time() - 200 and locks.read_owner(theirs) == other
    assert not locks.expired(theirs, other) and locks.expired(theirs, other, now=time.time() + locks.EXPIRY_SECONDS)
