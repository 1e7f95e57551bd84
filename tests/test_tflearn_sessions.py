"""A script that trains through tflearn (``tflearn.DNN(net).fit(...)``), whose model opens its
own session without the NPU config, is reported at its first such model made without a
session, never left alone in silence with the repository ``ready``
(``codemods/tflearn_sessions``); not when it passes a session of its own (NPU007 configures
that one), nor in a TF 2.x folder."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.tf_versions import RUNTIME_FACT, SCOPE_FACT
from npu_codemod.codemods.tflearn_sessions import message, tflearn_fact, tflearn_findings

from support.cli import cli, repo_record
from support.git import make_repo

TRAIN = '''"""A small classifier trained with tflearn."""
import numpy as np
import tensorflow as tf
import tflearn
from tflearn.layers.core import fully_connected, input_data
from tflearn.layers.estimator import regression

x, y = np.zeros((16, 4)), np.eye(2)[np.zeros(16, dtype=int)]
net = input_data(shape=[None, 4])
net = regression(fully_connected(net, 2, activation="softmax"))
model = tflearn.DNN(net, tensorboard_verbose=0)
model.fit(x, y, n_epoch=1)
evaluator = tflearn.DNN(net)
'''


def test_the_fact_names_the_first_model_made_without_a_session() -> None:
    assert tflearn_fact("train.py", TRAIN) == "tflearn-session:train.py|11|DNN"
    assert tflearn_fact("a.py", "from tflearn import DNN\n\nm = DNN(net)\n") == "tflearn-session:a.py|3|DNN"
    generator = "import tflearn.models.generator as g\n\nm = g.SequenceGenerator(net, dictionary=d)\n"
    assert tflearn_fact("g.py", generator) == "tflearn-session:g.py|3|SequenceGenerator"
    own = TRAIN.replace("tensorboard_verbose=0", "session=sess")
    assert tflearn_fact("train.py", own) == "tflearn-session:train.py|13|DNN"  # the other one
    assert tflearn_fact("train.py", own.replace("DNN(net)", "DNN(net, **options)")) is None  # may pass one
    assert tflearn_fact("n.py", "import tflearn\n\nnet = tflearn.input_data([None, 4])\n") is None  # no model
    assert tflearn_fact("o.py", "from mylib import DNN\n\nm = DNN(net)  # tflearn-like\n") is None


def test_reported_where_tensorflow_1_runs_not_in_tf2_folders() -> None:
    facts = ["tflearn-session:train.py|11|DNN", "tflearn-session:tf2/g.py|3|SequenceGenerator"]
    decided = frozenset({f"{RUNTIME_FACT}undetermined", f"{SCOPE_FACT}tf2/:2"})
    assert tflearn_findings(facts, decided) == [("train.py", 11, message("DNN"))]
    assert "tflearn.DNN(..., session=sess)" in message("DNN")


def test_the_cli_reports_it_and_the_repository_is_not_ready(tmp_path: Path) -> None:
    make_repo(tmp_path / "clf", {"train.py": TRAIN, "requirements.txt": "tflearn==0.3.2\ntensorflow==1.15.5\n"})
    (tmp_path / "repos.txt").write_text("clf\n")
    for engine in ("selective", "full", "full"):  # the last: a rerun, from the result cache
        cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--engine", engine,
            cwd=tmp_path, expect=0)
        record = repo_record(tmp_path / "rep")
        assert [(f["path"], f["line"], f["rule_id"], f["status"], f["message"]) for f in record["findings"]
                if f["rule_id"] == "NPU000"] == [("train.py", 11, "NPU000", "unmigrated", message("DNN"))]
        assert record["verdict"] == "needs-work"
    lines = cli("check", ".", cwd=tmp_path / "clf", expect=1).stdout.splitlines()
    assert any(line.startswith("train.py:11:1: NPU000 trains through tflearn (`tflearn.DNN`)") for line in lines)


def test_a_script_that_names_no_tensorflow_is_reported_too(tmp_path: Path) -> None:
    script = "import tflearn\n\nnet = tflearn.input_data([None, 4])\nmodel = tflearn.DNN(net)\n"
    make_repo(tmp_path / "bare", {"train.py": script})
    lines = cli("check", ".", cwd=tmp_path / "bare", expect=1).stdout.splitlines()
    assert [line.partition(" trains")[0] for line in lines if "NPU000" in line] == ["train.py:4:1: NPU000"]
    (tmp_path / "repos.txt").write_text("bare\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path, expect=0)
    assert [(f["path"], f["line"]) for f in repo_record(tmp_path / "rep")["findings"]] == [("train.py", 4)]
