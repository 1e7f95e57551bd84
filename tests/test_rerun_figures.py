"""A rerun over the migrated branch reports the same figures: through the CLI, on real git
repositories. The API sites are those of the file as the run writes it: a use a rule rewrote
away (``tf.nn.dropout``, a gelu formula's ``tf.tanh``/``tf.pow``) is no API site, and the
tool's own code (the NpuOptimizer lines, the ``ConfigProto()`` created for them, XLA's
``OptimizerOptions.OFF``) is none on any run, so the sites per rule, the readiness and the API
site totals of ``run.json`` are the same when the branch is migrated again, and no finding
sits on a line the tool wrote."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"

MODEL = '''"""The encoder block of the classifier: a feed-forward layer with GELU, and dropout."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import layers as contrib_layers


def gelu(x):
    """Gaussian Error Linear Unit, the tanh approximation of the paper."""
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def feed_forward(hidden, width, keep_prob):
    inner = tf.layers.dense(hidden, width * 4, activation=gelu)
    output = tf.layers.dense(inner, width)
    output = tf.nn.dropout(output, keep_prob)
    return contrib_layers.layer_norm(output)
'''
SESSIONS = '''"""Session settings of the trainer: XLA when asked for, one session per phase."""
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2


def session_config(use_xla, xla_level=tf.OptimizerOptions.OFF):
    config = tf.ConfigProto(allow_soft_placement=True)
    config.graph_options.rewrite_options.arithmetic_optimization = rewriter_config_pb2.RewriterConfig.OFF
    if use_xla:
        config.graph_options.optimizer_options.global_jit_level = (
            tf.OptimizerOptions.ON_1)
    else:
        config.graph_options.optimizer_options.global_jit_level = xla_level
    return config


def evaluate(eval_op, steps):
    sess = tf.Session()
    for _ in range(steps):
        sess.run(eval_op)
    sess.close()
'''
TRAIN = '''"""Trains the classifier on batches of token ids."""
import tensorflow as tf

from classifier.model import feed_forward
from classifier.sessions import session_config


def input_fn(filenames, batch_size):
    dataset = tf.data.TFRecordDataset(filenames).repeat()
    return dataset.batch(batch_size).make_one_shot_iterator().get_next()


def main(filenames, steps):
    tokens = input_fn(filenames, 32)
    embedded = tf.one_hot(tokens, 128)
    with tf.device("/cpu:0"):
        logits = feed_forward(embedded, 128, keep_prob=0.9)
    loss = tf.reduce_mean(logits)
    train_op = tf.train.AdamOptimizer(1e-4).minimize(loss)
    with tf.Session(config=session_config(use_xla=True)) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
