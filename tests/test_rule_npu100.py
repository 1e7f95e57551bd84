"""NPU100 api-support: every TensorFlow and Horovod API use against Ascend's support list.

Golden cases per status and spelling (rules-beyond-sess-run.md, "audit"): the exact sites, the
exact messages, what is counted for API readiness (``FileOutcome.api_sites``), and that a site
another rule reported, or that its owner migrated, is not reported again.
"""

from __future__ import annotations

from collections import Counter

from npu_codemod.api import FileContext, Reference, Rule
from npu_codemod.codemods.api_sites import ApiSites, readiness
from npu_codemod.codemods.engine import Engine
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.rules.audit.npu100_api_support import ApiSupport
from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.audit import (
    AUDIT,
    GUIDE,
    OPT_IN,
    audit_messages,
    counted,
    deprecated,
    horovod_owner_miss,
    owner_miss,
    pack_off,
    under_analysis,
    unsupported,
)

SLIM_TOWER = '''"""Inception-style towers, written with TF-slim as the 2017 model zoo did."""
import tensorflow as tf
from tensorflow.contrib import slim
from tensorflow.contrib.layers import xavier_initializer

FLAGS = tf.app.flags.FLAGS


def tower(images, is_training):
    """Two convolutions and a pool; the caller adds the head."""
    with slim.arg_scope([slim.conv2d], weights_initializer=xavier_initializer()):
        net = slim.conv2d(images, 64, [3, 3], scope="conv1")
        net = slim.nets.resnet_v1.resnet_v1_50(net, is_training=is_training)
    net = tf.nn.relu(net)
    return tf.layers.flatten(net), tf.float32
'''


def test_slim_through_a_from_import_is_deprecated_at_each_use() -> None:
    findings = assert_reports(AUDIT, SLIM_TOWER, findings=[
        ("NPU100", 11, 9, "unmigrated"), ("NPU100", 11, 25, "unmigrated"),
        ("NPU100", 12, 14, "unmigrated"), ("NPU100", 13, 14, "unmigrated")])
    assert audit_messages(findings) == [
        (11, deprecated("tf.contrib.slim.arg_scope")), (11, deprecated("tf.contrib.slim.conv2d")),
        (12, deprecated("tf.contrib.slim.conv2d")),
        # not listed itself: the longest listed prefix, tf.contrib.slim, decides
        (13, deprecated("tf.contrib.slim.nets.resnet_v1.resnet_v1_50"))]
    assert all(f.level == "" for f in findings)  # SARIF warnings


def test_supported_and_unknown_uses_are_counted_without_a_finding() -> None:
    sites = counted(AUDIT, SLIM_TOWER)
    assert sites == Counter({
        ("tf.contrib.slim", "deprecated", False): 4,
        # xavier_initializer() (listed supported), tf.nn.relu, tf.layers.flatten
        ("", "supported", False): 3,
        ("", "unknown", False): 2,  # tf.app.flags.FLAGS and tf.float32: under nothing but tf
    })
    assert readiness(ApiSites(*key, n) for key, n in sites.items()) == 3 / 7


def test_from_imports_of_contrib_layers_take_their_own_entry() -> None:
    source = '''import tensorflow as tf
from tensorflow.contrib.layers import xavier_initializer, xavier_initializer_conv2d, layer_norm


def dense_block(x, units, init=xavier_initializer_conv2d):
    """A dense layer with layer norm; ``init`` names the initializer, called per layer."""
    y = tf.layers.dense(x, units, kernel_initializer=xavier_initializer())
    return layer_norm(y + tf.layers.dense(x, units, kernel_initializer=init()))
'''
    findings = assert_reports(AUDIT, source, findings=[("NPU100", 5, 31, "unmigrated"),
                                                       ("NPU100", 8, 11, "unmigrated")])
    assert audit_messages(findings) == [(5, deprecated("tf.contrib.layers.xavier_initializer_conv2d")),
                                  (8, deprecated("tf.contrib.layers.layer_norm"))]


