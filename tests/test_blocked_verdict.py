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
