"""Internal TF modules (``tensorflow.python.*``): a name is the public API it is exported as.

Real code imports ``from tensorflow.python.layers import core as core_layers`` or ``from
tensorflow.python.client import session as tf_session``; every rule asks ``ctx.tf`` (ImportNames),
which resolves those spellings through :data:`PUBLIC_NAMES`. Code a rule writes still uses a
public alias of the file, and imports ``tensorflow`` when the file binds none.
"""

from __future__ import annotations

import pytest

from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.names import PUBLIC_NAMES, ImportNames, is_internal_name, public_name
from npu_codemod.plugins.rules.sess_run.npu001_init_import import InitImport
from npu_codemod.plugins.rules.sess_run.npu007_session_config import SessionConfig, Settings
from npu_codemod.plugins.rules.sess_run.npu008_soft_placement import uses_tf_device

from support.rules import assert_migrates, sites
from support.trees import parse

ACCURACY = "check the model's accuracy: the guide notes the NPU dropout may affect it"


@pytest.mark.parametrize("internal, public", [
    ("tensorflow.python.client.session.Session", "tensorflow.Session"),
    ("tensorflow.python.ops.nn_ops.dropout", "tensorflow.nn.dropout"),
    ("tensorflow.python.ops.nn_ops.dropout_v2", "tensorflow.compat.v2.nn.dropout"),
    ("tensorflow.python.layers.core.dropout", "tensorflow.layers.dropout"),
    ("tensorflow.python.keras.layers.Dropout", "tensorflow.keras.layers.Dropout"),
    ("tensorflow.python.keras.layers.core.SpatialDropout2D", "tensorflow.keras.layers.SpatialDropout2D"),
    ("tensorflow.python.training.monitored_session.MonitoredTrainingSession",
     "tensorflow.train.MonitoredTrainingSession"),
    ("tensorflow.python.training.training_util.get_global_step", "tensorflow.train.get_global_step"),
    ("tensorflow.python.data.ops.dataset_ops.Dataset.range", "tensorflow.data.Dataset.range"),
    ("tensorflow.python.ops.math_ops.tanh", "tensorflow.tanh"),
    ("tensorflow.core.protobuf.config_pb2.ConfigProto", "tensorflow.ConfigProto"),
    ("tensorflow.python.framework.ops.enable_eager_execution", "tensorflow.enable_eager_execution"),
    ("tensorflow.python.debug.LocalCLIDebugWrapperSession", "tensorflow.python.debug.LocalCLIDebugWrapperSession"),
    ("tensorflow.nn.dropout", "tensorflow.nn.dropout"),
    # tf.contrib's own internal modules (slim-era code: pixel-cnn, SSD-Tensorflow).
    ("tensorflow.contrib.framework.python.ops.add_arg_scope", "tensorflow.contrib.framework.add_arg_scope"),
    ("tensorflow.contrib.framework.python.ops.arg_scope", "tensorflow.contrib.framework.arg_scope"),
    ("tensorflow.contrib.framework.python.ops.arg_scope.add_arg_scope",
     "tensorflow.contrib.framework.add_arg_scope"),
    ("tensorflow.contrib.framework.python.ops.variables.model_variable",
     "tensorflow.contrib.framework.model_variable"),
    ("tensorflow.contrib.layers.python.layers.layers.conv2d", "tensorflow.contrib.layers.conv2d"),
    ("tensorflow.contrib.layers.python.layers.utils.smart_cond",
     "tensorflow.contrib.layers.python.layers.utils.smart_cond"),  # not re-exported: kept
    ("tensorflow.contrib.slim.python.slim.data.parallel_reader.get_data_files",
     "tensorflow.contrib.slim.parallel_reader.get_data_files"),
    ("tensorflow.contrib.slim.python.slim.learning.train", "tensorflow.contrib.slim.learning.train"),
    # contrib.learn's monitored_session re-exports tf.train's classes.
    ("tensorflow.contrib.learn.python.learn.monitored_session.MonitoredSession",
     "tensorflow.train.MonitoredSession"),
    ("tensorflow.contrib.learn.python.learn.monitored_session.ChiefSessionCreator",
     "tensorflow.train.ChiefSessionCreator"),
])
def test_public_name_is_what_the_internal_module_is_exported_as(internal: str, public: str) -> None:
    assert public_name(internal) == public


def test_every_internal_module_maps_to_a_public_name_outside_the_internal_packages() -> None:
    assert all(is_internal_name(key) for key in PUBLIC_NAMES)
    assert not [value for value in PUBLIC_NAMES.values() if is_internal_name(value)]


