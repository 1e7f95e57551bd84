"""NPU100 api-support: which names are uses. A file importing only ``tensorflow_estimator`` is
audited under the ``tf.estimator`` names; a lone bare base class and a bare annotation are
uses; a name a statement binds (or deletes) is not."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.api import ImportNames
from npu_codemod.codemods.ast_names import ast_import_names
from npu_codemod.codemods.engine import parse_module
from npu_codemod.plugins.rules.audit.npu100_api_support import audited_modules
from npu_codemod.testing import assert_migrates, assert_reports

from support.audit import AUDIT, audit_messages, counted, deprecated, owner_miss

ESTIMATOR_PACK = {"NPU001", "NPU011", "NPU012", "NPU013"}

WIDE_AND_DEEP = '''\
"""Wide-and-deep model: the Estimator pieces come from tensorflow_estimator itself."""
import tensorflow_estimator as tf_estimator
from tensorflow_estimator.python.estimator.canned import dnn


def build(feature_columns, hidden_units, model_dir):
    logit_fn = tf_estimator.estimator.experimental.dnn_logit_fn_builder(
        units=1, hidden_units=hidden_units, feature_columns=feature_columns,
        activation_fn=None, dropout=None, input_layer_partitioner=None, batch_norm=False)
    config = tf_estimator.estimator.RunConfig(model_dir=model_dir)
    return logit_fn, dnn.DNNClassifier(hidden_units, feature_columns, config=config)
'''


def test_a_file_importing_only_tensorflow_estimator_is_audited_under_the_tf_estimator_names() -> None:
    findings = assert_reports(AUDIT, WIDE_AND_DEEP, findings=[
        ("NPU100", 7, 15, "unmigrated"), ("NPU100", 10, 13, "unmigrated"),
        ("NPU100", 11, 21, "unmigrated")])
    assert audit_messages(findings) == [
        (7, deprecated("tf.estimator.experimental.dnn_logit_fn_builder")),
        (10, owner_miss("tf.estimator.RunConfig")), (11, owner_miss("tf.estimator.DNNClassifier"))]


def test_the_estimator_pack_covers_the_tensorflow_estimator_sites_it_migrates() -> None:
    after = WIDE_AND_DEEP.replace(
        '"""\nimport', '"""\nfrom npu_bridge.npu_init import *\nimport').replace(
        "(model_dir=model_dir)", "(model_dir=model_dir, save_summary_steps=0)").replace(
        "config=config)", "config=npu_run_config_init(run_config=config))")
    findings = assert_migrates(ESTIMATOR_PACK | AUDIT, WIDE_AND_DEEP, after, findings=[
        ("NPU100", 7, 15, "unmigrated"), ("NPU013", 10, 13, "migrated"),
        ("NPU011", 11, 21, "migrated")])
    assert audit_messages(findings) == [(7, deprecated("tf.estimator.experimental.dnn_logit_fn_builder"))]
    assert counted(ESTIMATOR_PACK | AUDIT, WIDE_AND_DEEP) == Counter({
        ("tf.estimator.experimental.dnn_logit_fn_builder", "deprecated", False): 1,
        ("tf.estimator.RunConfig", "supported-after-migration", True): 1,
        ("tf.estimator.DNNClassifier", "supported-after-migration", True): 1})


HIGHWAY_CELL = '''\
"""Highway LSTM cell of the language model, on tf.contrib.rnn."""
import tensorflow as tf
from tensorflow.contrib.rnn import LSTMStateTuple, RNNCell


class HighwayCell(RNNCell):
    """An LSTM cell whose input may skip the cell."""

    def __init__(self, num_units):
        super(HighwayCell, self).__init__()
        self._num_units = num_units

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    def call(self, inputs, state: LSTMStateTuple):
        c, h = state
        gates = tf.matmul(tf.concat([inputs, h], 1), self._kernel)
        i, j, f, o = tf.split(gates, 4, axis=1)
        c = c * tf.sigmoid(f) + tf.sigmoid(i) * tf.tanh(j)
        return h, LSTMStateTuple(c, tf.tanh(c) * tf.sigmoid(o))


del RNNCell  # the module exports its own cell only
'''


def test_a_lone_base_class_and_bare_annotations_are_uses_a_del_is_not() -> None:
    findings = assert_reports(AUDIT, HIGHWAY_CELL, findings=[
        ("NPU100", 6, 18, "unmigrated"), ("NPU100", 14, 28, "unmigrated"),
        ("NPU100", 15, 15, "unmigrated"), ("NPU100", 17, 34, "unmigrated"),
        ("NPU100", 22, 18, "unmigrated")])
    assert audit_messages(findings) == [
        (6, deprecated("tf.contrib.rnn.RNNCell")),
        *((line, deprecated("tf.contrib.rnn.LSTMStateTuple")) for line in (14, 15, 17, 22))]


ESTIMATOR_SUBCLASS = '''\
"""The classifier's Estimator, with its own export signature."""
import tensorflow as tf
from tensorflow.estimator import Estimator


