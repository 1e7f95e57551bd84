"""``npu-codemod check``: the CI gate / pre-commit hook over plain files and folders."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from gitutil import make_repo, show
from reportcase import cli

from npu_codemod.orchestrator.check import changed_lines

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (
    "import tensorflow as tf\n"
    "\n"
    "ds = tf.data.TextLineDataset('train.txt').batch(32)\n"
    "x = tf.placeholder(tf.float32)\n"
    "y = tf.nn.dropout(x, 0.5)\n"
)
NEEDS_PERSON = "import tensorflow as tf\n\nbatch = memory.batch(32)\n"


def check(cwd: Path, *paths: str, expect: int) -> list[str]:
    return cli(cwd, "check", *paths, expect=expect).stdout.splitlines()


def test_unmigrated_script_fails_and_its_migrated_version_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPT})
    lines = check(repo, "train.py", expect=1)
    assert "train.py:3:43: NPU002 [fixable by npu-codemod run] added drop_remainder=True" in lines[1]
    assert [line.split(": ")[1].split()[0] for line in lines] == ["NPU001", "NPU002", "NPU004"]
    (tmp_path / "repos.txt").write_text("repo\n")
    cli(tmp_path, "run", "--repos", "repos.txt", "--report-dir", "report", "--no-progress")
    migrated = tmp_path / "migrated"
    migrated.mkdir()
    (migrated / "train.py").write_bytes(show(repo, "npu-codemod/sess-run-to-npu", "train.py"))
    assert check(migrated, "train.py", expect=0) == []


def test_sites_needing_a_person_fail_with_line_and_one_based_column(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(NEEDS_PERSON)
    (tmp_path / "plain.py").write_text("import os\n")
    [line] = check(tmp_path, "agent.py", "plain.py", expect=1)
    assert re.fullmatch(r"agent\.py:3:16: NPU002 if this is a tf\.data\.Dataset, .*", line)


def test_folders_are_walked_skipping_hidden_and_cache_folders(tmp_path: Path) -> None:
    for folder in ("src/models", ".venv/lib", "src/__pycache__"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "agent.py").write_text(NEEDS_PERSON)
    assert [line.split(":")[0] for line in check(tmp_path, "src", expect=1)] == [
        str(Path("src/models/agent.py"))]
    assert check(tmp_path, "src/__pycache__/agent.py", expect=1)  # named files are always read


def test_rule_settings_come_from_the_pyproject_toml_here_or_from_config(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "pyproject.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "sideways"\n')
    done = cli(tmp_path, "check", "train.py", expect=2)
    assert done.stderr.strip().splitlines() == [
        f"npu-codemod: error: {tmp_path / 'pyproject.toml'}: setting 'style' of rule NPU007 must be "
        "one of 'inline', 'helper', got 'sideways'"]
    (tmp_path / "good.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n')
    assert len(check(tmp_path, "train.py", "--config", "good.toml", expect=1)) == 3


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    done = cli(tmp_path, "check", "nope.py", expect=2)
    assert done.stderr == "npu-codemod: error: no such file or folder: nope.py\n"


def test_pre_commit_hook_runs_check_on_the_staged_files(tmp_path: Path) -> None:
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    entry = re.search(r"^\s+entry:\s*(.+)$", hook, re.M).group(1).split()
    assert re.search(r"^\s+types:\s*\[python\]$", hook, re.M)
    executable = shutil.which(entry[0], path=str(Path(sys.executable).parent))
    assert executable, f"{entry[0]} is not installed next to {sys.executable}"
    (tmp_path / "agent.py").write_text(NEEDS_PERSON)
    (tmp_path / "ok.py").write_text("import os\n")
    run = [executable, *entry[1:]]
    assert subprocess.run([*run, "agent.py", "ok.py"], cwd=tmp_path).returncode == 1
    assert subprocess.run([*run, "ok.py"], cwd=tmp_path).returncode == 0


def test_changed_lines_marks_replaced_lines_and_both_sides_of_an_insertion() -> None:
    old = "a\nb\nc\nd\n"
    assert changed_lines(old, "a\nB\nc\nd\n") == {2}
    assert changed_lines(old, "a\nb\nnew\nc\nd\n") == {2, 3}
    assert changed_lines(old, old) == set()
