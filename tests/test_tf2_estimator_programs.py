"""An Estimator program on TensorFlow 2 (``tf.estimator`` exists up to TF 2.15) builds and runs
graphs: it ports through the compat route (NPU062's header, the estimator pack), whatever other
``tf.compat.v1`` name its files spell (``spec/rules-tf2.md``: C2, ``tf2-compat`` files, NPU011).
Spleeter's shape: the training script's only compat.v1 name is the ``ConfigProto`` it passes to
``RunConfig(session_config=...)`` (no eager GPU idiom), and its ``model_fn`` is in another module.
NPU071 looks such a file's ``tf.estimator.X`` up as the ``tf.compat.v1.estimator.X`` the route
runs: never "no migration path" for the Estimator the tool just migrated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.tf_versions import (
    CODE_COMPAT,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    TF1,
    TF2,
    TF2_COMPAT,
    file_kind,
    signals_of,
)

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import process

TF2_RUNTIME = {"tf-runtime:2"}
MODEL = '''"""The model function of the Estimator."""
import tensorflow as tf


def model_fn(features, labels, mode):
    logits = tf.keras.layers.Dense(1)(features["x"])
    loss = tf.reduce_mean(tf.square(logits - labels))
    train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''
MAIN = '''

def input_fn():
    ds = tf.data.Dataset.from_tensor_slices(({"x": tf.ones([64, 4])}, tf.ones([64, 1])))
    return ds.repeat().batch(8)


def main():
    session_config = tf.compat.v1.ConfigProto()
    session_config.gpu_options.per_process_gpu_memory_fraction = 0.45
    estimator = tf.estimator.Estimator(
        model_fn=model_fn, model_dir="/tmp/m",
        config=tf.estimator.RunConfig(session_config=session_config))
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=10)
    eval_spec = tf.estimator.EvalSpec(input_fn, steps=1)
    tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


if __name__ == "__main__":
    main()
'''
#: (a) one file: the model function's compat.v1 optimizer beside the Estimator.
ONE_FILE = MODEL + MAIN
#: (b) the model function split out: the script's only compat.v1 name is the ConfigProto.
TRAIN = '''"""Trains the Estimator."""
import tensorflow as tf
from model import model_fn
''' + MAIN
EAGER_MODE_KEYS = '''"""An eager Keras loop that reads the Estimator's mode constants."""
import tensorflow as tf

MODE = tf.estimator.ModeKeys.TRAIN


@tf.function
def step(model, x):
    return model(x, training=MODE == tf.estimator.ModeKeys.TRAIN)
'''
GPU_GROWTH = '''"""Eager TF 2.x with its GPU settings through compat.v1."""
import tensorflow as tf

config = tf.compat.v1.ConfigProto()
config.gpu_options.allow_growth = True
model = tf.keras.layers.Dense(1)
'''


@pytest.mark.parametrize("source", [ONE_FILE, TRAIN, MODEL], ids=["one-file", "train", "model"])
def test_an_estimator_program_is_compat_code_on_tf2(source: str) -> None:
    signals = signals_of(source, "train.py")
    assert signals.c2 is not None and signals.t1 is None and signals.t2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT
    assert file_kind(signals, RUNTIME_TF1).kind == TF1


def test_the_config_proto_an_estimator_gets_is_no_eager_gpu_idiom() -> None:
    """The script's ``ConfigProto`` and ``tf.estimator`` uses: graph code, C2 at the first."""
    signals = signals_of(TRAIN, "train.py")
    assert signals.c2 is not None
    assert (signals.c2.line, signals.c2.spelled) == (12, "tf.compat.v1.ConfigProto")
    assert signals.e is None


TRACED_MODEL_FN = '''"""An Estimator whose model function traces a helper with tf.function."""
import tensorflow as tf


@tf.function
def scale(x):
    return 2.0 * x


def model_fn(features, labels, mode):
    loss = tf.reduce_mean(scale(features))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())


