"""Names that run on both TensorFlow versions are no evidence of either: TF 1.15 has the TF 2.x API
under ``tf.compat.v2`` and runs in graph mode (google-research/simclr's TF 1.x ``model.py`` writes
its summaries with ``tf2.summary.create_file_writer``), and TF 2.x keeps TF 1.x's internal
``tensorflow.python`` modules. Such a file is not a conflict left unmigrated."""

from __future__ import annotations

from npu_codemod.codemods.tf_versions import (
    CONFLICT,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    TF1,
    TF2,
    TF2_COMPAT,
    TF_NEUTRAL,
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


SAVED_MODEL = '''"""Load a SavedModel and detect (TF 2.3, hunglc007/tensorflow-yolov4-tflite's shape)."""
import tensorflow as tf
from tensorflow.python.saved_model import tag_constants


def load(weights):
    saved_model_loaded = tf.saved_model.load(weights, tags=[tag_constants.SERVING])
    return saved_model_loaded.signatures["serving_default"]
'''


def test_a_name_through_an_internal_module_is_no_version_signal() -> None:
    """``tensorflow.python.saved_model.tag_constants`` is in TF 2.x too, though its public name
    ``tf.saved_model.tag_constants`` is TF 1.x-only: a TF 2.x file that uses it is no conflict."""
    signals = signals_of(SAVED_MODEL, "detect.py")
    assert signals.t1 is None
    assert file_kind(signals, RUNTIME_TF2).kind != CONFLICT


GPU_GROWTH = '''"""Detect objects with a SavedModel (eager TF 2.x; its GPU settings through compat.v1)."""
import tensorflow as tf
from tensorflow.compat.v1 import ConfigProto
from tensorflow.compat.v1 import InteractiveSession


def main(weights, images):
    config = ConfigProto()
    config.gpu_options.allow_growth = True
    session = InteractiveSession(config=config)
    infer = tf.saved_model.load(weights).signatures["serving_default"]
    return infer(tf.constant(images))["boxes"].numpy()
'''


def test_a_session_made_for_its_gpu_settings_alone_leaves_eager_code_eager() -> None:
    """No ``enable_v1()`` header for it (that would switch the whole process to graph mode), and
    no conflict beside ``tf.function``: the compat.v1 session-config idiom of TF 2.x scripts."""
    assert file_kind(signals_of(GPU_GROWTH, "detect.py"), RUNTIME_TF2).kind == TF_NEUTRAL
    traced = GPU_GROWTH.replace("def main(", "@tf.function\ndef step(x):\n    return x\n\n\ndef main(")
    assert file_kind(signals_of(traced, "detect.py"), RUNTIME_TF2).kind == TF2


def test_a_session_that_runs_or_other_graph_apis_make_it_compat_code() -> None:
    runs = GPU_GROWTH.replace('    infer = ', '    session.run(tf.compat.v1.global_variables_initializer())\n    infer = ')
    assert file_kind(signals_of(runs, "detect.py"), RUNTIME_TF2).kind == TF2_COMPAT
    placeholder = GPU_GROWTH.replace("from tensorflow.compat.v1 import InteractiveSession\n",
                                     "from tensorflow.compat.v1 import InteractiveSession, placeholder\n"
                                     "images_in = placeholder(tf.float32)\n")
    signals = signals_of(placeholder, "detect.py")
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT
    assert signals.c2 is not None and signals.c2.spelled == "placeholder"  # the first C2 use
