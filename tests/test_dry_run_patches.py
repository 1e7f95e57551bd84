"""``--dry-run`` patches of files with unusual names (a tab, a newline, quotes, backslashes,
non-ASCII): headers quoted as git quotes them, so ``git apply`` takes the whole patch; and a
report dir keeps only this run's patches (real repositories, the real CLI, real git apply)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.cli import cli
from support.git import git, make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = "import tensorflow as tf\n\n\ndef head(x):\n    return tf.nn.dropout(x, 0.5)\n"
UNUSUAL = ["data/tab\there.py", "data/new\nline.py", 'data/say "hi".py', "data/back\\slash.py",
           "données/modèle.py", "plain/train.py"]


def test_a_dry_run_patch_of_unusual_file_names_applies_whole(tmp_path: Path):
    make_repo(tmp_path / "r", {name: TRAIN for name in UNUSUAL})
    (tmp_path / "repos.txt").write_text("r\n")
    cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "dry", "--no-progress",
        cwd=tmp_path, expect=0)
    (patch,) = (tmp_path / "dry" / "patches").iterdir()
    text = patch.read_text()
    assert '--- "a/data/tab\\there.py"\n' in text and '+++ "b/data/new\\nline.py"\n' in text
    assert '--- "a/donn\\303\\251es/mod\\303\\250le.py"\n' in text and "--- a/plain/train.py\n" in text
    git(tmp_path, "clone", "-q", str(tmp_path / "r"), str(tmp_path / "c"))
    git(tmp_path / "c", "apply", str(patch))
    cli("run", "--repos", "repos.txt", "--report-dir", "run", "--no-progress", cwd=tmp_path, expect=0)
    for name in UNUSUAL:
        assert (tmp_path / "c" / name).read_bytes() == show(tmp_path / "r", BRANCH, name), name
    stat = subprocess.run(["git", "apply", "--numstat", "-z", str(patch)], cwd=tmp_path / "r",
                          capture_output=True, check=True).stdout
    assert sorted(entry.split(b"\t", 2)[2].decode() for entry in stat.split(b"\0") if entry) == sorted(UNUSUAL)


def test_a_report_dir_keeps_only_this_runs_patches(tmp_path: Path):
    make_repo(tmp_path / "alpha", {"train.py": TRAIN})
    make_repo(tmp_path / "beta", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("alpha\nbeta\n")
    cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "dry", "--no-progress",
        cwd=tmp_path, expect=0)
    assert sorted(p.name for p in (tmp_path / "dry" / "patches").iterdir()) == ["001-alpha.patch", "002-beta.patch"]
    (tmp_path / "repos.txt").write_text("beta\n")
    cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "dry", "--no-progress",
        cwd=tmp_path, expect=0)
    assert sorted(p.name for p in (tmp_path / "dry" / "patches").iterdir()) == ["001-beta.patch"]