def test_any_alias_and_compat_v1_spelling_is_resolved() -> None:
    source = '''import tensorflow.compat.v1 as tf1
import tensorflow as tensorflow_lib

tf1.disable_v2_behavior()


def check_loss(loss):
    finite = tf1.is_finite(loss)
    nan = tensorflow_lib.compat.v1.is_nan(loss)
    dense = tf1.layers.dense(loss, 1)  # a compat-alias of the supported tf.layers.dense
    tensorflow_lib.enable_eager_execution
    return tf1.logical_and(finite, tf1.logical_not(nan)), dense
'''
    findings = assert_reports(AUDIT, source, findings=[
        ("NPU100", 8, 13, "unmigrated"), ("NPU100", 9, 10, "unmigrated"),
        ("NPU100", 11, 4, "unmigrated")])
    assert audit_messages(findings) == [(8, unsupported("tf.is_finite")), (9, unsupported("tf.is_nan")),
                                  (11, unsupported("tf.enable_eager_execution"))]


def test_a_horovod_only_file_is_audited() -> None:
    source = '''"""Averaging helpers; the training script imports TensorFlow itself."""
import horovod.tensorflow as hvd


def average(tensor, name):
    return hvd.allreduce(tensor, average=True, name=name)


def setup():
    hvd.init()
    return hvd.rank(), hvd.local_rank()
'''
    findings = assert_reports(AUDIT, source, findings=[
        ("NPU100", 6, 11, "unmigrated"), ("NPU100", 10, 4, "unmigrated"),
        ("NPU100", 11, 11, "unmigrated"), ("NPU100", 11, 23, "unmigrated")])
    # the distributed pack (NPU021-NPU027) is opt-in: its sites are NPU100's to report
    assert audit_messages(findings) == [(6, pack_off(under_analysis("hvd.allreduce"))),
                                  (10, pack_off(horovod_owner_miss("hvd.init"))),
                                  (11, pack_off(horovod_owner_miss("hvd.local_rank"))),
                                  (11, pack_off(horovod_owner_miss("hvd.rank")))]
    assert [f.level for f in findings] == ["note", "", "", ""]  # SARIF: note, then warnings


def test_horovod_keras_callbacks_and_other_frameworks() -> None:
    keras = ("import tensorflow as tf\nimport horovod.tensorflow.keras as hvd\n\n"
             "callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]\n")
    findings = assert_reports(AUDIT, keras, findings=[("NPU100", 4, 13, "unmigrated")])
    assert audit_messages(findings) == [
        (4, pack_off(horovod_owner_miss("hvd.callbacks.BroadcastGlobalVariablesCallback")))]
    torch = "import torch\nimport horovod.torch as hvd\n\nhvd.init()\nhvd.allreduce(torch.ones(1))\n"
    assert_reports(AUDIT, torch, findings=[])  # not a TensorFlow API
    assert counted(AUDIT, torch) == Counter()


def test_decorators_and_values_are_uses() -> None:
    source = '''import tensorflow as tf


@tf.contrib.framework.add_arg_scope
def conv(inputs, filters, activation=tf.nn.relu):
    return tf.layers.conv2d(inputs, filters, 3, activation=activation)


CHECKS = {"finite": tf.is_finite, "step": tf.train.get_or_create_global_step}
'''
    findings = assert_reports(AUDIT, source, findings=[("NPU100", 4, 1, "unmigrated"),
                                                       ("NPU100", 9, 20, "unmigrated")])
    assert audit_messages(findings) == [(4, deprecated("tf.contrib.framework.add_arg_scope")),
                                  (9, unsupported("tf.is_finite"))]


def test_internal_modules_are_looked_up_under_their_public_name() -> None:
    source = '''import tensorflow as tf
from tensorflow.python.ops import math_ops


def safe_mean(values):
    return tf.reduce_mean(tf.where(math_ops.is_finite(values), values, tf.zeros_like(values)))
'''
    findings = assert_reports(AUDIT, source, findings=[("NPU100", 6, 35, "unmigrated")])
    assert audit_messages(findings) == [(6, unsupported("tf.is_finite"))]


