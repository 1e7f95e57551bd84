"""NPU007's copy of a config parameter (``npu_config = copy.deepcopy(config)``): one copy for
the sessions of a function that nothing between them changes, none where the function copies
the config itself, no guard where the function makes the config when None, and the comments
above the session left attached to it."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.rules.sess_run.npu008_soft_placement import FACT

from support.rules import assert_migrates, messages, run_rules, sites
from support.session_config import HEADER, RULES, check, npu_lines

COPY_HEADER = HEADER.replace("import *\n", "import *\nimport copy\n")


def _copied(name: str, parameter: str, indent: str, copied: str = "") -> str:
    """A copy of the parameter ``parameter`` given the guide's lines (``_configure_copy``)."""
    return f"{indent}{name} = {copied or f'copy.deepcopy({parameter})'}\n" + npu_lines(name, indent)


#: An evaluation helper that makes its default config inside the ``try`` that reports a
#: missing checkpoint (the function already makes the config when None).
MADE_IN_TRY = '''\
import tensorflow as tf


def evaluate(checkpoint, eval_op, config=None):
    try:
        if config is None:
            config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            tf.train.Saver().restore(sess, checkpoint)
            return sess.run(eval_op)
    except tf.errors.NotFoundError:
        tf.logging.warning("no checkpoint at %s", checkpoint)
        return None
'''


def test_a_config_made_when_none_inside_the_try_gets_no_second_guard():
    """``if config is None:`` runs before the session in the same ``try`` body: the copy's
    ``... if config is not None else tf.ConfigProto()`` repeated it for nothing."""
    after = COPY_HEADER + MADE_IN_TRY.replace(
        "        with tf.Session(config=config)",
        _copied("npu_config", "config", " " * 8) + "        with tf.Session(config=npu_config)")
    check(MADE_IN_TRY, after, [("NPU007", 8, 13, "migrated")])


#: The default config made in a ``try`` whose ``finally`` logs; the session comes after it.
MADE_BEFORE_FINALLY = '''\
import tensorflow as tf


def predict(checkpoint, inputs, config=None):
    try:
        config = config or tf.ConfigProto()
        config.gpu_options.allow_growth = True
    finally:
        tf.logging.info("session config ready")
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
        return sess.run("output:0", {"input:0": inputs})
'''


def test_a_config_made_in_a_try_with_only_finally_gets_no_guard_after_it():
    after = COPY_HEADER + MADE_BEFORE_FINALLY.replace(
        "    with tf.Session(config=config)", _copied("npu_config", "config", "    ")
        + "    with tf.Session(config=npu_config)")
    check(MADE_BEFORE_FINALLY, after, [("NPU007", 10, 9, "migrated")])


def test_a_config_made_in_a_try_whose_handler_goes_on_keeps_the_guard():
    """A handled error may stop the ``try`` body before the config is made: the session may
    still get None there, and the copy makes a new config then."""
    before = MADE_BEFORE_FINALLY.replace("    finally:\n", "    except ValueError:\n")
    after = COPY_HEADER + before.replace(
        "    with tf.Session(config=config)", _copied(
            "npu_config", "config", "    ", "copy.deepcopy(config) if config is not None else tf.ConfigProto()")
        + "    with tf.Session(config=npu_config)")
    check(before, after, [("NPU007", 10, 9, "migrated")])


#: A helper of a training script: train in one session, evaluate the checkpoint in another,
#: both with the caller's config.
TRAIN_THEN_EVALUATE = '''\
import tensorflow as tf


def train_and_evaluate(config, train_op, eval_op, steps):
    saver = tf.train.Saver()
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op)
        path = saver.save(sess, "/tmp/model.ckpt")
    with tf.Session(config=config) as sess:
        saver.restore(sess, path)
        return sess.run(eval_op)
'''


def test_two_sessions_of_a_function_share_one_copy_of_its_config_parameter():
    """Nothing between the sessions touches ``config``: the copy made for the training session
    serves the evaluation session too (a second ``npu_config_1 = copy.deepcopy(config)`` with
    its own lines said the same thing again)."""
    after = COPY_HEADER + TRAIN_THEN_EVALUATE.replace(
        "    with tf.Session(config=config) as sess:\n        sess.run(tf.global",
        _copied("npu_config", "config", "    ") + "    with tf.Session(config=npu_config) as sess:\n"
        "        sess.run(tf.global").replace(
        "    with tf.Session(config=config) as sess:\n        saver.restore",
        "    with tf.Session(config=npu_config) as sess:\n        saver.restore")
    findings = assert_migrates(TRAIN_THEN_EVALUATE, after, RULES)
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [
        ("NPU007", 6, 9, "migrated"), ("NPU007", 11, 9, "migrated")]
    assert messages(findings, "NPU007")[1] == (
        "passed the copy 'npu_config' of the parameter 'config' made for the session at line 6 "
        "(nothing uses 'config' in between), which has the NPU optimizer config (NpuOptimizer on; "
        "remapping, memory_optimization off)")


