"""SIGINT and SIGTERM in the middle of a batch (the real CLI in a subprocess): a clean stop with
one line and exit code 128 + signal, every repository and report file whole (old or new), no
worktree or scratch file left, and a rerun completes the batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npu_codemod.reports.atomic import atomic_open, write_atomic

from support.cli import cli
from support.git import git, make_repo, show
from support.repo_state import repo_state
from support.signals import interruptible

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"
MIGRATED = b"from npu_bridge.npu_init import *\nimport tensorflow as tf\ny = npu_ops.dropout(x, 0.5)\n"
BLOCK = "# npu-codemod-test: block here\n"
#: A plugin whose analysis never ends on files holding BLOCK: the signal finds those repos
#: in flight, deterministically. It says where it is by creating a file per blocked file.
HOLDING_PLUGIN = '''
import os, pathlib, time
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    if "npu-codemod-test: block here" in text:
        marker = pathlib.Path(os.environ["NPU_TEST_MARKERS"], text.splitlines()[-1].strip("# "))
        marker.write_text(str(os.getpid()))
        time.sleep(600)
'''
REPOS = ["r1", "r2", "r3", "r4", "r5"]
BLOCKED = ("r3", "r4")  # picked up by the two workers once r1 and r2 are done


def wait_for(condition, what: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, (what, process.communicate())
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def batch(tmp_path: Path):
    for name in REPOS:
        text = TRAIN + (BLOCK + f"# {name}\n" if name in BLOCKED else "")
        make_repo(tmp_path / name, {"train.py": text, "README.md": f"{name}\n"})
        (tmp_path / name / "README.md").write_text("uncommitted edit\n")
    (tmp_path / "repos.txt").write_text("\n".join(REPOS) + "\n")
    (tmp_path / "holding.py").write_text(HOLDING_PLUGIN)
    (tmp_path / "markers").mkdir()
    return tmp_path


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """The run's TMPDIR: temporary index files must all be gone after the signal."""
    (tmp_path / "scratch").mkdir()
    return tmp_path / "scratch"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_stops_cleanly_and_a_rerun_completes(batch: Path, scratch: Path, sig: int) -> None:
    root = batch
    scan = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=root)
    assert scan.returncode == 0, scan.stderr
    old_reports = {p.name: p.read_bytes() for p in (root / "rep").iterdir()}
    before = {name: repo_state(root / name, BRANCH) for name in REPOS}
    env = {**os.environ, "NPU_TEST_MARKERS": str(root / "markers"), "TMPDIR": str(scratch)}
    process = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--report-dir", "rep",
         "--no-progress", "--jobs", "2", "--plugin", str(root / "holding.py")],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=interruptible)
    wait_for(lambda: len(list((root / "markers").iterdir())) == len(BLOCKED), "both workers to block",
             process)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=120)

    assert process.returncode == 128 + sig
    how = "interrupted" if sig == signal.SIGINT else "terminated"
    assert stderr.splitlines()[-1] == (f"npu-codemod: {how}; rerun (or rerun with --only-failed "
                                       "RUN_JSON) to complete the remaining repositories")
    assert "Traceback" not in stderr
    for marker in (root / "markers").iterdir():  # the blocked workers are gone too
        with pytest.raises(ProcessLookupError):
            os.kill(int(marker.read_text()), 0)
    for name in REPOS:
        repo = root / name
        assert repo_state(repo, BRANCH) == before[name]
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        branch = git(repo, "branch", "--list", BRANCH)
        if name in ("r1", "r2"):  # finished before the signal: a whole commit
            assert show(repo, BRANCH, "train.py") == MIGRATED
        else:  # in flight or never started: nothing
            assert branch == ""
        git(repo, "fsck", "--no-dangling", "--no-progress")
    # Reports of what finished, whole; the rest failed as interrupted; no temporary file left.
    assert sorted(p.name for p in (root / "rep").iterdir()) == sorted(old_reports)
    partial = json.loads((root / "rep" / "run.json").read_text())["repos"]
    assert [(r["repo"], r["status"]) for r in partial] == [
        ("r1", "changed"), ("r2", "changed"), ("r3", "failed"), ("r4", "failed"), ("r5", "failed")]
    assert partial[2]["error"].startswith("interrupted before it finished")
    assert list(scratch.iterdir()) == []

    rerun = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--no-progress",
                "--only-failed", "rep/run.json", cwd=root)
    assert rerun.returncode == 0, rerun.stderr
    resumed = json.loads((root / "rep2" / "run.json").read_text())["repos"]
    # Every repository of the list: the finished ones carried over from the interrupted run.
    assert [(r["repo"], r["status"], bool(r.get("carried_over"))) for r in resumed] == [
        ("r1", "changed", True), ("r2", "changed", True), ("r3", "changed", False),
        ("r4", "changed", False), ("r5", "changed", False)]
    for name in REPOS:
        migrated = show(root / name, BRANCH, "train.py")
        assert migrated.startswith(MIGRATED)
        assert git(root / name, "rev-list", "--count", BRANCH) == "2"
        assert repo_state(root / name, BRANCH) == before[name]


def test_results_spooled_mid_run_leave_no_file_even_after_sigkill(batch: Path) -> None:
    """The finished repos' records wait in the report dir in a file without a name: nothing
    is there to see during the run, nor to clean up after a kill that no handler sees."""
    root = batch
    (root / "rep").mkdir()
    (root / "rep" / "run.json").write_text("{}\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "scan", "--repos", "repos.txt", "--report-dir", "rep",
         "--no-progress", "--jobs", "2", "--no-cache", "--plugin", str(root / "holding.py")],
        cwd=root, env={**os.environ, "NPU_TEST_MARKERS": str(root / "markers")},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(list((root / "markers").iterdir())) == len(BLOCKED), "both workers to block",
                 process)  # mid-batch: r1 and r2 done, r3 and r4 in flight
        spooled = [target for target in open_files(process.pid) if target.startswith(str(root / "rep"))]
        assert len(spooled) == 1 and spooled[0].endswith(" (deleted)")
        # Besides the old report, only the run's lock (batch/locks.py): no record to see.
        assert sorted(p.name for p in (root / "rep").iterdir()) == [".npu-codemod.lock", "run.json"]
    finally:
        process.kill()
        for marker in (root / "markers").iterdir():  # its workers, orphaned
            os.kill(int(marker.read_text()), signal.SIGKILL)
        process.wait(timeout=120)
    # A kill no handler sees leaves the lock, naming the dead run: the next run takes it over.
    assert sorted(p.name for p in (root / "rep").iterdir()) == [".npu-codemod.lock", "run.json"]
    assert json.loads((root / "rep" / ".npu-codemod.lock").read_text())["pid"] == process.pid


def open_files(pid: int) -> list[str]:
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed meanwhile
            continue
    return targets


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as stream:
            stream.write("half of the new")
            raise RuntimeError("disk full")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    write_atomic(target, "new\r\n", newline="")
    assert target.read_bytes() == b"new\r\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
