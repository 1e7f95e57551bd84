"""compat.v1 code on TF 2.x that runs eagerly, and compat programs' entries and sites
(``spec/rules-tf2.md``: detection C2, mixed programs, NPU061, NPU071; ``docs/reports.md``).

- A ``tf.compat.v1.variable_scope``/``get_variable`` in an eager Keras layer runs in TF 2.x eager
  mode: alone it is no graph-mode signal, so the module is no compat.v1 graph file and the
  programs importing it are no mixed programs (TensorLayer 2.x: every example was refused).
- The entry of a compat.v1 Estimator program (``est.train(...)``) gets no NPU061 advice: NPU062's
  header ports that program; the eager device init is for TF 2.x code.
- ``tf.compat.v1.data.Dataset`` in eager code (a file reaching TF through ``import
  tensorflow.compat.v1 as tf`` alone) is owned by NPU064 as ``tf.data.Dataset`` is.
- The ``tf.tanh``/``tf.pow`` of a GELU formula NPU006 rewrote away are no API sites on the first
  run either: a rerun over the branch counts the same sites left.
"""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods.api_owners import OWNER_OFF
from npu_codemod.codemods.tf_versions import RUNTIME_TF2, TF2_COMPAT, TF_NEUTRAL, file_kind, signals_of

from support.cli import check_lines, cli
from support.git import make_repo
from support.rules import process

TF2_RUNTIME = {"tf-runtime:2"}
BRANCH = "npu-codemod/sess-run-to-npu"

EAGER_LAYER = '''\
import tensorflow as tf


class Scaled(tf.keras.layers.Layer):
    def build(self, shape):
        with tf.compat.v1.variable_scope("scaled"):
            self.w = self.add_weight("w", shape=(shape[-1],), initializer="ones")
        self.b = tf.compat.v1.get_variable("b", shape=(1,))

    def call(self, x):
        return x * self.w + self.b
'''
EAGER_TRAIN = '''\
import numpy as np
import tensorflow as tf

from lib.layers import Scaled


def main():
    x = np.zeros((64, 4), np.float32)
    y = np.zeros((64, 1), np.float32)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64).batch(8)
    model = tf.keras.Sequential([Scaled(), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(ds, epochs=2)


if __name__ == "__main__":
    main()
'''


def test_a_variable_scope_alone_is_no_graph_signal() -> None:
    signals = signals_of(EAGER_LAYER, "lib/layers.py")
    assert signals.c2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF_NEUTRAL


def test_a_variable_scope_beside_a_graph_api_still_is() -> None:
    """With a placeholder the file is graph code: its first C2 use is the scope."""
    text = EAGER_LAYER + '\n\nX = tf.compat.v1.placeholder(tf.float32, [None, 4])\n'
    signals = signals_of(text, "lib/layers.py")
    assert signals.c2 is not None and signals.c2.spelled == "tf.compat.v1.variable_scope"
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT


def test_an_eager_program_whose_layer_uses_a_variable_scope_is_not_mixed(tmp_path: Path) -> None:
    make_repo(tmp_path / "scoped", {"requirements.txt": "tensorflow>=2.4\n", "lib/__init__.py": "",
                                    "lib/layers.py": EAGER_LAYER, "train.py": EAGER_TRAIN})
    lines = check_lines(tmp_path, "scoped", expect=1)
    assert not [line for line in lines if "mixes" in line or "NPU062" in line]
    assert any(line.startswith("scoped/train.py:1:1: NPU061 [fixable]") for line in lines)
    assert any(line.startswith("scoped/train.py:10:65: NPU064 [fixable]") for line in lines)


ESTIMATOR_LIB = '''\
import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def build_estimator(model_dir):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_summary_steps=0)
    return tf.estimator.Estimator(model_fn=model_fn, config=config)
'''
ESTIMATOR_ENTRY = '''\
"""Trains the model."""
import numpy as np
import tensorflow.compat.v1 as tf

from lib import build


def input_fn():
    x = np.zeros((64, 4), np.float32)
    y = np.zeros((64,), np.int32)
    ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    return ds.repeat().batch(8, drop_remainder=True)


def main():
    tf.logging.info("training")
    est = build.build_estimator("/tmp/m")
    est.train(input_fn=input_fn, max_steps=10)


if __name__ == "__main__":
    main()
'''


def test_the_entry_of_a_compat_estimator_program_gets_no_device_init_advice(tmp_path: Path) -> None:
    make_repo(tmp_path / "est", {"requirements.txt": "tensorflow~=2.6.0\n", "lib/__init__.py": "",
                                 "lib/build.py": ESTIMATOR_LIB, "train.py": ESTIMATOR_ENTRY})
    lines = check_lines(tmp_path, "est", expect=1)
    assert [line.split(" [")[0] for line in lines] == ["est/lib/build.py:1:1: NPU062", "est/lib/build.py:13:12: NPU011"]