def test_the_shared_copy_gets_soft_placement_once():
    new, findings = run_rules(TRAIN_THEN_EVALUATE, RULES | {"NPU008"}, {FACT})
    assert new is not None and new.count("npu_config.allow_soft_placement = True") == 1
    assert new.count("copy.deepcopy(config)") == 1
    assert_migrates(TRAIN_THEN_EVALUATE, new, RULES | {"NPU008"}, {FACT})  # the same sites again


@pytest.mark.parametrize("between", [
    "    config.gpu_options.per_process_gpu_memory_fraction = 0.3\n",
    "    tune_for_evaluation(config)\n",
    "    config = tf.ConfigProto(log_device_placement=True)\n",
])
def test_a_session_after_a_change_of_the_parameter_gets_its_own_copy(between: str):
    """The evaluation session must see what the function did to ``config`` after training (a
    smaller memory fraction, a helper that may change it, another object): a copy made before
    the change would not have it."""
    before = TRAIN_THEN_EVALUATE.replace("    with tf.Session(config=config) as sess:\n        saver.restore",
                                         between + "    with tf.Session(config=config) as sess:\n        saver.restore")
    new, findings = run_rules(before, RULES)
    assert new is not None and new.count("copy.deepcopy(config)") == 2 - ("ConfigProto(" in between)
    assert new.count("custom_optimizers.add()") == 2
    assert_migrates(before, new, RULES)


def test_a_session_in_another_branch_gets_its_own_copy():
    """Only one branch runs: the copy of the other is not made on this path."""
    before = TRAIN_THEN_EVALUATE.replace(
        "    with tf.Session(config=config) as sess:\n        saver.restore",
        "    if eval_op is None:\n        return None\n    with tf.Session(config=config) as sess:\n"
        "        saver.restore").replace("def train_and_evaluate(config,", "def train_and_evaluate(config, ")
    new, _ = run_rules(before, RULES)
    assert new is not None and new.count("copy.deepcopy(config)") == 1  # the return leaves no path unmade
    branched = TRAIN_THEN_EVALUATE.replace("    with tf.Session(config=config) as sess:\n        saver.restore",
                                           "    if eval_op is not None:\n        with tf.Session(config=config) as sess:\n"
                                           "            saver.restore").replace(
        "        return sess.run(eval_op)\n", "            return sess.run(eval_op)\n")
    new, _ = run_rules(branched, RULES)
    assert new is not None and new.count("copy.deepcopy(config)") == 1  # the if's block is after the copy
    first = TRAIN_THEN_EVALUATE.replace("    with tf.Session(config=config) as sess:\n        sess.run(tf.global",
                                        "    if steps:\n        with tf.Session(config=config) as sess:\n"
                                        "            sess.run(tf.global").replace(
        "        for _ in range(steps):\n            sess.run(train_op)\n        path = saver.save(sess, \"/tmp/model.ckpt\")\n",
        "            for _ in range(steps):\n                sess.run(train_op)\n"
        "            path = saver.save(sess, \"/tmp/model.ckpt\")\n")
    new, _ = run_rules(first, RULES)
    assert new is not None and new.count("copy.deepcopy(config)") == 2  # the first copy may not run
    assert_migrates(first, new, RULES)


#: An evaluation helper that copies the caller's config itself before adjusting it.
OWN_COPY = '''\
import copy

import tensorflow as tf


def evaluate(checkpoint, eval_op, config):
    config = copy.deepcopy(config)
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
        return sess.run(eval_op)
'''


@pytest.mark.parametrize("copied, name", [
    ("    config = copy.deepcopy(config)\n", "config"),
    ("    cfg = copy.copy(config)\n", "cfg"),
    ("    cfg = tf.ConfigProto()\n    cfg.CopyFrom(config)\n", "cfg"),
])
def test_the_functions_own_copy_of_its_parameter_is_configured_in_place(copied: str, name: str):
    """The function copies the caller's config itself: its copy gets the lines, and no second
    ``copy.deepcopy`` is made of it."""
    before = OWN_COPY.replace("    config = copy.deepcopy(config)\n", copied).replace(
        "    config.gpu_options", f"    {name}.gpu_options").replace("Session(config=config)", f"Session(config={name})")
    after = HEADER + before.replace("    with tf.Session", npu_lines(name, "    ") + "    with tf.Session")
    new, findings = run_rules(before, RULES)
    assert new == after
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [("NPU007", 9 + copied.count("\n") - 1, 9, "migrated")]


