"""NPU009 rewrite-options-guard: optimizers stay on, remapping/memory_optimization off."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.rules.sess_run.npu009_rewrite_options_guard import MUST_STAY_ON

from support.rules import assert_migrates, assert_unchanged, run_rules, sites
from support.session_config import npu_lines as session_npu_lines

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


CREATE_CONFIG_PROTO = '''\
"""Session configuration for the benchmark (tf_cnn_benchmarks-style helpers)."""
import os

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2


def create_config_proto(params):
  """Returns session config proto.

  Args:
    params: Params tuple, typically created by make_params or
            make_params_from_flags.
  """
  config = tf.ConfigProto()
  config.allow_soft_placement = True
  if params.num_intra_threads is None:
    if params.device == 'gpu':
      config.intra_op_parallelism_threads = 1
  else:
    config.intra_op_parallelism_threads = params.num_intra_threads
  config.inter_op_parallelism_threads = params.num_inter_threads
  config.gpu_options.force_gpu_compatible = params.force_gpu_compatible
  if params.allow_growth is not None:
    config.gpu_options.allow_growth = params.allow_growth
  if params.enable_layout_optimizer is not None:
    if params.enable_layout_optimizer:
      config.graph_options.rewrite_options.layout_optimizer = (
          rewriter_config_pb2.RewriterConfig.ON)
    else:
      config.graph_options.rewrite_options.layout_optimizer = (
          rewriter_config_pb2.RewriterConfig.OFF)
  if params.xla:
    config.graph_options.optimizer_options.global_jit_level = (
        tf.OptimizerOptions.ON_1)
  config.graph_options.rewrite_options.memory_optimization = (
      # swapping to host memory saves GPU memory on large batches
      rewriter_config_pb2.RewriterConfig.HEURISTICS)  # see --memory_optimization
  config.graph_options.rewrite_options.disable_model_pruning = (True)
  config.graph_options.rewrite_options.remapping = (params.remapping)
  return config


def get_mode_from_params(params):
  """Returns the mode in which this script is running."""
  if params.eval:
    return 'evaluation'
  return 'training'
'''


def test_parenthesised_values_in_a_long_config_helper_are_fixed_in_place():
    """Only the enum member (or the bare value) inside the parentheses changes: layout and
    comments stay, as in the unparenthesised form."""
    docstring, rest = CREATE_CONFIG_PROTO.split("\n", 1)
    after = docstring + "\n" + NPU_INIT + REWRITER_IMPORT + rest.replace(
        "rewriter_config_pb2.RewriterConfig.OFF)", "rewriter_config_pb2.RewriterConfig.ON)").replace(
        "RewriterConfig.HEURISTICS)", "RewriterConfig.OFF)").replace(
        "= (True)", "= (False)").replace("(params.remapping)", "(RewriterConfig.OFF)")
    findings = check(CREATE_CONFIG_PROTO, after, [("NPU009", line, 6, "migrated") for line in (28, 31)]
                     + [("NPU009", line, 2, "migrated") for line in (36, 39, 40)])
    assert [f.message for f in findings] == [
        "layout_optimizer is not switched off",
        "switched layout_optimizer back to RewriterConfig.ON: it must stay on for the NPU",
        "set memory_optimization to RewriterConfig.OFF (was rewriter_config_pb2.RewriterConfig."
        "HEURISTICS): it must be off for the NPU",
        "set disable_model_pruning to False (was True): it must stay off for the NPU",
        "set remapping to RewriterConfig.OFF (was params.remapping): it must be off for the NPU",
    ]


@pytest.mark.parametrize("option, before, after", [
    ("constant_folding", "rewriter_config_pb2.RewriterConfig.OFF",
     "rewriter_config_pb2.RewriterConfig.ON"),
    ("remapping", "rewriter_config_pb2.RewriterConfig.ON", "rewriter_config_pb2.RewriterConfig.OFF"),
    ("memory_optimization", "\n        rewriter_config_pb2.RewriterConfig.MANUAL  # fewer copies\n    ",
     "\n        rewriter_config_pb2.RewriterConfig.OFF  # fewer copies\n    "),
    ("disable_model_pruning", "\n        True", "\n        False"),
    ("arithmetic_optimization", "2", "RewriterConfig.ON"),
])
def test_every_option_is_fixed_inside_parentheses(option, before, after):
    source = (PB2 + "def make_config():\n    config = tf.ConfigProto()\n"
              f"    {RO}.{option} = ({{}})\n    return config\n")
    imports = REWRITER_IMPORT if after == "RewriterConfig.ON" else ""
    fixed = NPU_INIT + imports + source.format(after)
    check(source.format(before), fixed, [("NPU009", 6, 4, "migrated")])


def test_a_parenthesised_value_that_is_no_enum_member_is_still_reported():
    source = PB2 + f"config = tf.ConfigProto()\n{RO}.layout_optimizer = (\n    FLAGS.layout)\n"
    (finding,) = assert_unchanged(source, RULES)
    assert finding.message.startswith("layout_optimizer must stay on for the NPU: make sure "
                                      "FLAGS.layout is never RewriterConfig.OFF")


COPIED_OPTIONS = '''\
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.protobuf import rewriter_config_pb2

flags = tf.app.flags
flags.DEFINE_string("rewriter_config", None, "RewriterConfig proto in text format")
FLAGS = flags.FLAGS


def session_config():
    config = tf.ConfigProto(log_device_placement=False)
    if FLAGS.rewriter_config:
        rewriter_config = rewriter_config_pb2.RewriterConfig()
        text_format.Merge(FLAGS.rewriter_config, rewriter_config)
        config.graph_options.rewrite_options.CopyFrom(rewriter_config)
    return config


def main(_):
    loss, train_op = build_model()
    config = tf.ConfigProto()
    config.MergeFrom(session_config())
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(FLAGS.max_steps):
            sess.run(train_op)
'''
STAY_ON = ("function_optimization, constant_folding, shape_optimization, arithmetic_optimization, "
           "loop_optimization, dependency_optimization, layout_optimizer on (not "
           "RewriterConfig.OFF) and disable_model_pruning, disable_meta_optimizer False")
NPU_LINES = ("the NpuOptimizer custom optimizer, remapping = RewriterConfig.OFF, "
             "memory_optimization = RewriterConfig.OFF")


def test_a_copy_says_which_lines_npu_codemod_added_after_it_and_what_is_left():
    """NPU007 writes the NpuOptimizer lines before the session, i.e. after main()'s MergeFrom;
    session_config()'s CopyFrom gets none (its config is no session's in this file)."""
    after = NPU_INIT + REWRITER_IMPORT + COPIED_OPTIONS.replace("""\
    config.MergeFrom(session_config())
