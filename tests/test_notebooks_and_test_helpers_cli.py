"""End to end on a real git repository (issue 25): test helpers (``test_utils.py``,
``*_test_utils.py``, ...) are test code, skipped and counted; a notebook that uses TensorFlow
gets one ``NPU000`` finding, counted in the reports, and is never rewritten; ``run``, ``scan``
and ``check`` agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.file_kinds import NOTEBOOK

from support.cli import check_lines, cli
from support.csvfiles import read_csv
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = """\
import tensorflow as tf

from agent.model import q_network


def main():
    dataset = tf.data.TFRecordDataset(["replay.tfrecord"]).repeat().batch(64)
    q_values = q_network(dataset.make_one_shot_iterator().get_next())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(q_values)


if __name__ == "__main__":
    main()
"""
MODEL = """\
import tensorflow as tf


def q_network(observations, keep_prob=0.9):
    hidden = tf.layers.dense(observations, 512, activation=tf.nn.relu)
    return tf.layers.dense(tf.nn.dropout(hidden, keep_prob), 18)
"""
HELPER = """\
import tensorflow as tf


def fake_replay(batch_size=4):
    return tf.data.Dataset.from_tensor_slices(tf.zeros([16, 84])).batch(batch_size)


def check_dropout(x):
    return tf.nn.dropout(x, 0.5)
"""
HELPERS = {"agent/test_utils.py": HELPER, "agent/tests_utils.py": HELPER,
           "agent/testing_utils.py": HELPER, "agent/model_test_utils.py": HELPER,
           "agent/replay_testing.py": HELPER}


def notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
                   **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                  for kind, source in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 2,
    }, indent=1)


EXPLORE = notebook(
    ("markdown", "# Q-values of a trained agent\nLoads a checkpoint and plots them."),
    ("code", "import numpy as np\nimport tensorflow.compat.v1 as tf\n\nfrom agent.model import q_network"),
    ("code", "sess = tf.Session()\nq = q_network(tf.placeholder(tf.float32, [None, 84]))\n"
             "print(np.shape(sess.run(q, {...})))"),
)
PLOTS = notebook(
    ("markdown", "Training curves (no TensorFlow here: `import tensorflow` is only mentioned)."),
    ("code", "import pandas as pd\nframe = pd.read_csv('progress.csv')\nframe.plot(y='reward')"),
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "agent"
    make_repo(path, {"train.py": TRAIN, "agent/__init__.py": "", "agent/model.py": MODEL,
                     "notebooks/explore.ipynb": EXPLORE, "notebooks/plots.ipynb": PLOTS,
                     "notebooks/.ipynb_checkpoints/explore-checkpoint.ipynb": EXPLORE,  # autosave
                     "tests/sanity.ipynb": EXPLORE, **HELPERS})
    (tmp_path / "repos.txt").write_text("agent\n")
    return path


def test_helpers_are_skipped_and_tensorflow_notebooks_reported(repo: Path, tmp_path: Path) -> None:
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"][0]
    assert record["files_changed"] == ["agent/model.py", "train.py"]
    assert (record["files_scanned"], record["files_skipped"]) == (3, 6)  # 5 helpers + tests/
    for path, text in {**HELPERS, "notebooks/explore.ipynb": EXPLORE}.items():
        assert show(repo, BRANCH, path).decode() == text
    assert [(f["path"], f["line"], f["rule_id"], f["status"], f["message"]) for f in record["findings"]
            if f["path"].endswith(".ipynb")] == [
        ("notebooks/explore.ipynb", 1, "NPU000", "unmigrated", NOTEBOOK)]
    assert not {f["path"] for f in record["findings"]} & set(HELPERS)
    rows = read_csv(tmp_path / "rep" / "findings.csv")
    assert [row["path"] for row in rows if row["rule_id"] == "NPU000"] == ["notebooks/explore.ipynb"]
    assert NOTEBOOK.startswith("notebooks are not migrated: ")


def test_include_tests_rewrites_the_helpers_and_reports_the_test_notebook(
        repo: Path, tmp_path: Path) -> None:
    done = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress",
               "--include-tests", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"][0]
    assert record["files_changed"] == sorted(["agent/model.py", "train.py", *HELPERS])
    assert sorted(f["path"] for f in record["findings"] if f["rule_id"] == "NPU000") == [
        "notebooks/explore.ipynb", "tests/sanity.ipynb"]


def test_check_reports_the_notebook_and_skips_the_helpers_as_run_does(repo: Path) -> None:
    lines = check_lines(repo, ".", expect=1)
    assert sorted({line.split(":")[0] for line in lines}) == [
        "agent/model.py", "notebooks/explore.ipynb", "train.py"]
    assert f"notebooks/explore.ipynb:1:1: NPU000 {NOTEBOOK}" in lines
    assert check_lines(repo, "notebooks/plots.ipynb", *HELPERS, expect=0) == []
    assert check_lines(repo, "notebooks/explore.ipynb", expect=1) == [
        f"notebooks/explore.ipynb:1:1: NPU000 {NOTEBOOK}"]
    included = check_lines(repo, "--include-tests", "tests", "agent", expect=1)
    assert f"tests/sanity.ipynb:1:1: NPU000 {NOTEBOOK}" in included
    assert {line.split(":")[0] for line in included} >= set(HELPERS)