DROPOUT = '''import tensorflow as tf


def classifier(features, keep_prob, noise):
    hidden = tf.layers.dense(features, 256, activation=tf.nn.relu)
    hidden = tf.nn.dropout(hidden, keep_prob)
    return tf.nn.dropout(hidden, keep_prob, noise_shape=noise)
'''


def test_a_site_its_owner_migrated_or_reported_gets_no_finding() -> None:
    after = DROPOUT.replace("tf.nn.dropout(hidden, keep_prob)\n", "npu_ops.dropout(hidden, keep_prob)\n")
    after = "from npu_bridge.npu_init import *\n" + after
    findings = assert_migrates({"NPU004", "NPU100"}, DROPOUT, after, findings=[
        ("NPU004", 6, 13, "migrated"), ("NPU004", 7, 11, "unmigrated")])
    assert audit_messages(findings) == []
    # counted as the file is written: the use NPU004 rewrote away is no API site (its finding
    # is the site), so a rerun over the migrated file counts the same; the other is not ready
    assert counted({"NPU004", "NPU100"}, DROPOUT) == counted({"NPU004", "NPU100"}, after) == Counter({
        ("tf.nn.dropout", "supported-after-migration", False): 1,
        ("", "supported", False): 2})


def test_a_disabled_owner_leaves_its_sites_to_npu100() -> None:
    findings = assert_reports(AUDIT, DROPOUT, findings=[("NPU100", 6, 13, "unmigrated"),
                                                        ("NPU100", 7, 11, "unmigrated")])
    assert audit_messages(findings) == [(6, owner_miss("tf.nn.dropout")), (7, owner_miss("tf.nn.dropout"))]


SESSION = '''import tensorflow as tf


def train(train_op, steps):
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
    with tf.Session(config=config) as sess:
        for _ in range(steps):
            sess.run(train_op)
'''


def test_an_owner_acting_elsewhere_covers_its_api_while_enabled() -> None:
    first = run_rules({"NPU007", "NPU100"}, SESSION)
    assert audit_messages(first.findings) == []  # NPU007 configures tf.ConfigProto through the session
    assert counted({"NPU007", "NPU100"}, SESSION) == Counter({
        ("tf.ConfigProto", "supported-after-migration", True): 1,
        ("tf.Session", "trains-after-migration", True): 1})
    findings = assert_reports(AUDIT, SESSION, findings=[("NPU100", 5, 13, "unmigrated"),
                                                        ("NPU100", 6, 9, "unmigrated")])
    assert audit_messages(findings) == [(5, owner_miss("tf.ConfigProto")), (6, owner_miss("tf.Session"))]


def test_an_owner_that_is_disabled_leaves_the_site_to_the_audit() -> None:
    source = '''import tensorflow as tf


def build(model_fn, model_dir):
    run_config = tf.estimator.RunConfig(model_dir=model_dir, save_summary_steps=0)
    return tf.estimator.Estimator(model_fn=model_fn, config=run_config)
'''
    installed = {rule.id for rule in load_plugins().rules()}
    enabled = installed - {"NPU011", "NPU012", "NPU013"}  # --disable-rule estimator
    findings = assert_reports(enabled, source, findings=[("NPU100", 5, 17, "unmigrated"),
                                                           ("NPU100", 6, 11, "unmigrated")])
    assert audit_messages(findings) == [(5, owner_miss("tf.estimator.RunConfig")),
                                  (6, owner_miss("tf.estimator.Estimator"))]


class ReportsIsFinite(Rule):
    """A third-party rule with its own instruction for tf.is_finite."""

    id = "ACME001"
    name = "acme-is-finite"
    description = "Report tf.is_finite."
    calls = ("tensorflow.is_finite",)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        ctx.report(reference, "unmigrated", "use acme.is_finite")


def test_one_finding_per_site_where_another_rule_reported_the_same_call() -> None:
    source = '''import tensorflow as tf


def guard(loss):
    ok = tf.is_finite(loss); bad = tf.is_nan(loss)
    return tf.debugging.check_numerics(tf.where(tf.is_finite(loss), loss, 0.0), "loss"), ok, bad
'''
    findings = assert_reports([ReportsIsFinite(), ApiSupport()], source, findings=[
        ("ACME001", 5, 9, "unmigrated"), ("NPU100", 5, 35, "unmigrated"),
        ("ACME001", 6, 48, "unmigrated")])
    assert audit_messages(findings) == [(5, unsupported("tf.is_nan"))]  # same line, another call