""", """\
    config.MergeFrom(session_config())
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    config.allow_soft_placement = True
""")
    rules = {"NPU001", "NPU007", "NPU008", "NPU009"}
    findings = assert_migrates(COPIED_OPTIONS, after, rules, facts={"uses-tf-device"})
    copy, merge = [f for f in findings if f.rule_id == "NPU009"]
    assert (copy.line, copy.status, merge.line, merge.status) == (15, "unmigrated", 22, "unmigrated")
    assert copy.message == (
        f"{RO}.CopyFrom(...) copies session options in from elsewhere; left for you: after this "
        f"line add {NPU_LINES}; make sure the copied options keep {STAY_ON} (guide: "
        "Creating the session and initializing resources: options off or on by default, "
        "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"
        "#npu009-rewrite-options-guard)")
    assert merge.message.startswith(
        f"config.MergeFrom(...) copies session options in from elsewhere; done after it by "
        f"npu-codemod: {NPU_LINES}, allow_soft_placement = True; left for you: make sure the "
        f"copied options keep {STAY_ON} (guide:")
    _, again = run_rules(after, rules, facts={"uses-tf-device"})
    merge_again = [f for f in again if f.rule_id == "NPU009" and f.line == 24]
    assert [f.message.split("; left")[0] for f in merge_again] == [
        f"config.MergeFrom(...) copies session options in from elsewhere; already set after it: "
        f"{NPU_LINES}, allow_soft_placement = True"]


#: A helper that merges the script's options into the config its caller passes.
MERGED_PARAMETER = """\
import tensorflow as tf


def open_session(config, options):
    config.MergeFrom(options)
    return tf.Session(config=config)