'''
FILES = {"classifier/__init__.py": "", "classifier/model.py": MODEL,
         "classifier/sessions.py": SESSIONS, "classifier/train.py": TRAIN}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp("rerun")
    make_repo(root / "classifier", FILES)
    (root / "repos.txt").write_text("classifier\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", cwd=root, expect=0)
    (root / "again.txt").write_text(f"classifier {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress",
        cwd=root, expect=0)
    first, rerun = (json.loads((root / name / "run.json").read_text()) for name in ("one", "two"))
    return root, first, rerun


def _sites_per_rule(record: dict[str, Any]) -> Counter[tuple[str, str]]:
    done = {"migrated": "done", "compliant": "done"}
    return Counter((f["rule_id"], done.get(f["status"], f["status"])) for f in record["findings"])


def _api_totals(record: dict[str, Any]) -> Counter[tuple[str, str, bool]]:
    return Counter({(row["api"], row["status"], row["covered"]): row["sites"]
                    for row in record["api_sites"]})


def test_the_first_run_rewrites_what_the_figures_leave_out(runs: tuple[Path, dict, dict]) -> None:
    root, first, _ = runs
    diff = git(root / "classifier", "diff", f"main...{BRANCH}")
    for written in ("npu_ops.dropout(output, keep_prob)", "npu_unary_ops.gelu(x)",
                    "tf.OptimizerOptions.OFF)", "config = tf.ConfigProto(allow_soft_placement=True)",
                    "remapping = RewriterConfig.OFF"):
        assert written in diff
    (record,) = first["repos"]
    # the API sites of the branch's code: no tf.nn.dropout, tf.tanh, tf.pow (rewritten away),
    # no OptimizerOptions.OFF (the NPU form), one tf.ConfigProto (the user's: the one NPU007
    # created in evaluate() is its own)
    assert _api_totals(record) == Counter({
        ("", "supported", False): 7, ("", "unknown", False): 1,
        ("tf.ConfigProto", "supported-after-migration", True): 1,
        ("tf.Session", "trains-after-migration", True): 2, ("tf.device", "supported-after-migration", True): 1,
        ("tf.contrib.layers.layer_norm", "deprecated", False): 1})
    assert record["api_readiness"] == pytest.approx(11 / 12)


def test_a_rerun_reports_the_same_sites_readiness_and_api_totals(runs: tuple[Path, dict, dict]) -> None:
    _, first, rerun = runs
    (before,), (after,) = first["repos"], rerun["repos"]
    assert after["files_changed"] == []  # nothing left to rewrite
    assert _sites_per_rule(after) == _sites_per_rule(before)
    assert {f["status"] for f in after["findings"]} <= {"compliant", "unmigrated", "not-needed"}
    assert after["api_readiness"] == before["api_readiness"] is not None
    assert _api_totals(after) == _api_totals(before)
    assert rerun["api_readiness"] == first["api_readiness"]
    assert after["sites"]["left"] == before["sites"]["left"]
    assert after["sites"]["migrated"] + after["sites"]["compliant"] == \
        before["sites"]["migrated"] + before["sites"]["compliant"]
    assert after["verdict"] == before["verdict"]


def test_no_finding_sits_on_a_line_the_tool_wrote(runs: tuple[Path, dict, dict]) -> None:
    root, _, rerun = runs
    (record,) = rerun["repos"]
    written = _added_lines(git(root / "classifier", "diff", "-U0", f"main...{BRANCH}"))
    audit = [(f["path"], f["line"]) for f in record["findings"] if f["rule_id"] == "NPU100"]
    assert audit  # the deprecated contrib layer_norm is still reported
    assert not written.intersection(audit)
    # the OFF a parameter defaults to is the NPU form: no finding on either run
    assert ("classifier/sessions.py", 6) not in audit


def _added_lines(diff: str) -> set[tuple[str, int]]:
    """(path, line on the branch) of every line a unified diff with no context adds."""
    added: set[tuple[str, int]] = set()
    path, line = "", 0
    for text in diff.splitlines():
        if text.startswith("+++ "):
            path = text[len("+++ b/"):]
        elif text.startswith("@@"):
            line = int(text.split("+")[1].split(",")[0].split(" ")[0])
        elif text.startswith("+"):
            added.add((path, line))
            line += 1
    return added


HOROVOD_TRAIN = '''"""Horovod trainer (glow-shaped): rank 0 logs; each process pins its GPU."""
import tensorflow as tf
import horovod.tensorflow as hvd

from towers.model import build_loss


def log(*args):
    if hvd.rank() == 0:
        print(*args)


def session():
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())
    return tf.Session(config=config)


def main(steps):
    hvd.init()
    loss = build_loss(hvd.size())
    train_op = tf.train.AdamOptimizer(1e-3 * hvd.size()).minimize(loss)
    sess = session()
    sess.run(tf.global_variables_initializer())
    for step in range(steps):
        log(step, sess.run([train_op, loss]))
    sess.close()
'''
HOROVOD_MODEL = '''"""The model: its batch size scales with the number of workers."""
import tensorflow as tf


def build_loss(workers):
    images = tf.random.uniform([8 * workers, 4])
    return tf.reduce_mean(tf.layers.dense(images, 1))
'''


def test_a_rerun_over_a_horovod_branch_counts_no_site_the_rewrite_removed(tmp_path: Path) -> None:
    """hvd.init(), the GPU pinning and the Horovod import are removed on the first run:
    those findings explain the diff but are no sites (the branch no longer holds them), so
    the rerun over the branch reports the same sites per rule."""
    make_repo(tmp_path / "towers", {"towers/__init__.py": "", "towers/train.py": HOROVOD_TRAIN,
                                    "towers/model.py": HOROVOD_MODEL})
    (tmp_path / "repos.txt").write_text("towers\n")
    rules = ("--rules", "default,distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    (tmp_path / "again.txt").write_text(f"towers {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (before,), (after,) = (json.loads((tmp_path / name / "run.json").read_text())["repos"]
                           for name in ("one", "two"))
    removals = [f for f in before["findings"] if f["message"].startswith("removed ")]
    assert {(f["rule_id"], f["path"]) for f in removals} == {
        ("NPU021", "towers/train.py"), ("NPU022", "towers/train.py"), ("NPU025", "towers/train.py")}
    assert "towers/train.py" in before["files_changed"]
    assert after["files_changed"] == []
    kept = [f for f in before["findings"] if f not in removals]
    assert _sites_per_rule({"findings": kept}) == _sites_per_rule(after)
    assert before["sites"] == after["sites"] | {"migrated": before["sites"]["migrated"],
                                                "compliant": before["sites"]["compliant"]}
    assert before["sites"]["migrated"] + before["sites"]["compliant"] == \
        after["sites"]["migrated"] + after["sites"]["compliant"]
    summary = {row["rule_id"]: row for row in read_csv(tmp_path / "one" / "summary.csv")}
    assert summary["NPU025"]["migrated"] == "0"  # its one finding removed the import: no site


STRATEGY_LIB = '''"""The Estimator and its training, mirrored over the GPUs (compat.v1 on TF 2.x)."""
import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode):
    loss = tf.reduce_mean(tf.layers.dense(features, 1))
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, tf.train.get_or_create_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    return tf.data.Dataset.from_tensors(tf.ones([4, 2])).repeat()