def test_internal_bindings_resolve_but_never_spell_generated_code() -> None:
    names = ImportNames(parse(
        "from tensorflow.python.client import session as tf_session\n"
        "from tensorflow.python.ops import nn_ops\n"
        "import tensorflow.python.ops.nn_ops\n"
        "sess_module = tf_session\n"
    ))
    assert names.qualify("tf_session.Session") == "tensorflow.Session"
    assert names.qualify("sess_module.InteractiveSession") == "tensorflow.InteractiveSession"
    assert names.qualify("tensorflow.python.ops.nn_ops.dropout") == "tensorflow.nn.dropout"
    assert names.qualify("nn_ops.dropout") == "tensorflow.nn.dropout"
    assert [names.is_internal(n) for n in ("tf_session", "sess_module", "nn_ops", "tensorflow")] \
        == [True, True, True, False]
    assert names.public_alias == "tensorflow"  # ``import tensorflow.python...`` binds the package
    only_internal = ImportNames(parse("from tensorflow.python.client import session as tf\n"
                                  "sess_module = tf\n"))
    assert (only_internal.public_alias, only_internal.alias) == (None, "tf")


def test_core_layers_dropout_gets_npu_convert_dropout() -> None:
    before = '''\
"""Transformer encoder blocks (TF 1.x)."""
import numpy as np
from tensorflow.python.layers import core as core_layers
from tensorflow.python.ops import array_ops, math_ops


def feed_forward(x, hidden, rate, training):
    h = core_layers.dense(x, hidden, activation=math_ops.tanh)
    h = core_layers.dropout(h, rate=rate, training=training)
    return core_layers.dense(h, array_ops.shape(x)[-1])


def embed(ids, table):
    return array_ops.gather(table, ids) * np.sqrt(table.shape[-1])
'''
    after = before.replace('"""\nimport numpy', '"""\nfrom npu_bridge.npu_init import *\n'
                           'from npu_bridge.estimator.npu import npu_convert_dropout\nimport numpy')
    findings = assert_migrates(before, after, rule_ids={"NPU001", "NPU005"})
    assert sites(findings) == [("NPU001", 2, 0, "migrated"), ("NPU005", 9, 8, "migrated")]
    assert [f.message for f in findings if f.rule_id == "NPU005"] == [
        f"imported npu_convert_dropout, so core_layers.dropout runs the NPU dropout; {ACCURACY}"]


def test_keras_layers_from_the_internal_package_are_the_keras_dropouts() -> None:
    before = '''\
from tensorflow.python.keras import layers
from tensorflow.python.keras.layers.core import SpatialDropout1D


def text_cnn(vocab, width):
    model = [layers.Embedding(vocab, width), SpatialDropout1D(0.2), layers.Conv1D(128, 5)]
    return model + [layers.GlobalMaxPooling1D(), layers.Dropout(0.5), layers.Dense(2)]
'''
    after = ("from npu_bridge.npu_init import *\n"
             "from npu_bridge.estimator.npu import npu_convert_dropout\n" + before)
    findings = assert_migrates(before, after, rule_ids={"NPU001", "NPU005"})
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU005", 6, 45, "migrated"),
                               ("NPU005", 7, 49, "migrated")]


ENCODER = '''\
import tensorflow as tf
from tensorflow.python.ops import nn_ops
from tensorflow.python.ops.nn_ops import dropout_v2


class Encoder(object):
    """Two dense layers; dropout between them while training."""

    def __init__(self, units, keep_prob):
        self.units = units
        self.keep_prob = keep_prob

    def __call__(self, inputs, training):
        outputs = tf.layers.dense(inputs, self.units, activation=tf.nn.relu)
        if training:
            outputs = nn_ops.dropout(outputs, rate=1 - self.keep_prob)
        return tf.layers.dense(outputs, self.units)


def attention_dropout(weights, rate):
    # the TF 2 signature: the second argument is the drop rate
    return dropout_v2(weights, rate)


def residual_dropout(x, rate):
    return x + nn_ops.dropout_v2(x, rate=rate)
'''


def test_nn_ops_dropout_is_tf_nn_dropout_and_dropout_v2_the_v2_api() -> None:
    after = "from npu_bridge.npu_init import *\n" + ENCODER.replace(
        "nn_ops.dropout(outputs, rate=1 - self.keep_prob)",
        "npu_ops.dropout(outputs, keep_prob=1 - (1 - self.keep_prob))").replace(
        "x + nn_ops.dropout_v2(x, rate=rate)", "x + npu_ops.dropout(x, keep_prob=1 - rate)")
    findings = assert_migrates(ENCODER, after, rule_ids={"NPU004"})
    assert [(f.line, f.column, f.status, f.message.split(" (guide")[0]) for f in findings] == [
        (16, 22, "migrated", f"replaced nn_ops.dropout with npu_ops.dropout; {ACCURACY}"),
        (22, 11, "unmigrated", "tf.compat.v2.nn.dropout takes rate as its 2nd argument: write "
                               "keep_prob=1 - rate, then replace tf.nn.dropout with npu_ops.dropout by hand"),
        (26, 15, "migrated", f"replaced nn_ops.dropout_v2 with npu_ops.dropout; {ACCURACY}"),
    ]


