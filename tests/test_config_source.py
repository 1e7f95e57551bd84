"""Rule settings are read by one rule for every command (orchestrator/arguments.config_path):
--config FILE, else the pyproject.toml of the folder the command works from."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import cli
from support.git import make_repo

SETTINGS = '[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n'


def npu007_style(rows: list[dict]) -> str:
    settings = next(row["settings"] for row in rows if row["id"] == "NPU007")
    return next(setting["value"] for setting in settings if setting["name"] == "style")


def test_rules_and_check_read_the_current_folder_run_reads_the_lists(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(SETTINGS)
    listed = cli("rules", "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert npu007_style(json.loads(listed.stdout)) == "helper"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert npu007_style(json.loads(cli("rules", "--format", "json", cwd=elsewhere).stdout)) == "inline"
    explicit = cli("rules", "--format", "json", "--config", str(tmp_path / "pyproject.toml"),
                   cwd=elsewhere)
    assert npu007_style(json.loads(explicit.stdout)) == "helper"


def test_run_reads_the_pyproject_next_to_the_repo_list(tmp_path: Path) -> None:
    make_repo(tmp_path / "lists" / "trainer",
              {"train.py": "import tensorflow as tf\nsess = tf.Session()\nsess.run(x)\n"})
    (tmp_path / "lists" / "repos.txt").write_text("trainer\n")
    (tmp_path / "lists" / "pyproject.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "bad"\n')
    done = cli("scan", "--repos", "lists/repos.txt", "--report-dir", "out", "--no-progress",
               cwd=tmp_path)
    assert done.returncode == 2
    assert "lists/pyproject.toml" in done.stderr and "style" in done.stderr