COMPAT_ALIAS_DATASET = '''\
import numpy as np
import tensorflow.compat.v1 as tf


def make():
    x = np.zeros((64, 4), np.float32)
    ds = tf.data.Dataset.from_tensor_slices(x)
    return ds.repeat().batch(8, drop_remainder=True)
'''


def test_a_compat_alias_dataset_in_eager_code_is_npu064s() -> None:
    """Spelled ``import tensorflow as tf`` the dataset is ``supported``; through the compat.v1
    alias the list says Ascend migrates it: NPU064 does (its batch is compliant), so no site is
    left, and while NPU064 is off the miss names it."""
    outcome = testing.run_rules({"NPU064", "NPU071"}, COMPAT_ALIAS_DATASET, facts=TF2_RUNTIME)
    assert [f for f in outcome.findings if f.rule_id == "NPU071"] == []
    rows = [row for row in process(COMPAT_ALIAS_DATASET, {"NPU064", "NPU071"}, facts=TF2_RUNTIME).api_sites
            if row.api == "tf.compat.v1.data.Dataset"]
    assert rows and all(row.covered for row in rows)
    off = testing.run_rules({"NPU071"}, COMPAT_ALIAS_DATASET, facts=TF2_RUNTIME).findings
    assert [f.message.split(" (guide")[0] for f in off] == [OWNER_OFF.format(
        api="tf.compat.v1.data.Dataset.from_tensor_slices", rules="NPU064", ids="NPU064")]


GELU_MODEL = '''\
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def gelu(x):
  cdf = 0.5 * (1.0 + tf.tanh(
      (np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3)))))
  return x * cdf


def build(x):
  return gelu(tf.layers.dense(x, 4))
'''


def test_a_gelu_formulas_ops_rewritten_away_are_not_reported() -> None:
    outcome = testing.run_rules({"NPU006", "NPU062", "NPU071"}, GELU_MODEL, facts=TF2_RUNTIME)
    assert "npu_unary_ops.gelu(x)" in (outcome.new or "")
    assert [f for f in outcome.findings if f.rule_id == "NPU071"] == []


def test_a_rerun_over_a_compat_gelu_branch_counts_the_same_sites(tmp_path: Path) -> None:
    make_repo(tmp_path / "gelu", {"requirements.txt": "tensorflow~=2.6.0\n", "model.py": GELU_MODEL})
    (tmp_path / "repos.txt").write_text("gelu\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", cwd=tmp_path, expect=0)
    (tmp_path / "again.txt").write_text(f"gelu {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress",
        cwd=tmp_path, expect=0)
    (before,), (after,) = (json.loads((tmp_path / name / "run.json").read_text())["repos"]
                           for name in ("one", "two"))
    assert after["files_changed"] == []
    assert before["sites"]["left"] == after["sites"]["left"] == 0
    assert not [f for f in before["findings"] if f["rule_id"] == "NPU071"]
    totals = [{(row["api"], row["status"], row["covered"]): row["sites"] for row in record["api_sites"]}
              for record in (before, after)]
    assert totals[0] == totals[1]


QUANTIZE = '''\
import tensorflow as tf


def quantize(x):
    with tf.compat.v1.get_default_graph().gradient_override_map({"Sign": "Identity"}):
        return tf.sign(x)


def quantize_weight(x):
    g = tf.compat.v1.get_default_graph()
    with g.gradient_override_map({"Round": "Identity"}):
        return tf.round(x)


def initialize_global_variables(sess):
    sess.run(tf.compat.v1.global_variables_initializer())
'''


def test_a_default_graph_that_only_overrides_gradients_is_no_graph_signal() -> None:
    """TensorLayer 2.x's ``layers/utils.py``: straight-through gradients a ``tf.function``
    traces, and a helper running the initializer in a session its caller passes."""
    assert signals_of(QUANTIZE, "lib/utils.py").c2 is None
    read = QUANTIZE + "\n\ndef last_op():\n    return tf.compat.v1.get_default_graph().get_operations()[-1]\n"
    found = signals_of(read, "lib/utils.py").c2
    assert found is not None and found.line == 16  # the initializer: the file is graph code


def test_a_scope_of_a_file_written_against_the_compat_api_still_is_a_graph_signal() -> None:
    """``import tensorflow.compat.v1 as tf`` binds the whole TF 1.x API: the file is TF 1.x code
    (tapas' input pipeline keeps the compat route's NPU002)."""
    text = "import tensorflow.compat.v1 as tf\n\n\ndef parse(x):\n    with tf.variable_scope('p'):\n" \
           "        return tf.data.Dataset.from_tensors(x).batch(2)\n"
    signals = signals_of(text, "data.py")
    assert signals.c2 is not None and signals.c2.spelled == "tf.variable_scope"
