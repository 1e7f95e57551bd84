"""Ctrl-C, then ``--only-failed`` into the same report dir (the real CLI, real git): the
resumed run's reports cover every repository of the list, the finished ones carried over
with the id of the run that made them, and the history shows no false drop."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.cli import cli
from support.git import make_repo
from support.signals import interruptible

TRAIN = "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"
HOLDING_PLUGIN = '''
import os, pathlib, time
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    if "hold me" in text and not os.environ.get("NPU_TEST_NO_HOLD"):
        pathlib.Path(os.environ["NPU_TEST_MARKERS"], "held").write_text(str(os.getpid()))
        time.sleep(600)
'''
REPOS = ["r1", "r2", "r3", "r4"]


def history(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "rep" / "history.jsonl").read_text().splitlines()]


def test_ctrl_c_then_only_failed_reports_cover_the_whole_list(tmp_path: Path) -> None:
    root = tmp_path
    for name in REPOS:
        make_repo(root / name, {"train.py": TRAIN})
    (root / "repos.txt").write_text("\n".join(REPOS) + "\n")
    (root / "holding.py").write_text(HOLDING_PLUGIN)
    (root / "markers").mkdir()
    base = ["--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--jobs", "1",
            "--plugin", str(root / "holding.py")]
    first = cli("run", *base, cwd=root, env={**os.environ, "NPU_TEST_NO_HOLD": "1"})
    assert first.returncode == 0, first.stderr
    # A second, changed campaign state: r4 gets a new file to migrate; the run is interrupted at r3,
    # whose file changed too (an unchanged one's analysis would come from the result cache).
    (root / "r4" / "more.py").write_text(TRAIN)
    (root / "r3" / "train.py").write_text(TRAIN + "# hold me\n")
    for name, changed in (("r4", "more.py"), ("r3", "train.py")):
        subprocess.run(["git", "add", changed], cwd=root / name, check=True)
        subprocess.run(["git", "commit", "-qm", "more"], cwd=root / name, check=True)
    process = subprocess.Popen([sys.executable, "-m", "npu_codemod", "run", *base], cwd=root,
                               env={**os.environ, "NPU_TEST_MARKERS": str(root / "markers")},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interruptible)
    deadline = time.monotonic() + 120
    while not (root / "markers" / "held").exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=120)
    assert process.returncode == 130
    interrupted = json.loads((root / "rep" / "run.json").read_text())
    assert [r["status"] for r in interrupted["repos"]] == ["unchanged", "unchanged", "failed", "failed"]
    assert interrupted["interrupted"] is True
    assert len(history(root)) == 1  # the interrupted run is no campaign state

    resumed = cli("run", *base, "--only-failed", "rep/run.json", cwd=root,
                  env={**os.environ, "NPU_TEST_NO_HOLD": "1"})

    assert resumed.returncode == 0, resumed.stderr
    assert "npu-codemod: 2 finished repositories carried over from the earlier run (--only-failed): " \
        "the reports cover every repository of the list" in resumed.stderr
    run = json.loads((root / "rep" / "run.json").read_text())
    assert [(r["repo"], r["status"], r.get("carried_over")) for r in run["repos"]] == [
        ("r1", "unchanged", interrupted["id"]), ("r2", "unchanged", interrupted["id"]),
        ("r3", "changed", None), ("r4", "changed", None)]  # r3: its base moved (the comment)
    assert run["repos"][0]["notes"][-1] == f"carried over from run {interrupted['id']} (--only-failed)"
    with (root / "rep" / "repos.csv").open(newline="") as stream:
        assert [row["repo"] for row in csv.DictReader(stream)] == REPOS
    with (root / "rep" / "findings.csv").open(newline="") as stream:
        assert sorted({row["repo"] for row in csv.DictReader(stream)}) == REPOS
    page = (root / "rep" / "report.html").read_text()
    assert all(f">{name}<" in page for name in REPOS) and "carried over from run" in page
    points = history(root)
    assert [(p["repos"]["processed"], p["findings"]["migrated"], p["carried_over"]) for p in points] == [
        (4, 4, 0), (4, 5, 2)]  # no drop: the second point is the whole campaign, r4's new file included


def test_only_failed_refuses_the_record_of_another_command(tmp_path: Path) -> None:
    make_repo(tmp_path / "r1", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("r1\n")
    scan = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    assert scan.returncode == 0, scan.stderr
    run = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--no-progress",
              "--only-failed", "rep/run.json", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr == ("npu-codemod: error: --only-failed rep/run.json: that run was a scan: "
                          "resume it with the same command\n")