def test_the_fully_dotted_internal_module_is_rewritten_like_tf_nn() -> None:
    before = '''\
import tensorflow.python.ops.nn_ops
import tensorflow.python.training.training_util


def regularize(hidden, keep_prob, step=None):
    step = step or tensorflow.python.training.training_util.get_or_create_global_step()
    return tensorflow.python.ops.nn_ops.dropout(hidden, keep_prob), step
'''
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "tensorflow.python.ops.nn_ops.dropout(", "npu_ops.dropout(")
    findings = assert_migrates(before, after, rule_ids={"NPU004"})
    assert sites(findings) == [("NPU004", 7, 11, "migrated")]


SERVE = '''\
"""Serve a frozen graph."""
import tensorflow as tf
from tensorflow.python.client import session as tf_session


def load_graph(path):
    graph_def = tf.GraphDef()
    with tf.gfile.GFile(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    graph = tf.Graph()
    with graph.as_default():
        tf.import_graph_def(graph_def, name="")
    return graph


def predict(path, batch):
    graph = load_graph(path)
    sess = tf_session.Session(graph=graph)
    logits = sess.run("logits:0", feed_dict={"input:0": batch})
    return logits.argmax(axis=-1)
'''
NPU_LINES = '''\
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
'''


def test_tf_session_session_gets_the_npu_config_in_the_files_own_alias_and_is_closed() -> None:
    after = SERVE.replace('"""\nimport tensorflow as tf\n', '"""\nfrom npu_bridge.npu_init import *\n'
                          'from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n'
                          'import tensorflow as tf\n') \
        .replace("    sess = tf_session.Session(graph=graph)\n",
                 NPU_LINES + "    sess = tf_session.Session(graph=graph, config=config)\n") \
        .replace("batch})\n", "batch})\n    sess.close()\n")
    findings = assert_migrates(SERVE, after, rule_ids={"NPU001", "NPU007", "NPU010"})
    assert sites(findings) == [("NPU001", 2, 0, "migrated"), ("NPU007", 18, 11, "migrated"),
                               ("NPU010", 18, 11, "migrated")]


RESTORE = '''\
from tensorflow.python.client import session
from tensorflow.python.framework import ops
from tensorflow.python.training import saver as saver_lib


def restore(checkpoint):
    graph = ops.Graph()
    with graph.as_default():
        saver = saver_lib.import_meta_graph(checkpoint + ".meta")
    sess = session.Session(graph=graph)
    saver.restore(sess, checkpoint)
    return sess
'''


def test_a_file_of_internal_modules_only_gets_import_tensorflow_for_the_config_it_is_given() -> None:
    after = ("from npu_bridge.npu_init import *\nimport tensorflow as tf\n"
             "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n" + RESTORE) \
        .replace("    sess = session.Session(graph=graph)\n",
                 NPU_LINES + "    sess = session.Session(graph=graph, config=config)\n")
    findings = assert_migrates(RESTORE, after)
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU007", 10, 11, "migrated"),
                               ("NPU010", 10, 11, "unmigrated")]  # returned: the caller closes it


@pytest.mark.parametrize("settings, written", [
    (Settings(style="helper"), "    sess = session.Session(graph=graph, config=npu_config_proto("
                               "config_proto=tf.ConfigProto()))\n"),
    (Settings(precision_mode="allow_mix_precision"), NPU_LINES.replace(
        '"NpuOptimizer"\n', '"NpuOptimizer"\n    custom_op.parameter_map["precision_mode"].s = '
                            'tf.compat.as_bytes("allow_mix_precision")\n')
        + "    sess = session.Session(graph=graph, config=config)\n"),
])
def test_every_spelling_npu007_writes_has_tensorflow_bound(settings: Settings, written: str) -> None:
    engine = Engine([SessionConfig(settings), InitImport()])
    outcome = engine.process(RESTORE.encode(), "restore.py")
    header = "from npu_bridge.npu_init import *\nimport tensorflow as tf\n"
    if settings.style == "inline":
        header += "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
    assert outcome.new_data.decode() == header + RESTORE.replace(
        "    sess = session.Session(graph=graph)\n", written)
    assert engine.process(outcome.new_data, "restore.py").new_data is None