"""


def test_a_copy_into_a_config_parameter_counts_the_lines_npu007_gives_its_copy():
    """NPU007 configures a copy of the parameter (the caller's object stays as it was), made
    after the MergeFrom: the copy has the NPU's lines. Read for ``config`` alone they were
    missing: "after this line add the NpuOptimizer" would give the copy a second one."""
    rules = {"NPU001", "NPU007", "NPU008", "NPU009"}
    new, findings = run_rules(MERGED_PARAMETER, rules, facts={"uses-tf-device"})
    assert new is not None and "npu_config = copy.deepcopy(config)\n" in new
    assert_migrates(MERGED_PARAMETER, new, rules, facts={"uses-tf-device"})
    (merge,) = [f for f in findings if f.rule_id == "NPU009"]
    assert merge.message.startswith(
        f"config.MergeFrom(...) copies session options in from elsewhere; done after it by "
        f"npu-codemod: {NPU_LINES}, allow_soft_placement = True; left for you: make sure the "
        f"copied options keep {STAY_ON} (guide:")
    _, again = run_rules(new, rules, facts={"uses-tf-device"})
    assert [f.message.split("; left")[0] for f in again if f.rule_id == "NPU009"] == [
        f"config.MergeFrom(...) copies session options in from elsewhere; already set after it: "
        f"{NPU_LINES}, allow_soft_placement = True"]


def test_a_copy_after_the_npu_lines_may_undo_them():
    source = f"""\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def build_session(base_options):
    config = tf.ConfigProto()
    custom_op = {RO}.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    {RO}.remapping = RewriterConfig.OFF
    {RO}.memory_optimization = RewriterConfig.OFF
    {RO}.CopyFrom(base_options)
    {RO}.layout_optimizer = RewriterConfig.ON
    {RO}.disable_model_pruning = False
    return tf.Session(config=config)
"""
    rules = {"NPU001", "NPU007", "NPU009"}
    findings = assert_unchanged(NPU_INIT + source, rules)
    (copy,) = [f for f in findings if f.rule_id == "NPU009" and f.status == "unmigrated"]
    assert copy.line == 12
    assert copy.message.startswith(
        f"{RO}.CopyFrom(...) copies session options in from elsewhere; already set after it: "
        f"layout_optimizer on, disable_model_pruning = False; left for you: after this line add "
        f"{NPU_LINES} (it may undo {NPU_LINES} set above it); make sure the copied options "
        "keep function_optimization, constant_folding, shape_optimization, arithmetic_optimization, "
        "loop_optimization, dependency_optimization on (not RewriterConfig.OFF) and "
        "disable_meta_optimizer False (guide:")


def test_a_copy_into_a_name_bound_to_the_rewrite_options_counts_the_settings_made_through_it():
    source = f"""\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

config = tf.ConfigProto()
rewrite_options = {RO}
rewrite_options.MergeFrom(load_options())
custom_op = rewrite_options.custom_optimizers.add()
custom_op.name = "NpuOptimizer"
rewrite_options.remapping = RewriterConfig.OFF
rewrite_options.memory_optimization = RewriterConfig.OFF
"""
    findings = assert_unchanged(NPU_INIT + source, RULES)
    (copy,) = [f for f in findings if f.status == "unmigrated"]
    assert copy.message.startswith(
        f"rewrite_options.MergeFrom(...) copies session options in from elsewhere; already set "
        f"after it: {NPU_LINES}; left for you: make sure the copied options keep {STAY_ON} (guide:")


def test_a_copy_into_graph_options_bound_to_a_name_is_reported():
    source = """\
import tensorflow as tf

config = tf.ConfigProto()
graph_options = config.graph_options
graph_options.CopyFrom(tf.GraphOptions(build_cost_model=1))
"""
    (copy,) = assert_unchanged(source, RULES)
    assert copy.message.startswith(
        f"graph_options.CopyFrom(...) copies session options in from elsewhere; left for you: "
        f"after this line add {NPU_LINES}; make sure the copied options keep {STAY_ON} (guide:")


#: A worker that receives its session config from the launcher after configuring its own.
GUIDE_LINES = session_npu_lines("config", "    ")
CONFIGURED_THEN_COPIED = '''\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def worker_session(target, serialized_config):
    config = tf.ConfigProto()
''' + GUIDE_LINES + '''\
    config.ParseFromString(serialized_config)
    return tf.Session(target, config=config)
'''


@pytest.mark.parametrize("copy", ["config.ParseFromString(serialized_config)", "config.CopyFrom(launcher_config)"])
def test_npu_lines_a_later_copy_replaces_are_written_again_after_it(copy: str):
    """``ParseFromString``/``CopyFrom`` clear what was set above them: NPU007 said the config
    "already has" the NPU config while the session got the launcher's options only. The lines
    go after the copy now, and NPU009 says so (and what the copied options must keep)."""
    before = CONFIGURED_THEN_COPIED.replace("config.ParseFromString(serialized_config)", copy)
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "    return tf.Session", GUIDE_LINES + "    return tf.Session")
    rules = {"NPU001", "NPU007", "NPU009"}
    findings = assert_migrates(before, after, rules)
    assert [site for site in sites(findings) if site[0] != "NPU001"] == [
        ("NPU007", 12, 11, "migrated"), ("NPU009", 11, 4, "unmigrated")]
    message = next(f.message for f in findings if f.rule_id == "NPU009")
    assert "done after it by npu-codemod: the NpuOptimizer custom optimizer, remapping = " in message


def test_a_merge_keeps_the_npu_optimizer_set_above_it_and_gets_the_switches_again():
    """A merge appends to the custom optimizers: the NpuOptimizer above stays, and one more
    after it would be a second entry (NPU009 told to add it). The switches a merge may
    overwrite are set again after it."""
    before = CONFIGURED_THEN_COPIED.replace("config.ParseFromString(serialized_config)",
                                            "config.MergeFrom(launcher_config)")
    switches = "".join(GUIDE_LINES.splitlines(keepends=True)[2:])
    after = "from npu_bridge.npu_init import *\n" + before.replace("    return tf.Session", switches + "    return tf.Session")
    findings = assert_migrates(before, after, {"NPU001", "NPU007", "NPU009"})
    message = next(f.message for f in findings if f.rule_id == "NPU009")
    assert message.startswith(
        "config.MergeFrom(...) copies session options in from elsewhere; the NpuOptimizer custom "
        "optimizer set above it stays (a merge appends to the custom optimizers: make sure the "
        "merged options bring no second one); done after it by npu-codemod: remapping = "
        "RewriterConfig.OFF, memory_optimization = RewriterConfig.OFF; left for you: make sure")
    assert "add the NpuOptimizer" not in message
