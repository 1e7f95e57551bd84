"""NPU012 tpu-estimator: TPUEstimator with the TPU switched off; TPU-only calls reported."""

from __future__ import annotations

import pytest

from npu_codemod.api._toolkit import class_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages
from support.tpu_towers import OPTIMIZATION

RULES = {"NPU001", "NPU012"}
HEADER = "from npu_bridge.npu_init import *\n"
GUIDE = ("(guide: Estimator migration: TPUEstimator, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu012-tpu-estimator)")


def test_the_switches_are_set_added_and_name_the_old_value():
    before = '''\
import tensorflow as tf

estimator = tf.contrib.tpu.TPUEstimator(
    use_tpu=FLAGS.use_tpu,
    model_fn=model_fn,
    config=run_config,
    train_batch_size=FLAGS.train_batch_size,
    eval_on_tpu=True)
'''
    after = HEADER + before.replace("use_tpu=FLAGS.use_tpu", "use_tpu=False").replace(
        "eval_on_tpu=True)", "eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                               ("NPU012", 3, 12, "migrated")])
    assert messages(findings, "NPU012") == ["set use_tpu=False (was FLAGS.use_tpu), eval_on_tpu=False (was True) "
                                  "and added export_to_tpu=False: the TPU is switched off on the NPU"]


def test_a_tpu_estimator_that_is_already_off_is_migrated_as_it_is():
    source = ("import tensorflow as tf\n\nestimator = tf.compat.v1.estimator.tpu.TPUEstimator(\n"
              "    model_fn, use_tpu=False, eval_on_tpu=False, export_to_tpu=False)\n")
    findings = assert_reports(RULES, source, findings=[("NPU012", 3, 12, "migrated")])
    assert messages(findings, "NPU012") == ["use_tpu, eval_on_tpu and export_to_tpu are False"]


def test_a_positional_use_tpu_is_switched_off_in_place():
    # TPUEstimator(model_fn, model_dir, config, params, use_tpu, ...)
    before = ("from tensorflow.contrib import tpu\n\n"
              "estimator = tpu.TPUEstimator(model_fn, model_dir, config, params, True)\n")
    after = HEADER + before.replace("params, True)", "params, False, eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                               ("NPU012", 3, 12, "migrated")])
    assert messages(findings, "NPU012")[0].startswith("set use_tpu=False (was True) and added eval_on_tpu=False")


def test_switches_that_may_come_in_kwargs_are_reported():
    source = ("import tensorflow as tf\n\n"
              "estimator = tf.contrib.tpu.TPUEstimator(model_fn, use_tpu=False, **tpu_args)\n")
    findings = assert_reports(RULES, source, findings=[("NPU012", 3, 12, "unmigrated"),
                                                       ("NPU012", 3, 12, "unmigrated"),
                                                       ("NPU012", 3, 12, "migrated")])
    assert sorted(messages(findings, "NPU012")) == [
        f"eval_on_tpu may come in the unpacked arguments: pass eval_on_tpu=False explicitly {GUIDE}",
        f"export_to_tpu may come in the unpacked arguments: pass export_to_tpu=False explicitly {GUIDE}",
        "use_tpu is False"]


def test_the_cross_shard_optimizer_is_reported_with_the_optimizer_to_use():
    findings = assert_reports(RULES, OPTIMIZATION, path="optimization.py",
                              findings=[("NPU012", 9, 16, "unmigrated")])
    assert messages(findings, "NPU012") == [
        "TPU-only: remove tf.contrib.tpu.CrossShardOptimizer for the NPU and use `optimizer` "
        f"directly (the NPU needs no cross-shard optimizer) {GUIDE}"]


@pytest.mark.parametrize("call, message", [
    ("tf.contrib.cluster_resolver.TPUClusterResolver(FLAGS.tpu_name, zone=FLAGS.tpu_zone)",
     "TPU-only: remove tf.contrib.cluster_resolver.TPUClusterResolver(...) for the NPU, and the "
     "cluster= it gives the RunConfig: the NPU needs no TPU cluster"),
    ("tf.distribute.cluster_resolver.TPUClusterResolver(tpu=FLAGS.tpu)",
     "TPU-only: remove tf.distribute.cluster_resolver.TPUClusterResolver(...) for the NPU, and the "
     "cluster= it gives the RunConfig: the NPU needs no TPU cluster"),
    ("tf.tpu.bfloat16_scope()",
     "tf.tpu.bfloat16_scope() is not supported on Ascend: remove it (on the NPU, mixed precision "
     "is NPU007's precision_mode setting)"),
    ("tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=op, scaffold_fn=scaffold_fn)",
     "tf.contrib.tpu.TPUEstimatorSpec with scaffold_fn: check the scaffold_fn runs on CPU (without "
     "the TPU, TPUEstimator runs it on the host)"),
    ("tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, None, loss, op, None, None, None, host_call)",
     "tf.compat.v1.estimator.tpu.TPUEstimatorSpec with host_call: check the host_call runs on CPU "
     "(without the TPU, TPUEstimator runs it on the host)"),
    # one site, one finding (it was one per host function: the site counted twice)
    ("tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, host_call=host_call, scaffold_fn=scaffold_fn)",
     "tf.contrib.tpu.TPUEstimatorSpec with scaffold_fn and host_call: check the scaffold_fn and host_call "
     "run on CPU (without the TPU, TPUEstimator runs them on the host)"),
])
def test_tpu_only_calls_are_reported(call: str, message: str):
    source = f"import tensorflow as tf\n\nresult = {call}\n"
    findings = assert_reports(RULES, source, findings=[("NPU012", 3, 9, "unmigrated")])
    assert messages(findings, "NPU012") == [f"{message} {GUIDE}"]


@pytest.mark.parametrize("source", [
    # the TPU RunConfig and TPUConfig stay: TPUEstimator accepts them
    "import tensorflow as tf\n\nrun_config = tf.contrib.tpu.RunConfig(\n"
    "    tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=1000, num_shards=8))\n",
    # a spec that runs nothing on the host
    "import tensorflow as tf\n\nspec = tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, scaffold_fn=None)\n",
])
def test_what_runs_without_the_tpu_is_left_alone(source: str):
    assert_reports(RULES, source, findings=[])


TPU_MODULE = '''\
import tensorflow as tf


class XLNetEstimator(tf.contrib.tpu.TPUEstimator):
    def __init__(self, model_fn, config, use_tpu=True, **kwargs):
        super().__init__(model_fn=model_fn, config=config, use_tpu=use_tpu, **kwargs)


class PodEstimator(tf.contrib.tpu.TPUEstimator):
    def __init__(self, model_fn, config):
        super().__init__(model_fn=model_fn, config=config, use_tpu=True)
'''
FACTS = frozenset(class_facts("xlnet/estimator.py", TPU_MODULE))


def test_the_repositorys_tpu_estimators_are_switched_off_where_they_are_built():
    before = '''\
import tensorflow as tf

from xlnet.estimator import PodEstimator, XLNetEstimator

estimator = XLNetEstimator(model_fn, run_config, FLAGS.use_tpu)
pod = PodEstimator(model_fn, run_config)
'''
    after = HEADER + before.replace("run_config, FLAGS.use_tpu)",
                                    "run_config, False, eval_on_tpu=False, export_to_tpu=False)")
    findings = assert_migrates(RULES, before, after, facts=FACTS, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU012", 5, 12, "migrated"), ("NPU012", 6, 6, "unmigrated"), ("NPU012", 6, 6, "unmigrated"),
        ("NPU012", 6, 6, "unmigrated")])
    assert messages(findings, "NPU012")[1:] == [
        f"PodEstimator.__init__ takes no {flag}: pass {flag}=False to the TPUEstimator it builds {GUIDE}"
        for flag in ("use_tpu", "eval_on_tpu", "export_to_tpu")]
