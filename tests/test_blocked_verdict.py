"""``blocked`` means an API Ascend does not support and no rule says how to migrate: an
unsupported TPU-only call NPU012 reports with its migration (remove ``CrossShardOptimizer``)
is work left, ``needs-work``; an unsupported reader nothing migrates blocks. Through the CLI,
on real git repositories, and re-rendered from ``run.json``."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo

OPTIMIZATION = '''"""Optimizer of the pretraining script (ELECTRA-shaped): AdamW, clipped, TPU-sharded."""
import tensorflow as tf


def create_optimizer(loss, learning_rate, use_tpu=False):
    """Builds the train op. The flag comes from the model_fn's params, not from the
    estimator, so the migration does not switch it off."""
    optimizer = tf.train.AdamOptimizer(learning_rate)
    if use_tpu:
        optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    grads_and_vars = optimizer.compute_gradients(loss)
    grads, variables = zip(*grads_and_vars)
    grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
    return optimizer.apply_gradients(zip(grads, variables), global_step=tf.train.get_global_step())
'''
READER = '''"""Reads whole image files with the TF 1.x reader queue."""
import tensorflow as tf


def image_files(pattern):
    reader = tf.WholeFileReader()
    _, contents = reader.read(tf.train.string_input_producer(tf.gfile.Glob(pattern)))
    return tf.image.decode_png(contents)
'''


def test_an_unsupported_api_a_rule_migrates_is_work_and_one_none_does_blocks(tmp_path: Path) -> None:
    make_repo(tmp_path / "pretrain", {"optimization.py": OPTIMIZATION})
    make_repo(tmp_path / "images", {"optimization.py": OPTIMIZATION, "reader.py": READER})
    (tmp_path / "repos.txt").write_text("pretrain\nimages\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "report", "--no-progress", cwd=tmp_path, expect=0)
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    pretrain, images = run["repos"]
    [shard] = [f for f in pretrain["findings"] if "CrossShardOptimizer" in f["message"]]
    assert (shard["rule_id"], shard["status"]) == ("NPU012", "unmigrated")
    assert {"api": "tf.tpu.CrossShardOptimizer", "status": "unsupported", "covered": False,
            "sites": 1, "owned": True} in pretrain["api_sites"]
    assert pretrain["verdict"] == "needs-work"
    assert pretrain["verdict_reason"] == "1 site(s) left: 1 to change (NPU012 1)"
    assert images["verdict"] == "blocked"
    assert images["verdict_reason"] == "not supported on Ascend: tf.WholeFileReader"
    assert run["verdicts"] == {"ready": 0, "needs-work": 1, "blocked": 1, "not-verified": 0}
    rows = {row["repo"]: row["verdict"] for row in read_csv(tmp_path / "report" / "repos.csv")}
    assert rows == {"pretrain": "needs-work", "images": "blocked"}
    cli("report", str(tmp_path / "report" / "run.json"), "--report-dir", "again", cwd=tmp_path, expect=0)
    again = {row["repo"]: row["verdict"] for row in read_csv(tmp_path / "again" / "repos.csv")}
    assert again == rows


CUSTOM_LAYER = '''"""Fits a regression model with a layer of its own (TF 2.x)."""
import numpy as np
import tensorflow as tf


class Scale(tf.keras.layers.Layer):
    def call(self, x):
        return x * 2.0


inputs = tf.keras.Input((4,))
model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(Scale()(inputs)))
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)))
'''
MIRRORED = '''"""Trains on every local GPU with MirroredStrategy and a custom loop (TF 2.x)."""
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)


@tf.function
def step(x, y):
    def replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return strategy.run(replica_step, args=(x, y))


for _ in range(3):
    step(tf.zeros((4, 2)), tf.zeros((4, 1)))
'''


def test_a_tf2_custom_layer_does_not_block_and_a_mirrored_strategy_is_named(tmp_path: Path) -> None:
    """TF 2.x, default packs. ``class Scale(tf.keras.layers.Layer)``: the TF 2.6 list marks the
    base unsupported, but NPU071 counts a base class without a finding (spec rules-tf2.md,
    NPU071): the repository is ``ready``, readiness 1 (before: ``blocked``, 0 findings). A
    MirroredStrategy NPU070 would report while its pack is off: NPU071's finding is the one
    site left (before: ``needs-work``, ``1 API site(s) not ready``, left 0, no finding)."""
    pin = {"requirements.txt": "tensorflow==2.6.5\n"}
    make_repo(tmp_path / "layers", {"train.py": CUSTOM_LAYER, **pin})
    make_repo(tmp_path / "mirrored", {"train.py": MIRRORED, **pin})
    (tmp_path / "repos.txt").write_text("layers\nmirrored\n")
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", "report", "--no-progress",
        cwd=tmp_path, expect=0)
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    layers, mirrored = run["repos"]
    assert {"api": "tf.keras.layers.Layer", "status": "unsupported", "covered": True,
            "sites": 1} in layers["api_sites"]
    assert [f["rule_id"] for f in layers["findings"] if f["status"] == "unmigrated"] == []
    assert (layers["verdict"], layers["verdict_reason"], layers["api_readiness"]) == ("ready", "", 1.0)
    [left] = [f for f in mirrored["findings"] if f["status"] == "unmigrated"]
    assert (left["rule_id"], left["path"], left["line"]) == ("NPU071", "train.py", 4)
    assert "tf2-distributed" in left["message"]
    assert (mirrored["verdict"], mirrored["verdict_reason"]) == (
        "needs-work", "1 site(s) left: 1 to change (NPU071 1)")
    assert run["verdicts"] == {"ready": 1, "needs-work": 1, "blocked": 0, "not-verified": 0}
    rows = {row["repo"]: (row["verdict"], row["left"], row["api_readiness"])
            for row in read_csv(tmp_path / "report" / "repos.csv")}
    assert rows == {"layers": ("ready", "0", "1.0000"), "mirrored": ("needs-work", "1", rows["mirrored"][2])}
    summary = {(row["repo"], row["rule_id"]): row["unmigrated"] for row in read_csv(tmp_path / "report" / "summary.csv")}
    assert summary[("mirrored", "NPU071")] == "1"
    assert "not supported on Ascend: tf.keras.layers.Layer" not in (tmp_path / "report" / "report.html").read_text()
    cli("report", str(tmp_path / "report" / "run.json"), "--report-dir", "again", cwd=tmp_path, expect=0)
    again = {row["repo"]: (row["verdict"], row["left"], row["api_readiness"])
             for row in read_csv(tmp_path / "again" / "repos.csv")}
    assert again == rows


CHECKED_LAYERS = '''"""Fits a regression model whose helper checks and annotates its layers (TF 2.x)."""
import numpy as np
import tensorflow as tf


def frozen(layer: tf.keras.layers.Layer) -> tf.keras.layers.Layer:
    if not isinstance(layer, tf.keras.layers.Layer):
        raise TypeError(layer)
    layer.trainable = False
    return layer


inputs = tf.keras.Input((4,))
head: tf.keras.layers.Layer = frozen(tf.keras.layers.Dense(1))
model = tf.keras.Model(inputs, head(inputs))
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)))
'''
ONE_DEVICE = '''"""Trains on one GPU through OneDeviceStrategy (TF 2.x)."""
import numpy as np
import tensorflow as tf

strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)))
'''


def test_a_tf2_type_check_does_not_block_and_a_one_device_strategy_is_named(tmp_path: Path) -> None:
    """TF 2.x, default packs. ``isinstance(layer, tf.keras.layers.Layer)`` and annotations: the
    TF 2.6 list marks the class unsupported, but NPU071 counts a name used only as a type
    without a finding (spec rules-tf2.md, NPU071): ``ready`` (before: ``blocked``, no finding).
    ``tf.distribute.OneDeviceStrategy(...)``, ``trains-after-migration`` with no TF 2.x rule
    to migrate it: NPU071's finding names it (before: ``needs-work``, ``1 API site(s) not
    ready``, left 0, no finding)."""
    pin = {"requirements.txt": "tensorflow==2.6.5\n"}
    make_repo(tmp_path / "checked", {"train.py": CHECKED_LAYERS, **pin})
    make_repo(tmp_path / "onedevice", {"train.py": ONE_DEVICE, **pin})
    (tmp_path / "repos.txt").write_text("checked\nonedevice\n")
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", "report", "--no-progress",
        cwd=tmp_path, expect=0)
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    checked, onedevice = run["repos"]
    assert {"api": "tf.keras.layers.Layer", "status": "unsupported", "covered": True,
            "sites": 4} in checked["api_sites"]
    assert [f for f in checked["findings"] if f["status"] == "unmigrated"] == []
    assert (checked["verdict"], checked["verdict_reason"], checked["api_readiness"]) == ("ready", "", 1.0)
    [left] = [f for f in onedevice["findings"] if f["status"] == "unmigrated"]
    assert (left["rule_id"], left["path"], left["line"], left["column"]) == ("NPU071", "train.py", 5, 11)
    assert left["message"].startswith("tf.distribute.OneDeviceStrategy: Ascend's TF 2.6 list has training "
                                      "work with it once the script opens the NPU")
    assert (onedevice["verdict"], onedevice["verdict_reason"]) == (
        "needs-work", "1 site(s) left: 1 to change (NPU071 1)")
    rows = {row["repo"]: (row["verdict"], row["left"], row["api_readiness"])
            for row in read_csv(tmp_path / "report" / "repos.csv")}
    assert rows == {"checked": ("ready", "0", "1.0000"),
                    "onedevice": ("needs-work", "1", rows["onedevice"][2])}
    cli("report", str(tmp_path / "report" / "run.json"), "--report-dir", "again", cwd=tmp_path, expect=0)
    again = {row["repo"]: (row["verdict"], row["left"], row["api_readiness"])
             for row in read_csv(tmp_path / "again" / "repos.csv")}
    assert again == rows
