"""End to end on a real git repository: test files are skipped and counted, ``--include-tests``
(or ``include_tests = true``) migrates them, an eager-mode file and each ``.py`` symlink get
one ``NPU000`` finding; ``run``, ``scan`` and ``check`` agree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npu_codemod.codemods.file_kinds import SYMLINK
from npu_codemod.orchestrator.git import repository as gitrepo

from support.cli import check_lines as check_paths
from support.cli import cli, repo_record
from support.csvfiles import read_csv
from support.git import git, make_repo, show
from support.reports import Page

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = """\
import tensorflow as tf

from model.net import build

dataset = tf.data.TFRecordDataset(["train.tfrecord"]).batch(32)
loss = build(dataset.make_one_shot_iterator().get_next())
"""
NET = """\
import tensorflow as tf


def build(images, keep_prob=0.9):
    hidden = tf.layers.dense(images, 256, activation=tf.nn.relu)
    return tf.nn.dropout(hidden, keep_prob)
"""
NET_TEST = """\
import tensorflow as tf

from model.net import build


class BuildTest(tf.test.TestCase):
    def test_shape(self):
        out = build(tf.zeros([2, 8]))
        self.assertEqual(out.shape.as_list(), [2, 256])
        self.assertIsNotNone(tf.nn.dropout(out, 0.5))
"""
CONFTEST = """\
import pytest
import tensorflow as tf


@pytest.fixture
def sess():
    with tf.Session() as session:
        yield session