def test_a_site_another_rule_migrated_is_ready() -> None:
    source = '''import tensorflow as tf


def input_fn(files, batch_size):
    dataset = tf.data.TFRecordDataset(files)
    dataset = dataset.apply(tf.contrib.data.map_and_batch(parse, batch_size))
    return dataset.make_one_shot_iterator().get_next()
'''
    findings = run_rules({"NPU002", "NPU100"}, source).findings
    assert [(f.rule_id, f.line, f.status) for f in findings] == [("NPU002", 6, "migrated")]
    assert counted({"NPU002", "NPU100"}, source) == Counter({
        ("", "supported", False): 1, ("", "supported", True): 1})  # map_and_batch is listed


def test_a_rewrite_that_does_not_compile_uncovers_its_sites() -> None:
    class BreaksDropout(Rule):
        id, name, description = "ACME002", "acme-breaks", "Migrates tf.nn.dropout badly."
        calls = ("tensorflow.nn.dropout",)

        def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
            reference.node.children[0].value = "1 +"
            ctx.report(reference, "migrated", "replaced it")

    outcome = Engine([BreaksDropout(), ApiSupport()]).process(DROPOUT.encode(), "train.py")
    assert outcome.new_data is None and outcome.findings[-1].status == "error"
    assert {row.covered for row in outcome.api_sites} == {False}


def test_every_finding_is_a_plain_unmigrated_finding_and_nothing_is_rewritten() -> None:
    first = run_rules(AUDIT, SLIM_TOWER + DROPOUT.split("\n", 1)[1] + SESSION.split("\n", 1)[1])
    assert first.new is None
    assert {(f.rule_id, f.rule_name, f.status) for f in first.findings} == {
        ("NPU100", "api-support", "unmigrated")}


def test_an_estimator_base_class_is_left_to_the_estimator_pack() -> None:
    """NPU011 migrates where the subclass is constructed (repository facts), not at the class
    line: with the pack enabled, the base class reference is covered."""
    source = '''import tensorflow as tf


class ClassifierEstimator(tf.estimator.Estimator):
    def __init__(self, model_fn, model_dir=None, config=None):
        super(ClassifierEstimator, self).__init__(model_fn=model_fn, model_dir=model_dir,
                                                  config=config)
'''
    installed = {rule.id for rule in load_plugins().rules()}
    assert_reports(installed, source, findings=[])
    findings = assert_reports(installed - {"NPU011", "NPU012", "NPU013"}, source,
                              findings=[("NPU100", 4, 26, "unmigrated")])
    assert audit_messages(findings) == [(4, owner_miss("tf.estimator.Estimator"))]


SESSION_HELPERS = '''import tensorflow as tf


def create_session(gpu_fraction=0.5) -> tf.Session:
    config = tf.ConfigProto()
    config.gpu_options.per_process_gpu_memory_fraction = gpu_fraction
    return tf.Session(config=config)


def run_step(sess: tf.Session, op) -> None:
    sess.run(op)


def is_session(value) -> bool:
    return isinstance(value, tf.Session)
'''


def test_a_session_named_as_a_type_is_no_miss_of_npu007() -> None:
    """An annotation or an ``isinstance`` type makes no session: NPU007 configures the one the
    helper creates, and the types are covered while it is on (StyleGAN's ``tfutil``: a false
    "own miss" made the repository ``needs-work``). With NPU007 off, each is the owner's miss."""
    on = run_rules({"NPU001", "NPU007", "NPU100"}, SESSION_HELPERS)
    assert on.new is not None and 'custom_op.name = "NpuOptimizer"' in on.new
    assert [(f.rule_id, f.line) for f in on.findings if f.rule_id != "NPU001"] == [("NPU007", 7)]
    off = run_rules({"NPU100"}, SESSION_HELPERS).findings
    assert sorted(f.line for f in off) == [4, 5, 7, 10, 15]  # the ConfigProto too


