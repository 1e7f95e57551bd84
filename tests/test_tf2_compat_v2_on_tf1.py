"""TF 1.15 has the TF 2.x API under ``tf.compat.v2`` and runs in graph mode: a TF 1.x file that
uses ``tf.compat.v2`` (google-research/simclr's ``model.py`` writes its summaries with
``tf2.summary.create_file_writer``) is TF 1.x code in a TF 1.x repository, not a conflict that
leaves it unmigrated."""

from __future__ import annotations

from npu_codemod.codemods.tf_versions import (
    CONFLICT,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    TF1,
    TF2,
    file_kind,
    signals_of,
)

MODEL = '''"""Model function of a TF 1.x Estimator."""
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features, 10)
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    summary_writer = tf2.summary.create_file_writer(params["model_dir"])
    with tf.control_dependencies([summary_writer.init()]):
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
'''

EAGER = '''"""An eager loop writing its summaries through tf.compat.v2."""
import tensorflow as tf
from tensorflow.compat import v2 as tf2

writer = tf2.summary.create_file_writer("/tmp/logs")
'''


def test_tf2_api_through_compat_v2_in_a_tf1_repository_is_tf1_code() -> None:
    signals = signals_of(MODEL, "model.py")
    assert signals.t2 is None and signals.e is not None
    assert file_kind(signals, RUNTIME_TF1).kind == TF1


def test_compat_v1_graph_code_with_compat_v2_stays_a_conflict_on_tf2() -> None:
    signals = signals_of(MODEL, "model.py")
    assert file_kind(signals, RUNTIME_TF2).kind == CONFLICT
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == CONFLICT


def test_compat_v2_alone_is_tf2_code_where_the_runtime_allows_it() -> None:
    signals = signals_of(EAGER, "loop.py")
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == TF2
    assert file_kind(signals, RUNTIME_TF1).kind == TF1
