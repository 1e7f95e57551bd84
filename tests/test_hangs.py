"""Remotes that accept a connection and never answer: every network operation has a deadline,
so the batch ends with its reports and only that repository fails (real git, a real listener
on 127.0.0.1 that never sends a byte)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.cli import cli
from support.git import make_repo
from support.hostile import silent_listener


def test_a_silent_git_remote_fails_its_repository_and_the_batch_ends(tmp_path: Path):
    make_repo(tmp_path / "good")
    with silent_listener() as port:
        url = f"http://127.0.0.1:{port}/org/stalled.git"
        (tmp_path / "repos.txt").write_text(f"{url}\ngood\n")
        # git's default low-speed window is 60 s; the user's shorter one is honoured
        env = {**os.environ, "GIT_HTTP_LOW_SPEED_TIME": "2"}
        done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--workspace", "ws",
                   "--no-progress", "--jobs", "2", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stderr
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    stalled, good = run["repos"]
    assert good["status"] == "changed"
    assert stalled["status"] == "failed"
    assert stalled["error"].startswith(f"cannot clone {url}: ")
    assert "timed out" not in stalled["error"]  # git's own deadline, not --repo-timeout's


def test_repo_timeout_has_a_default_a_user_can_raise(tmp_path: Path):
    make_repo(tmp_path / "good")
    (tmp_path / "repos.txt").write_text("good\n")
    help_text = cli("run", "--help", cwd=tmp_path, expect=0).stdout
    assert "(default: 3600," in " ".join(help_text.split())
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--repo-timeout",
        "86400", cwd=tmp_path, expect=0)