ELASTIC_HELPERS = '''"""Elastic training helpers: the state to commit and the callbacks that commit it."""
import tensorflow as tf
import horovod.tensorflow.keras as hvd


def elastic_callbacks(state):
    callbacks = [hvd.elastic.CommitStateCallback(state), hvd.callbacks.MetricAverageCallback()]
    if hasattr(hvd, "join"):
        callbacks.append(tf.keras.callbacks.LambdaCallback(on_train_end=lambda logs: hvd.join()))
    return callbacks
'''


def test_with_the_distributed_pack_off_every_horovod_use_names_the_opt_in() -> None:
    """APIs Ascend's list does not name, and the module used as a value, are Horovod uses too."""
    findings = assert_reports(AUDIT, ELASTIC_HELPERS, findings=[
        ("NPU100", 7, 17, "unmigrated"), ("NPU100", 7, 57, "unmigrated"),
        ("NPU100", 8, 15, "unmigrated"), ("NPU100", 9, 85, "unmigrated")])

    def unlisted(api: str) -> str:
        return pack_off(f"Horovod API, not in Ascend's list: {api} has no known NPU form: remove "
                        f"it, or use the NPU's collective communication{GUIDE}")

    assert audit_messages(findings) == [
        (7, unlisted("hvd.callbacks.MetricAverageCallback")),
        (7, unlisted("hvd.elastic.CommitStateCallback")),
        (8, f"the Horovod module is used as a value (hvd): {OPT_IN}{GUIDE}"),
        (9, unlisted("hvd.join"))]
    assert {f.level for f in findings} == {"note"}
    assert counted(AUDIT, ELASTIC_HELPERS)[("", "unknown", False)] == 3  # not in the list: unknown
    # with the pack on, NPU025 reports each of them (NPU100 adds nothing, and names no opt-in)
    pack = {"NPU021", "NPU022", "NPU023", "NPU024", "NPU025", "NPU100"}
    findings = run_rules(pack, ELASTIC_HELPERS).findings
    assert sorted((f.rule_id, f.line) for f in findings) == [
        ("NPU025", 7), ("NPU025", 7), ("NPU025", 8), ("NPU025", 9)]


HOROVOD_HELD = '''"""The model keeps the Horovod module it is given; training takes it back."""
import tensorflow as tf


class Model(object):
    def __init__(self, params, hvd=None):
        self._hvd = hvd
        if self._hvd:
            self._shard = params["layer"](num_workers=self._hvd.size(), worker_id=hvd.rank())


def train(train_model):
    hvd = train_model.hvd
    return hvd.allreduce(tf.constant(1.0))
'''


def test_with_the_distributed_pack_off_horovod_held_in_a_parameter_names_the_opt_in() -> None:
    """The uses the pack reports through a parameter, an attribute or a local ``hvd`` are
    Horovod uses too: with the pack off, NPU100 reports them, naming the opt-in."""
    findings = assert_reports(AUDIT, HOROVOD_HELD, findings=[
        ("NPU100", 9, 54, "unmigrated"), ("NPU100", 9, 82, "unmigrated"),
        ("NPU100", 14, 11, "unmigrated")])
    assert audit_messages(findings)[2] == (14, (
        "hvd.allreduce(...) is Horovod's allreduce through the name hvd (named as Horovod's module "
        f"is, and used as it): {OPT_IN}{GUIDE}"))
    assert {f.level for f in findings} == {"note"}
    pack = {"NPU021", "NPU022", "NPU023", "NPU024", "NPU025", "NPU100"}
    assert sorted((f.rule_id, f.line) for f in run_rules(pack, HOROVOD_HELD).findings) == [
        ("NPU025", 9), ("NPU025", 9), ("NPU025", 14)]


XLA_CONFIG = '''"""Session settings of the benchmark: XLA when asked for."""
import tensorflow as tf


def make_session_config(use_xla, intra_threads=0):
    config = tf.ConfigProto(intra_op_parallelism_threads=intra_threads)
    if use_xla:
        config.graph_options.optimizer_options.global_jit_level = (
            tf.OptimizerOptions.ON_1)
    return config
'''
XLA_CONFIG_OFF = XLA_CONFIG.replace('''(
            tf.OptimizerOptions.ON_1)''', "tf.OptimizerOptions.OFF")