def train(steps):
    strategy = tf.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    estimator.train(input_fn, max_steps=steps)
'''
STRATEGY_MAIN = '''"""Entry point: trains through the library's train()."""
import tensorflow.compat.v1 as tf

from gan import train_lib


def main(_):
    train_lib.train(100)


if __name__ == "__main__":
    tf.app.run(main)
'''


@pytest.mark.parametrize("pin", ["tensorflow==2.6.0", "tensorflow==1.15.5"])
def test_a_rerun_over_a_strategy_branch_keeps_the_repository_distributed(tmp_path: Path, pin: str) -> None:
    """Once NPU026 made the MirroredStrategy NPUStrategy (and NPU027 passed npu_hooks_append()),
    the rerun still sees a distributed repository, also through TF Adapter 2.x's compat import:
    NPU027's site is compliant, not gone. The library's train() called from main is no
    Estimator's: no site there, so the verdict is the first run's."""
    make_repo(tmp_path / "gan", {"requirements.txt": pin + "\n", "gan/__init__.py": "",
                                 "gan/train_lib.py": STRATEGY_LIB, "gan/train.py": STRATEGY_MAIN})
    (tmp_path / "repos.txt").write_text("gan\n")
    rules = ("--rules", "default,distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    (tmp_path / "again.txt").write_text(f"gan {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (before,), (after,) = (json.loads((tmp_path / name / "run.json").read_text())["repos"]
                           for name in ("one", "two"))
    assert ("NPU027", "gan/train_lib.py", "migrated") in {
        (f["rule_id"], f["path"], f["status"]) for f in before["findings"]}
    assert not [f for f in before["findings"] if f["path"] == "gan/train.py" and f["rule_id"] == "NPU027"]
    assert after["files_changed"] == []
    assert _sites_per_rule(after) == _sites_per_rule(before)
    assert after["sites"]["left"] == before["sites"]["left"]
    assert after["sites"]["compliant"] == before["sites"]["migrated"] + before["sites"]["compliant"]
    assert after["verdict"] == before["verdict"]


TOWERS = '''"""Estimator training mirrored over the GPUs, with contrib's all-reduce (TF 1.15)."""
import tensorflow as tf


def mirrored(gpus, algorithm):
    return tf.contrib.distribute.MirroredStrategy(
        num_gpus=gpus,
        cross_tower_ops=tf.contrib.distribute.AllReduceCrossDeviceOps(algorithm, num_packs=2))


def main():
    config = tf.estimator.RunConfig(train_distribute=mirrored(2, "nccl"), save_summary_steps=0)
    estimator = tf.estimator.LinearRegressor(feature_columns=[], config=config)
    estimator.train(input_fn=lambda: tf.data.Dataset.range(8).batch(4, drop_remainder=True), max_steps=2)
'''


def test_an_api_in_an_argument_npu026_drops_is_no_site_left(tmp_path: Path) -> None:
    """Regression (cloudml-samples ``distribution_utils.py:45``): NPU026 drops
    ``cross_tower_ops=tf.contrib.distribute.AllReduceCrossDeviceOps(...)`` with the strategy,
    yet NPU100 reported the all-reduce deprecated, a site left: the rerun over the branch (where
    it is gone) had one site fewer and another verdict. A use inside code a rule removed is no
    API site (docs/reports.md): no finding, the same figures on the rerun."""
    make_repo(tmp_path / "towers", {"requirements.txt": "tensorflow==1.15.5\n", "train.py": TOWERS})
    (tmp_path / "repos.txt").write_text("towers\n")
    rules = ("--rules", "default,distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    (tmp_path / "again.txt").write_text(f"towers {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (before,), (after,) = (json.loads((tmp_path / name / "run.json").read_text())["repos"]
                           for name in ("one", "two"))
    assert "AllReduceCrossDeviceOps" not in git(tmp_path / "towers", "show", f"{BRANCH}:train.py")
    assert not [f for f in before["findings"] if f["rule_id"] == "NPU100"]
    assert (before["sites"]["left"], before["verdict"]) == (0, "ready")
    assert after["files_changed"] == []
    assert _sites_per_rule(after) == _sites_per_rule(before)
    assert (after["sites"]["left"], after["verdict"]) == (0, "ready")
    assert after["api_readiness"] == before["api_readiness"]
