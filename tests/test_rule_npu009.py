"""NPU009 rewrite-options-guard: optimizers stay on, remapping/memory_optimization off."""

from __future__ import annotations

import pytest
from rulecase import assert_migrates, assert_unchanged, run_rules, sites

from npu_codemod.plugins.rules.npu009_rewrite_options_guard import MUST_STAY_ON

RULES = {"NPU001", "NPU009"}
NPU_INIT = "from npu_bridge.npu_init import *\n"
REWRITER_IMPORT = "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
PB2 = "import tensorflow as tf\nfrom tensorflow.core.protobuf import rewriter_config_pb2\n\n"
RO = "config.graph_options.rewrite_options"


def check(before: str, after: str, expected: list, rules=RULES) -> list:
    """``before`` becomes ``after``; NPU009 sites are ``expected``; a rerun reports all migrated."""
    findings = assert_migrates(before, after, rules)
    assert [s for s in sites(findings) if s[0] == "NPU009"] == expected
    _, second = run_rules(after, rules)
    assert {f.status for f in second} == {"migrated"}, second
    return [f for f in findings if f.rule_id == "NPU009"]


@pytest.mark.parametrize("option", MUST_STAY_ON)
def test_optimizer_switched_off_is_switched_back_on(option):
    before = f"{PB2}config = tf.ConfigProto()\n{RO}.{option} = rewriter_config_pb2.RewriterConfig.OFF\n"
    after = NPU_INIT + before.replace("RewriterConfig.OFF", "RewriterConfig.ON")
    (finding,) = check(before, after, [("NPU009", 5, 0, "migrated")])
    assert finding.message == f"switched {option} back to RewriterConfig.ON: it must stay on for the NPU"


def test_disable_model_pruning_true_becomes_false():
    before = f"{PB2}config = tf.ConfigProto()\n{RO}.disable_model_pruning = True  # smaller graph\n"
    after = NPU_INIT + before.replace("= True", "= False")
    check(before, after, [("NPU009", 5, 0, "migrated")])


def test_remapping_and_memory_optimization_are_switched_off():
    before = PB2 + f"""\
config = tf.ConfigProto()
{RO}.remapping = rewriter_config_pb2.RewriterConfig.ON
{RO}.memory_optimization = FLAGS.mem_opt
"""
    after = NPU_INIT + REWRITER_IMPORT + PB2 + f"""\
config = tf.ConfigProto()
{RO}.remapping = rewriter_config_pb2.RewriterConfig.OFF
{RO}.memory_optimization = RewriterConfig.OFF
"""
    findings = check(before, after, [("NPU009", 5, 0, "migrated"), ("NPU009", 6, 0, "migrated")])
    assert "(was FLAGS.mem_opt)" in findings[1].message


def test_keywords_of_rewriter_config_constructor():
    before = PB2 + """\
rewrite_options = rewriter_config_pb2.RewriterConfig(
    remapping=rewriter_config_pb2.RewriterConfig.ON,  # fuse ops
    constant_folding=rewriter_config_pb2.RewriterConfig.OFF)
config = tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rewrite_options))
"""
    after = NPU_INIT + before.replace("Config.ON,", "Config.X,").replace(
        "Config.OFF)", "Config.ON)").replace("Config.X,", "Config.OFF,")
    check(before, after, [("NPU009", 5, 4, "migrated"), ("NPU009", 6, 4, "migrated")])


def test_options_through_a_local_name_and_rewriter_config_import():
    before = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

sess_config = tf.ConfigProto()
ro = sess_config.graph_options.rewrite_options
ro.layout_optimizer = RewriterConfig.OFF
ro.disable_model_pruning = 1
"""
    after = NPU_INIT + before.replace("RewriterConfig.OFF", "RewriterConfig.ON").replace(
        "= 1", "= False")
    check(before, after, [("NPU009", 6, 0, "migrated"), ("NPU009", 7, 0, "migrated")])


def test_settings_that_are_already_right_are_migrated_findings():
    source = NPU_INIT + REWRITER_IMPORT + """\
import tensorflow as tf

config = tf.ConfigProto()
config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
config.graph_options.rewrite_options.constant_folding = RewriterConfig.AGGRESSIVE
config.graph_options.rewrite_options.disable_model_pruning = False
"""
    findings = assert_unchanged(source, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU009"] == [
        ("NPU009", line, 0, "migrated") for line in (6, 7, 8, 9)
    ]


def test_meta_optimizer_off_copies_and_unknown_values_are_reported():
    source = PB2 + f"""\
config = tf.ConfigProto()
{RO}.disable_meta_optimizer = True
{RO}.arithmetic_optimization = FLAGS.arith
{RO}.disable_model_pruning = FLAGS.prune
{RO}.CopyFrom(base_options)
config.MergeFrom(other_config)
sess = tf.Session(config=config)
"""
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU009", line, 0, "unmigrated") for line in (5, 6, 7, 8, 9)]
    meta, arith, prune, copy, merge = (f.message for f in findings)
    assert meta.startswith("remove disable_meta_optimizer=True: with the meta optimizer disabled")
    assert "make sure FLAGS.arith is never RewriterConfig.OFF" in arith
    assert "set it to False (now: FLAGS.prune)" in prune
    assert copy.startswith(f"{RO}.CopyFrom(...) copies session options in from elsewhere")
    assert merge.startswith("config.MergeFrom(...) copies session options")
    assert "NpuOptimizer" in merge


def test_unrelated_attributes_with_option_names_are_ignored():
    source = """\
import tensorflow as tf

self.remapping = {"a": 1}
cache.memory_optimization = "off"
other.CopyFrom(x)
"""
    assert assert_unchanged(source, RULES) == []


def test_together_with_npu007_on_a_real_script():
    before = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def main():
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.remapping = RewriterConfig.ON
    config.graph_options.rewrite_options.shape_optimization = RewriterConfig.OFF
    with tf.Session(config=config) as sess:
        sess.run(train_op)
"""
    after = NPU_INIT + """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def main():
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.shape_optimization = RewriterConfig.ON
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    with tf.Session(config=config) as sess:
        sess.run(train_op)
"""
    check(before, after, [("NPU009", 7, 4, "migrated"), ("NPU009", 8, 4, "migrated")],
          rules={"NPU001", "NPU007", "NPU009"})


def test_second_run_reports_the_same_sites_as_the_first():
    """The NpuOptimizer lines NPU007 writes are NPU007's sites, not new NPU009 ones."""
    source = (
        "import tensorflow as tf\n"
        "config = tf.ConfigProto()\n"
        "config.graph_options.rewrite_options.constant_folding = RewriterConfig.OFF\n"
        "sess = tf.Session(config=config)\n"
        "sess.run(x)\n"
    )
    first, first_findings = run_rules(source)
    assert first is not None
    again, again_findings = run_rules(first)
    assert again is None
    count = lambda findings: sorted((f.rule_id, f.status) for f in findings)  # noqa: E731
    assert count(again_findings) == count(first_findings)