def test_a_use_on_a_later_line_of_a_statement_its_owner_rewrote_is_no_finding() -> None:
    """NPU051 reports the assignment at its first line; the ``ON_1`` it replaced sits on the
    next one, and the ``OFF`` it wrote is no finding on a second run either."""
    findings = assert_migrates({"NPU051", "NPU100"}, XLA_CONFIG, XLA_CONFIG_OFF,
                               findings=[("NPU051", 8, 8, "migrated"), ("NPU100", 6, 13, "unmigrated")])
    assert audit_messages(findings) == [(6, owner_miss("tf.ConfigProto"))]  # NPU007 is off: its own
    # the OFF written in place of ON_1 is the NPU form: no API site on either run
    assert counted({"NPU051", "NPU100"}, XLA_CONFIG) == counted({"NPU051", "NPU100"}, XLA_CONFIG_OFF)
    assert not [key for key in counted({"NPU051", "NPU100"}, XLA_CONFIG) if key[0] == "tf.OptimizerOptions"]
    assert audit_messages(run_rules({"NPU051", "NPU100"}, XLA_CONFIG_OFF).findings) == \
        [(6, owner_miss("tf.ConfigProto"))]


TPU_RUN_CONFIG = '''"""The TPU run configuration of the pretraining script (BERT's shape)."""
import tensorflow as tf


def make_run_config(flags, cluster):
    is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
    opts = tf.contrib.tfprof.model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS
    opts["dump_to_file"] = flags.profile_file
    tf.contrib.tfprof.model_analyzer.print_model_analysis(tf.get_default_graph(), tfprof_options=opts)
    return tf.contrib.tpu.RunConfig(
        cluster=cluster,
        tpu_config=tf.contrib.tpu.TPUConfig(
            iterations_per_loop=flags.iterations_per_loop,
            per_host_input_for_training=is_per_host))
'''


def test_a_variable_an_assignment_made_an_alias_of_an_api_is_one_site() -> None:
    """``is_per_host`` and ``opts`` name the API of the line that assigns them: reported and
    counted there only (before: again at each use, lines 8, 9 and 14); the other APIs of the
    lines that use them are their own sites (the print_model_analysis call)."""
    findings = assert_reports(AUDIT, TPU_RUN_CONFIG, findings=[
        ("NPU100", 6, 18, "unmigrated"), ("NPU100", 7, 11, "unmigrated"), ("NPU100", 9, 4, "unmigrated")])
    assert audit_messages(findings) == [
        (6, deprecated("tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2")),
        (7, deprecated("tf.contrib.tfprof.model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS")),
        (9, deprecated("tf.contrib.tfprof.model_analyzer.print_model_analysis"))]
    assert counted(AUDIT, TPU_RUN_CONFIG) == Counter({
        ("tf.contrib.tpu.InputPipelineConfig", "deprecated", False): 1,
        ("tf.contrib.tfprof", "deprecated", False): 2,  # the options and the call
        ("", "supported", False): 3})


def test_an_owner_s_finding_on_a_later_line_of_the_statement_covers_the_use() -> None:
    """NPU051 reports the ``global_jit_level`` it turned off on the argument's own line, below
    ``tf.GraphOptions(``: the use is covered, not "no enabled rule covered this use"."""
    source = ("import tensorflow as tf\n\n"
              "config = tf.ConfigProto(graph_options=tf.GraphOptions(\n"
              "    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.ON_2)))\n"
              "sess = tf.Session(config=config)\n")
    outcome = run_rules({"NPU051", "NPU100"}, source)
    assert outcome.new is not None and "tf.OptimizerOptions.OFF" in outcome.new
    assert [(f.rule_id, f.line) for f in outcome.findings if "NPU007" not in f.message] == [("NPU051", 4)]
    assert not [f for f in outcome.findings if "GraphOptions" in f.message]