#: Each checkpoint evaluated with a copy of the config as the last pass left it.
COPIED_PER_PASS = '''\
import copy

import tensorflow as tf


def evaluate_all(checkpoints, eval_op, config):
    for checkpoint in checkpoints:
        config = copy.deepcopy(config)
        config.gpu_options.per_process_gpu_memory_fraction = checkpoint.memory
        with tf.Session(config=config) as sess:
            tf.train.Saver().restore(sess, checkpoint.path)
            sess.run(eval_op)
'''


def test_a_config_copied_from_itself_in_a_loop_is_copied_again_for_the_session():
    """``config = copy.deepcopy(config)`` copies the object the last pass configured: lines for
    it gave the second pass's object a second NpuOptimizer (two on the third...). The session
    takes a configured copy; ``config`` itself stays without the lines."""
    after = HEADER + COPIED_PER_PASS.replace(
        "        with tf.Session(config=config)", _copied("npu_config", "config", " " * 8)
        + "        with tf.Session(config=npu_config)")
    check(COPIED_PER_PASS, after, [("NPU007", 10, 13, "migrated")])


#: A script whose training session configures the config it then hands to ``evaluate``.
CONFIGURED_BY_MAIN = '''

def main(checkpoint, train_op, eval_op):
    config = tf.ConfigProto()
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    with tf.Session(config=config) as sess:
        sess.run(train_op)
    return evaluate(checkpoint, eval_op, config)
'''


@pytest.mark.parametrize("copied, name", [
    ("    config = copy.deepcopy(config)\n", "config"),
    ("    cfg = copy.copy(config)\n", "cfg"),
])
def test_a_copy_of_a_parameter_that_the_caller_configured_is_reported(copied: str, name: str):
    """The copy has the caller's NpuOptimizer: lines for it gave it a second one."""
    before = OWN_COPY.replace("    config = copy.deepcopy(config)\n", copied).replace(
        "    config.gpu_options", f"    {name}.gpu_options").replace(
        "Session(config=config)", f"Session(config={name})").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\n"
        "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n") + CONFIGURED_BY_MAIN
    new, findings = run_rules(before, RULES)
    assert new is None
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [
        ("NPU007", 10, 9, "unmigrated"), ("NPU007", 21, 9, "migrated")]
    assert messages(findings, "NPU007")[0].startswith(
        "'config' is a parameter of evaluate, and line 23 passes it a config that is configured there")


#: Sessions introduced by comments right above them, after a blank line.
COMMENTED = '''\
import tensorflow as tf


def evaluate(checkpoint, config):
    saver = tf.train.Saver()

    # Restore the trained weights into a fresh session.
    with tf.Session(config=config) as sess:
        saver.restore(sess, checkpoint)


def train(train_op):
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True  # grow as needed

    # Start training.
    # (the session closes at the end of the block)
    with tf.Session(config=config) as sess:
        sess.run(train_op)


def serve(fetches):
    # A session with the defaults.
    sess = tf.Session()
    return sess.run(fetches)
'''


def test_the_lines_go_above_the_comments_that_introduce_the_session():
    """A comment right above the session (no blank line between) is the session's: the lines
    written for its config go above it, after the blank line, so it still introduces the
    session; NPU008's soft placement line too. The first statement of a block keeps its
    comment (held by the block's indentation) the same way."""
    after = COPY_HEADER + COMMENTED.replace(
        "    # Restore the trained", _copied("npu_config", "config", "    ")
        + "    npu_config.allow_soft_placement = True\n    # Restore the trained").replace(
        "Session(config=config) as sess:\n        saver", "Session(config=npu_config) as sess:\n        saver").replace(
        "    # Start training.\n", npu_lines("config", "    ") + "    config.allow_soft_placement = True\n"
        "    # Start training.\n").replace(
        "    # A session with the defaults.\n    sess = tf.Session()",
        "    config = tf.ConfigProto(allow_soft_placement=True)\n" + npu_lines("config", "    ")
        + "    # A session with the defaults.\n    sess = tf.Session(config=config)")
    assert_migrates(COMMENTED, after, RULES | {"NPU008"}, {FACT})


def test_comments_above_the_session_keep_crlf_line_ends():
    before = COMMENTED.replace("\n", "\r\n")
    new, _ = run_rules(before, RULES)
    assert new is not None and "\n" not in new.replace("\r\n", "")
    assert "    # Restore the trained weights into a fresh session.\r\n    with tf.Session(config=npu_config)" in new