"""
HELPERS = "import tensorflow as tf\n\n\ndef tiny_dataset():\n    return tf.data.Dataset.range(10).batch(4)\n"
EAGER_DEMO = "import tensorflow as tf\n\ntf.enable_eager_execution()\nprint(tf.nn.dropout(tf.ones([4]), 0.5))\n"
TESTS = {"model/net_test.py": NET_TEST, "conftest.py": CONFTEST, "tests/helpers.py": HELPERS,
         "tests/unit/test_train.py": NET_TEST.replace("model.net", "train")}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    path.mkdir()
    os.symlink("train.py", path / "shared_train.py")
    (path / "tests").mkdir()
    os.symlink("../train.py", path / "tests" / "linked_test.py")
    make_repo(path, {"train.py": TRAIN, "model/__init__.py": "", "model/net.py": NET,
                     "eager_demo.py": EAGER_DEMO, **TESTS})
    (tmp_path / "repos.txt").write_text("agent\n")
    return path


def file_findings(record: dict) -> list[tuple[str, int, str, str]]:
    return [(f["path"], f["line"], f["status"], f["message"]) for f in record["findings"]
            if f["rule_id"] == "NPU000"]


def test_test_files_are_skipped_and_counted_everywhere(repo: Path, tmp_path: Path) -> None:
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = repo_record(tmp_path / "rep")
    assert record["files_changed"] == ["model/net.py", "train.py"]
    assert (record["files_scanned"], record["files_skipped"]) == (4, 5)  # 4 tests + the test link
    for path, text in TESTS.items():
        assert show(repo, BRANCH, path).decode() == text
    assert not {f["path"] for f in record["findings"]} & set(TESTS)
    assert file_findings(record) == [
        ("eager_demo.py", 3, "unmigrated", "eager execution is enabled (tf.enable_eager_execution()): "
         "this file is not sess.run code and no rule rewrote it; Ascend's API list marks eager "
         "execution unsupported: port the file to graph mode (tf.Session and sess.run) or Keras by hand"),
        ("shared_train.py", 1, "unmigrated", SYMLINK),
    ]
    assert show(repo, BRANCH, "eager_demo.py").decode() == EAGER_DEMO
    assert git(repo, "ls-tree", BRANCH, "shared_train.py").split()[0] == "120000"  # still a link
    assert json.loads((tmp_path / "rep" / "run.json").read_text())["options"]["include_tests"] is False
    assert [row["files_skipped"] for row in read_csv(tmp_path / "rep" / "repos.csv")] == ["5"]
    assert "; 5 test file(s) skipped (--include-tests migrates them)" in done.stderr.splitlines()[-2]
    page = Page((tmp_path / "rep" / "report.html").read_text(encoding="utf-8"))
    assert page.text_by_id["files-skipped"] == "5"


def test_include_tests_migrates_the_test_files(repo: Path, tmp_path: Path) -> None:
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress",
               "--include-tests", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = repo_record(tmp_path / "rep")
    assert record["files_changed"] == ["conftest.py", "model/net.py", "model/net_test.py",
                                       "tests/helpers.py", "tests/unit/test_train.py", "train.py"]
    assert (record["files_scanned"], record["files_skipped"]) == (8, 0)
    assert show(repo, BRANCH, "model/net_test.py").decode() == "from npu_bridge.npu_init import *\n" + \
        NET_TEST.replace("tf.nn.dropout(out, 0.5)", "npu_ops.dropout(out, 0.5)")
    assert [(path, message) for path, _, _, message in file_findings(record)][1:] == [
        ("shared_train.py", SYMLINK), ("tests/linked_test.py", SYMLINK)]
    assert "test file(s) skipped" not in done.stderr


def test_the_config_next_to_the_repo_list_includes_tests_and_the_option_overrides_it(
        repo: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.npu-codemod]\ninclude_tests = true\n")
    included = cli("scan", "--repos", "repos.txt", "--report-dir", "in", "--no-progress", cwd=tmp_path)
    assert included.returncode == 0, included.stderr
    assert repo_record(tmp_path / "in")["files_skipped"] == 0
    assert "tests/helpers.py" in repo_record(tmp_path / "in")["files_changed"]  # scan: would change
    excluded = cli("scan", "--repos", "repos.txt", "--report-dir", "out", "--no-progress",
                   "--no-include-tests", cwd=tmp_path)
    assert excluded.returncode == 0, excluded.stderr
    assert repo_record(tmp_path / "out")["files_skipped"] == 5
    assert repo_record(tmp_path / "out")["files_changed"] == ["model/net.py", "train.py"]


def test_check_skips_test_files_and_reports_links_and_eager_files_as_run_does(repo: Path) -> None:
    lines = check_paths(repo, ".", expect=1)
    assert sorted({line.split(":")[0] for line in lines}) == [
        "eager_demo.py", "model/net.py", "shared_train.py", "train.py"]
    assert f"shared_train.py:1:1: NPU000 {SYMLINK}" in lines
    assert [line for line in lines if line.startswith("eager_demo.py")] == [
        "eager_demo.py:3:1: NPU000 eager execution is enabled (tf.enable_eager_execution()): this "
        "file is not sess.run code and no rule rewrote it; Ascend's API list marks eager execution "
        "unsupported: port the file to graph mode (tf.Session and sess.run) or Keras by hand"]
    assert check_paths(repo, "conftest.py", "tests", "model/net_test.py", expect=0) == []
    included = check_paths(repo, "--include-tests", "tests", "model/net_test.py", expect=1)
    assert sorted({line.split(":")[0] for line in included}) == [
        "model/net_test.py", "tests/helpers.py", "tests/linked_test.py", "tests/unit/test_train.py"]
    (repo / "pyproject.toml").write_text("[tool.npu-codemod]\ninclude_tests = true\n")
    assert check_paths(repo, "conftest.py", expect=1)[0].startswith("conftest.py:")


def test_python_listing_names_the_py_links_beside_the_regular_files(tmp_path: Path) -> None:
    path = tmp_path / "r"
    path.mkdir()
    os.symlink("/etc/passwd", path / "abs.py")
    os.symlink("train.py", path / "same.py")
    os.symlink("/etc", path / "etc_link")
    make_repo(path, {"train.py": TRAIN, "notes.txt": "x\n"})
    listing = gitrepo.python_listing(gitrepo.open_repo(str(path)), git(path, "rev-parse", "HEAD"))
    assert [(f.path, f.mode) for f in listing.files] == [("train.py", "100644")]
    assert [(f.path, f.mode) for f in listing.links] == [("abs.py", "120000"), ("same.py", "120000")]