class ClassifierEstimator(Estimator):
    def __init__(self, model_fn, model_dir=None, config=None):
        super(ClassifierEstimator, self).__init__(model_fn=model_fn, model_dir=model_dir,
                                                  config=config)
'''


def test_a_lone_bare_estimator_base_is_a_base_class_use_left_to_the_estimator_pack() -> None:
    assert_reports(ESTIMATOR_PACK | AUDIT, ESTIMATOR_SUBCLASS, findings=[])
    assert counted(ESTIMATOR_PACK | AUDIT, ESTIMATOR_SUBCLASS) == Counter({
        ("tf.estimator.Estimator", "supported-after-migration", True): 1})
    findings = assert_reports(AUDIT, ESTIMATOR_SUBCLASS, findings=[("NPU100", 6, 26, "unmigrated")])
    assert audit_messages(findings) == [(6, owner_miss("tf.estimator.Estimator"))]


INPUT_PIPELINE = '''\
"""Reads the training records; falls back to the old queue readers on TF 1.3."""
import tensorflow as tf
from tensorflow.contrib.data import TFRecordDataset


def batches(files, batch_size):
    dataset = TFRecordDataset(files).batch(batch_size)
    return dataset.make_one_shot_iterator().get_next()


def shards(pattern):
    for TFRecordDataset in sorted(tf.gfile.Glob(pattern)):  # one path per shard
        yield TFRecordDataset
'''


def test_a_loop_target_is_no_use_of_the_name_it_rebinds() -> None:
    """The loop rebinds the imported name: no use there, nor in its later reads in the
    function, whose local name it is (``local_names``)."""
    findings = assert_reports(AUDIT, INPUT_PIPELINE, findings=[("NPU100", 7, 14, "unmigrated")])
    assert audit_messages(findings) == [(7, deprecated("tf.contrib.data.TFRecordDataset"))]


_IMPORT_PIECES = st.sampled_from(["import ", "from ", " ", "\n", ";", ",", "as ", "hvd", "horovod",
                                  "horovod.tensorflow", "tensorflow", ".", "(", ")", "\\\n", "x",
                                  " = ", "ｈorovod", "hvd.init()"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_IMPORT_PIECES, max_size=14).map("".join))
def test_horovod_is_read_only_where_it_may_be_bound(text: str) -> None:
    """NPU100 reads the uses through Horovod's bindings only in a file that spells
    ``horovod`` (or has non-ASCII letters): elsewhere they bind no name, fissix's or ``ast``'s,
    so leaving them out reads the same uses."""
    source = text + "\n"
    ctx = SimpleNamespace(original=source, names=lambda module: module)
    if audited_modules(ctx) == ["tensorflow"]:  # type: ignore[arg-type]
        tree = parse_module(source)
        assert tree is None or not ImportNames(tree, root="horovod").heads
        names = ast_import_names(source, root="horovod")
        assert names is None or not names.heads


def test_a_file_that_binds_horovod_anyhow_is_read_through_it() -> None:
    for source in ("import horovod.tensorflow as hvd\n", "from horovod import tensorflow\n",
                   "import ｈorovod.tensorflow as hvd\n"):
        ctx = SimpleNamespace(original=source, names=lambda module: module)
        assert audited_modules(ctx) == ["tensorflow", "horovod"]  # type: ignore[arg-type]
