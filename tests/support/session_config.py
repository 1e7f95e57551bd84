"""What NPU007 writes into a session config, for the tests of the rules that read or extend it.

``npu_lines("config")`` are the guide's lines after a config object's creation; ``HEADER`` the
imports they need; :func:`check` is one NPU007 golden test (before, after, sites, a rerun).
"""

from __future__ import annotations

from support.rules import assert_migrates, run_rules, sites

RULES = {"NPU001", "NPU007"}
HEADER = (
    "from npu_bridge.npu_init import *\n"
    "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
)


#: A module of session helpers (``utils/session_utils.py``): ``create_session`` takes its
#: caller's config (NPU007 across files).
SESSION_UTILS = '''\
"""Session helpers shared by the training and evaluation scripts."""

import tensorflow as tf


def make_config(threads):
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    config.gpu_options.allow_growth = True
    return config


def default_session():
    return tf.Session(config=make_config(4))


def create_session(config, target=""):
    """A session on ``target`` with the caller's config, its variables initialized."""
    sess = tf.Session(target, config=config)
    sess.run(tf.global_variables_initializer())
    return sess
'''
#: Trains, then evaluates in a second session that the helper makes with the same config.
TRAIN_THEN_EVALUATE = '''\
import tensorflow as tf

from utils import session_utils


def main(_):
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run("train_op")
    eval_sess = session_utils.create_session(config)
    print(eval_sess.run("accuracy:0"))
    eval_sess.close()
'''


def npu_lines(name: str, indent: str = "", newline: str = "\n", custom_op: str = "custom_op") -> str:
    """The guide's lines for config object ``name`` (after its creation)."""
    lines = [
        f"{custom_op} = {name}.graph_options.rewrite_options.custom_optimizers.add()",
        f'{custom_op}.name = "NpuOptimizer"',
        f"{name}.graph_options.rewrite_options.remapping = RewriterConfig.OFF",
        f"{name}.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF",
    ]
    return "".join(f"{indent}{line}{newline}" for line in lines)


def check(before: str, after: str, expected: list, rules=RULES) -> None:
    """``before`` becomes ``after``; findings are ``expected`` (NPU007 sites); rerun: all migrated."""
    findings = assert_migrates(before, after, rules)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == expected
    _, second = run_rules(after, rules)
    assert {f.status for f in second} == {"migrated"}, second