estimator = tf.estimator.Estimator(model_fn)
'''


def test_an_estimator_beside_tf2_idioms_is_compat_code_not_a_conflict() -> None:
    """The ``model_fn`` runs inside the Estimator's graph, ``tf.function`` too: no "graph-mode
    compat.v1 API in eager TF 2.x code"; and the file spells no ``tf.compat.v1``, so it is no
    evidence that the repository's version must be decided (``tf-code:C``)."""
    signals = signals_of(TRACED_MODEL_FN, "estimator.py")
    assert signals.e is not None and signals.c2 == signals.estimator
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == TF1
    assert CODE_COMPAT not in signals.facts()
    assert CODE_COMPAT in signals_of(TRAIN, "train.py").facts()  # its compat.v1 ConfigProto


def test_the_gpu_idiom_and_the_mode_constants_stay_eager_tf2_code() -> None:
    for source in (GPU_GROWTH, EAGER_MODE_KEYS):
        signals = signals_of(source, "eager.py")
        assert signals.c2 is None
    assert file_kind(signals_of(EAGER_MODE_KEYS, "eager.py"), RUNTIME_TF2).kind == TF2


@pytest.mark.parametrize("source", [ONE_FILE, TRAIN, MODEL], ids=["one-file", "train", "model"])
def test_npu071_calls_no_estimator_api_of_the_compat_route_unsupported(source: str) -> None:
    """NPU007 on: the ``tf.compat.v1.ConfigProto`` is its (through the session config), and
    NPU071 names a site whose TF1 owner is off (``test_tf2_compat_owners.py``)."""
    findings = process(source, {"NPU071", "NPU007", "NPU011", "NPU013", "NPU062"}, facts=TF2_RUNTIME).findings
    assert not [f for f in findings if f.rule_id == "NPU071"], findings
    if "tf.estimator.Estimator(" in source:
        assert {f.rule_id for f in findings if f.status == "migrated"} >= {"NPU011", "NPU013", "NPU062"}


def _scan(tmp_path: Path, engine: str) -> tuple[list[dict], dict[str, dict]]:
    report = tmp_path / f"report-{engine}"
    cli("scan", "--repos", "repos.txt", "--report-dir", report.name, "--no-progress", "--no-cache",
        "--engine", engine, cwd=tmp_path, expect=0)
    findings = [{key: row[key] for key in ("repo", "path", "line", "rule_id", "status", "message")}
                for row in read_csv(report / "findings.csv")]
    return findings, {row["repo"]: row for row in read_csv(report / "repos.csv")}


def test_both_shapes_port_through_the_compat_route_end_to_end(tmp_path: Path) -> None:
    pins = {"requirements.txt": "tensorflow==2.12.1\n"}
    make_repo(tmp_path / "one-file", {"train.py": ONE_FILE, **pins})
    make_repo(tmp_path / "split", {"train.py": TRAIN, "model.py": MODEL, **pins})
    (tmp_path / "repos.txt").write_text("one-file\nsplit\n")
    findings, repos = _scan(tmp_path, "selective")
    assert (findings, repos) == _scan(tmp_path, "full")
    for name, estimator in (("one-file", 21), ("split", 14)):  # the line of Estimator(
        got = sorted((f["path"], int(f["line"]), f["rule_id"], f["status"]) for f in findings if f["repo"] == name)
        assert got == [("train.py", 2, "NPU062", "migrated"), ("train.py", estimator - 6, "NPU002", "migrated"),
                       ("train.py", estimator, "NPU011", "migrated"),
                       ("train.py", estimator + 2, "NPU013", "migrated")]
        assert repos[name]["verdict"] != "blocked"
        assert (repos[name]["left"], repos[name]["errors"]) == ("0", "0")
        assert "not supported" not in repos[name]["verdict_reason"]
    assert not [f for f in findings if "no migration path" in f["message"]
                or "without training code" in f["message"]]
    run = json.loads((tmp_path / "report-selective" / "run.json").read_text())
    for record in run["repos"]:
        sites = {site["api"]: site for site in record["api_sites"]}
        assert sites["tf.compat.v1.estimator.Estimator"]["covered"] is True
        assert not any(api.startswith("tf.estimator.") for api in sites)
        assert record["file_kinds"] == {"tf2-compat": 1 if record["repo"].endswith("one-file") else 2}