def test_monitored_training_session_and_datasets_through_internal_modules() -> None:
    before = '''\
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops
from tensorflow.python.training import basic_session_run_hooks
from tensorflow.python.training import monitored_session, training_util


def input_fn(features, labels, batch_size):
    examples = dataset_ops.Dataset.from_tensor_slices((features, labels))
    return examples.batch(batch_size)


def train(model_fn, features, labels, model_dir):
    global_step = training_util.get_or_create_global_step()
    images, targets = input_fn(features, labels, 64).make_one_shot_iterator().get_next()
    train_op = model_fn(images, targets, global_step)
    hooks = [basic_session_run_hooks.StopAtStepHook(last_step=100000)]
    with monitored_session.MonitoredTrainingSession(checkpoint_dir=model_dir, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
'''
    after = ("from npu_bridge.npu_init import *\n"
             "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n" + before) \
        .replace("examples.batch(batch_size)", "examples.batch(batch_size, drop_remainder=True)") \
        .replace("    with monitored_session.MonitoredTrainingSession(checkpoint_dir=model_dir, hooks=hooks)",
                 NPU_LINES + "    with monitored_session.MonitoredTrainingSession("
                 "checkpoint_dir=model_dir, hooks=hooks, config=config)")
    findings = assert_migrates(before, after)
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU002", 9, 20, "migrated"),
                               ("NPU007", 17, 9, "migrated")]


@pytest.mark.parametrize("source, uses", [
    ("from tensorflow.python.framework import ops\n\nwith ops.device('/cpu:0'):\n    x = 1\n", True),
    ("from tensorflow.python.framework.ops import device as on\n\nwith on('/gpu:1'):\n    x = 1\n", True),
    ("import tensorflow.python.framework.ops\n\n"
     "with tensorflow.python.framework.ops.device(None):\n    x = 1\n", True),
    ("from tensorflow.python.framework import ops\n\nwith ops.name_scope('device'):\n    x = 1\n", False),
    ("from tensorflow.python.framework import ops\nimport torch\n\nd = torch.device('cuda')\n", False),
    ("from tensorflow.python.framework import ops\n\nmatch ops.device(x):\n    case 1:\n        pass\n",
     False),  # unparsable: the engine reports the file
])
def test_tf_device_through_internal_modules_is_the_repository_fact_of_npu008(source: str, uses: bool) -> None:
    assert uses_tf_device(source) is uses


SLIM_ERA = '''\
import tensorflow as tf
from tensorflow.contrib.framework.python.ops import add_arg_scope, arg_scope
from tensorflow.contrib.framework.python.ops import variables as contrib_variables


@add_arg_scope
def dense(x, units, init=False):
    w = contrib_variables.model_variable('w', shape=[4, units])
    return tf.matmul(x, w)


def model(x):
    with arg_scope([dense], init=True):
        return dense(x, 2)
'''


def test_the_audit_names_contrib_apis_by_their_public_names() -> None:
    """One API is one row of the blocking list, whichever module the code imports it from."""
    from npu_codemod.testing import run_rules

    findings = run_rules({"NPU100"}, SLIM_ERA).findings
    assert [(f.line, f.message.split(" with its")[0]) for f in findings] == [
        (6, "deprecated in TF 1.15: replace tf.contrib.framework.add_arg_scope"),
        (8, "deprecated in TF 1.15: replace tf.contrib.framework.model_variable"),
        (13, "deprecated in TF 1.15: replace tf.contrib.framework.arg_scope")]


CONTRIB_LEARN_SESSION = '''\
import tensorflow as tf
from tensorflow.contrib.learn.python.learn import monitored_session as ms

step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with ms.MonitoredSession() as sess:
    sess.run(step)
with ms.MonitoredSession(session_creator=ms.ChiefSessionCreator(config=config)) as sess:
    sess.run(step)
'''


def test_contrib_learns_monitored_session_is_tf_trains() -> None:
    """``ms.MonitoredSession()`` through contrib.learn is ``tf.train.MonitoredSession``: NPU007
    gives it a session creator with the NPU config (it was silent, and the audit named
    "tf.contrib.learn.monitored_session.MonitoredSession", a name TensorFlow never had)."""
    from npu_codemod.testing import run_rules

    outcome = run_rules({"NPU007", "NPU100"}, CONTRIB_LEARN_SESSION)
    assert sites(outcome.findings) == [("NPU007", 5, 5, "migrated"), ("NPU007", 5, 5, "migrated"),
                                       ("NPU007", 7, 5, "migrated"), ("NPU007", 7, 41, "migrated")]
    assert outcome.new is not None
    assert ("ms.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(config=npu_config))"
            in outcome.new)
