"""NPU007 session-config: golden before/after scripts for every session form of the spec."""

from __future__ import annotations

from collections import Counter

import pytest

from support.rules import assert_migrates, assert_unchanged, run_rules, sites
from support.session_config import HEADER, RULES, check, npu_lines

GUIDE_BEFORE = """\
import tensorflow as tf

# 变量初始化
init=tf.global_variables_initializer()
sess=tf.Session()
sess.run(init)
"""


def test_guide_example_creates_the_config():
    after = HEADER + """\
import tensorflow as tf

# 变量初始化
init=tf.global_variables_initializer()
config = tf.ConfigProto()
""" + npu_lines("config") + """\
sess=tf.Session(config=config)
sess.run(init)
"""
    check(GUIDE_BEFORE, after, [("NPU007", 5, 5, "migrated")])


def test_message_names_the_new_config():
    _, findings = run_rules(GUIDE_BEFORE, RULES)
    (finding,) = [f for f in findings if f.rule_id == "NPU007"]
    assert finding.message.startswith("created 'config' with the NPU optimizer config")


def test_compat_v1_import_and_interactive_session():
    before = """\
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

sess = tf.InteractiveSession()
"""
    after = HEADER + """\
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

config = tf.ConfigProto()
""" + npu_lines("config") + """\
sess = tf.InteractiveSession(config=config)
"""
    check(before, after, [("NPU007", 4, 7, "migrated")])


def test_compat_v1_spelling_is_kept_in_generated_code_with_tabs_and_crlf():
    before = (
        "import tensorflow as tf\r\n\r\ndef run(steps):\r\n\tgraph = tf.Graph()\r\n"
        "\twith graph.as_default():\r\n\t\tif steps:\r\n"
        "\t\t\tsess = tf.compat.v1.Session(graph=graph)  # train\r\n\t\t\treturn sess\r\n"
    )
    after = (
        HEADER.replace("\n", "\r\n") + "import tensorflow as tf\r\n\r\ndef run(steps):\r\n"
        "\tgraph = tf.Graph()\r\n\twith graph.as_default():\r\n\t\tif steps:\r\n"
        "\t\t\tconfig = tf.compat.v1.ConfigProto()\r\n" + npu_lines("config", "\t\t\t", "\r\n")
        + "\t\t\tsess = tf.compat.v1.Session(graph=graph, config=config)  # train\r\n"
        "\t\t\treturn sess\r\n"
    )
    check(before, after, [("NPU007", 7, 10, "migrated")])


def test_taken_name_config_gives_npu_config_in_with_statement():
    before = '''\
import numpy as np
import tensorflow as tf


def train(config, train_size, batch_size):
    """Train with the params in ``config`` (a dict)."""
    init = tf.global_variables_initializer()
    for epoch in range(config["epochs"]):
        # one session per epoch
        with tf.Session() as sess:
            sess.run(init)
'''
    after = HEADER + '''\
import numpy as np
import tensorflow as tf


def train(config, train_size, batch_size):
    """Train with the params in ``config`` (a dict)."""
    init = tf.global_variables_initializer()
    for epoch in range(config["epochs"]):
        npu_config = tf.ConfigProto()
''' + npu_lines("npu_config", " " * 8) + '''\
        # one session per epoch
        with tf.Session(config=npu_config) as sess:
            sess.run(init)
'''
    check(before, after, [("NPU007", 10, 13, "migrated")])


def test_existing_config_object_gets_the_lines_before_the_call():
    before = """\
import tensorflow as tf

cfg = tf.ConfigProto()
cfg.gpu_options.allow_growth = True

sess = tf.Session('', None, cfg)
"""
    after = HEADER + """\
import tensorflow as tf

cfg = tf.ConfigProto()
cfg.gpu_options.allow_growth = True

""" + npu_lines("cfg") + """\
sess = tf.Session('', None, cfg)
"""
    check(before, after, [("NPU007", 6, 7, "migrated")])


def test_inline_config_and_helper_call_are_hoisted_in_methods():
    before = """\
import tensorflow as tf
from utils import session_config


class Trainer(object):
    def __init__(self, graph):
        self.graph = graph
        self.sess = tf.Session(graph=graph, config=session_config(FLAGS.gpus))

    def evaluator(self):
        return tf.Session(config=tf.ConfigProto(
            log_device_placement=True,  # debug placement
            gpu_options=tf.GPUOptions(allow_growth=True)))
"""
    after = HEADER + """\
import tensorflow as tf
from utils import session_config


class Trainer(object):
    def __init__(self, graph):
        self.graph = graph
        config = session_config(FLAGS.gpus)
""" + npu_lines("config", " " * 8) + """\
        self.sess = tf.Session(graph=graph, config=config)

    def evaluator(self):
        config = tf.ConfigProto(
            log_device_placement=True,  # debug placement
            gpu_options=tf.GPUOptions(allow_growth=True))
""" + npu_lines("config", " " * 8) + """\
        return tf.Session(config=config)
"""
    check(before, after, [("NPU007", 8, 20, "migrated"), ("NPU007", 11, 15, "migrated")])


def test_same_file_helper_functions_get_the_lines_once():
    before = """\
import tensorflow as tf


def make_config():
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    return config


def get_sess_config():
    return tf.ConfigProto(inter_op_parallelism_threads=4)


def train():
    sess = tf.Session(config=make_config())
    eval_sess = tf.Session(config=make_config())
    cfg = get_sess_config()
    test_sess = tf.Session(config=cfg)
"""
    after = HEADER + """\
import tensorflow as tf


def make_config():
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
""" + npu_lines("config", "    ") + """\
    return config


def get_sess_config():
    config = tf.ConfigProto(inter_op_parallelism_threads=4)
""" + npu_lines("config", "    ") + """\
    return config


def train():
    sess = tf.Session(config=make_config())
    eval_sess = tf.Session(config=make_config())
    cfg = get_sess_config()
    test_sess = tf.Session(config=cfg)
"""
    check(before, after, [("NPU007", 15, 11, "migrated"), ("NPU007", 16, 16, "migrated"),
                          ("NPU007", 18, 16, "migrated")])


def test_self_sess_and_return_session():
    before = """\
import tensorflow as tf


class Model:
    def __init__(self):
        self.sess = tf.Session()

    def new_session(self):
        return tf.Session()
"""
    after = HEADER + """\
import tensorflow as tf


class Model:
    def __init__(self):
        config = tf.ConfigProto()
""" + npu_lines("config", " " * 8) + """\
        self.sess = tf.Session(config=config)

    def new_session(self):
        config = tf.ConfigProto()
""" + npu_lines("config", " " * 8) + """\
        return tf.Session(config=config)
"""
    check(before, after, [("NPU007", 6, 20, "migrated"), ("NPU007", 9, 15, "migrated")])


def test_self_config_attribute_configured_in_another_method_is_complete():
    source = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


class Model:
    def __init__(self):
        self.config = tf.ConfigProto()
""" + npu_lines("self.config", " " * 8) + """
    def build(self):
        self.sess = tf.Session(config=self.config)
"""
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU007", 14, 20, "migrated")]


def test_already_migrated_module_config_keras_and_monitored_training_session():
    before = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
from tensorflow.keras import backend as K

config = tf.ConfigProto(allow_soft_placement=True)
""" + npu_lines("config") + """

def main():
    K.set_session(tf.Session(config=config))
    hooks = [tf.train.StopAtStepHook(last_step=1000)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir="ckpt", hooks=hooks) as mon_sess:
        while not mon_sess.should_stop():
            mon_sess.run(train_op)
"""
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "    with tf.train.Monitored",
        "    npu_config = tf.ConfigProto()\n" + npu_lines("npu_config", "    ")
        + "    with tf.train.Monitored",
    ).replace('hooks=hooks)', 'hooks=hooks, config=npu_config)')
    check(before, after, [("NPU007", 13, 18, "migrated"), ("NPU007", 15, 9, "migrated")])


def test_already_migrated_guide_output_is_left_alone():
    source = HEADER + """\
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=True)
""" + npu_lines("config") + """\
sess = tf.Session(config=config)
"""
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU007", 10, 7, "migrated")]


def test_partially_migrated_config_gets_only_the_missing_lines():
    before = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

config = tf.ConfigProto()
custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
custom_op.name = 'NpuOptimizer'
sess = tf.Session(config=config)
"""
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "sess = ", "".join(npu_lines("config").splitlines(keepends=True)[2:]) + "sess = ")
    check(before, after, [("NPU007", 7, 7, "migrated")])


def test_supervisor_monitored_session_creators():
    before = """\
import tensorflow as tf

sv = tf.train.Supervisor(logdir="/tmp/logs")
sess_config = tf.ConfigProto(log_device_placement=False)
with sv.managed_session() as sess:
    pass
sess = sv.prepare_or_wait_for_session(FLAGS.master, config=sess_config)
scaffold = tf.train.Scaffold()
mon = tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold))
single = tf.train.SingularMonitoredSession(hooks=[], config=sess_config)
"""
    after = HEADER + """\
import tensorflow as tf

sv = tf.train.Supervisor(logdir="/tmp/logs")
sess_config = tf.ConfigProto(log_device_placement=False)
config = tf.ConfigProto()
""" + npu_lines("config") + """\
with sv.managed_session(config=config) as sess:
    pass
""" + npu_lines("sess_config") + """\
sess = sv.prepare_or_wait_for_session(FLAGS.master, config=sess_config)
scaffold = tf.train.Scaffold()
mon = tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold, config=config))
single = tf.train.SingularMonitoredSession(hooks=[], config=sess_config)
"""
    check(before, after, [("NPU007", 5, 5, "migrated"), ("NPU007", 7, 7, "migrated"),
                          ("NPU007", 9, 6, "migrated"), ("NPU007", 9, 48, "migrated"),
                          ("NPU007", 10, 9, "migrated")])


MONITORED_TRAINER = """\
import tensorflow as tf


def train(train_op, hooks, checkpoint_dir, master):
    config = tf.ConfigProto(allow_soft_placement=True)
    creator = tf.train.ChiefSessionCreator(config=config, checkpoint_dir=checkpoint_dir)
    with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    with tf.train.MonitoredSession(
            session_creator=tf.train.ChiefSessionCreator(config=config)) as sess:
        sess.run(train_op)
    with tf.train.MonitoredSession(session_creator=make_creator(master)) as sess:
        sess.run(train_op)
"""


def test_a_monitored_session_is_covered_by_its_session_creators_config():
    """The creator's config is NPU007's: the MonitoredSession line has NPU007's finding too, so
    NPU100 sees its owner covered it (no 'no enabled rule covered this use')."""
    before = MONITORED_TRAINER
    after = HEADER + before.replace(
        "    creator = ", npu_lines("config", "    ") + "    creator = ")
    findings = assert_migrates(before, after, RULES | {"NPU100"})
    assert [s for s in sites(findings) if s[0] in ("NPU007", "NPU100")] == [
        ("NPU007", 6, 14, "migrated"), ("NPU007", 7, 9, "migrated"), ("NPU007", 10, 9, "migrated"),
        ("NPU007", 11, 28, "migrated"), ("NPU007", 13, 9, "unmigrated")]
    messages = {f.line: f.message for f in findings if f.rule_id == "NPU007" and f.column == 9}
    assert messages[7] == "the session takes its config from creator, configured where it is made"
    assert messages[10] == ("the session takes its config from its tf.train.ChiefSessionCreator, "
                            "configured there")
    assert messages[13].startswith(
        "the session creator make_creator(master) is not shown to be a ChiefSessionCreator or "
        "WorkerSessionCreator: make sure it creates the session with a config that has the NPU "
        "optimizer config (NpuOptimizer on; remapping, memory_optimization off)")


def test_sessions_after_a_created_config_in_the_same_scope_share_it():
    before = """\
import tensorflow as tf


def evaluate(checkpoints):
    with tf.Session() as sess:
        sess.run(init)
    for path in checkpoints:
        if path:
            with tf.Session() as sess:
                saver.restore(sess, path)
"""
    after = HEADER + """\
import tensorflow as tf


def evaluate(checkpoints):
    config = tf.ConfigProto()
""" + npu_lines("config", "    ") + """\
    with tf.Session(config=config) as sess:
        sess.run(init)
    for path in checkpoints:
        if path:
            with tf.Session(config=config) as sess:
                saver.restore(sess, path)
"""
    check(before, after, [("NPU007", 5, 9, "migrated"), ("NPU007", 9, 17, "migrated")])
    _, findings = run_rules(before, RULES)
    assert findings[1].message.startswith("passed 'config' with the NPU optimizer config")


def test_from_imported_session_and_module_global_configured_at_module_level():
    source = """\
from tensorflow import ConfigProto, Session
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

CONFIG = ConfigProto()
""" + npu_lines("CONFIG") + """

def run():
    return Session(config=CONFIG)
"""
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU007", 12, 11, "migrated")]


@pytest.mark.parametrize("code, where", [
    ("make = lambda: tf.Session()\n", "inside a lambda"),
    ("def make(sess=tf.Session()):\n    return sess\n", "default argument"),
    ("sessions = [tf.Session() for _ in range(2)]\n", "inside a comprehension"),
    ("x = 1; sess = tf.Session()\n", "after a ';'"),
])
def test_no_place_for_statements_is_reported_with_the_snippet(code, where):
    findings = assert_unchanged("import tensorflow as tf\n" + code, RULES)
    (finding,) = findings
    assert (finding.rule_id, finding.line, finding.status) == ("NPU007", 2, "unmigrated")
    assert where in finding.message
    assert 'custom_op.name = "NpuOptimizer"' in finding.message
    assert "config = tf.ConfigProto()" in finding.message
    assert "pass config=config" in finding.message


def test_unpacked_session_kwargs_are_reported():
    source = """\
import tensorflow as tf

sess = tf.Session(**session_kwargs)
"""
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU007", 3, 7, "unmigrated")]
    assert "make sure config= is given" in findings[0].message


#: deepmind/learning-to-learn's ``train.py``: the session is a MonitoredSession without a
#: session creator (it then makes ``ChiefSessionCreator()``, whose config is None).
MONITORED_WITHOUT_CREATOR = """\
import tensorflow as tf


def main(_):
    step, update, reset, cost_op, _ = optimizer.meta_minimize(problem, FLAGS.unroll_length)
    with ms.MonitoredSession() as sess:
        tf.get_default_graph().finalize()
        for e in xrange(FLAGS.num_epochs):
            util.run_epoch(sess, cost_op, [update, step], reset, num_unrolls)
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        sess.run(step)
    evaluator = tf.train.MonitoredSession(None, hooks)
    evaluator.run(cost_op)
"""


def test_a_monitored_session_without_creator_gets_a_chief_creator_with_the_config():
    """``MonitoredSession()`` makes ``ChiefSessionCreator()`` when given none (or None): passing
    ``ChiefSessionCreator(config=<NPU config>)`` changes nothing but the config. It was only
    reported, and the learning-to-learn training loop stayed without NpuOptimizer."""
    before = MONITORED_WITHOUT_CREATOR.replace("ms.MonitoredSession", "tf.train.MonitoredSession")
    creator = "tf.train.ChiefSessionCreator(config=config)"
    after = HEADER + before.replace(
        "    with tf.train.MonitoredSession() as sess:",
        "    config = tf.ConfigProto()\n" + npu_lines("config", "    ")
        + f"    with tf.train.MonitoredSession(session_creator={creator}) as sess:").replace(
        "(hooks=hooks)", f"(hooks=hooks, session_creator={creator})").replace(
        "(None, hooks)", f"({creator}, hooks)")
    findings = assert_migrates(before, after, RULES)
    assert sites(findings) == [("NPU001", 1, 0, "migrated")] + [
        ("NPU007", line, column, "migrated") for line, column in
        [(6, 9), (6, 9), (10, 9), (10, 9), (12, 16), (12, 16)]]
    messages = sorted(f.message[:39] for f in findings if f.line == 6)
    assert messages == ["created 'config' with the NPU optimizer",
                        "passed session_creator=tf.train.ChiefSe"]
    assert any(f.message.startswith("passed 'config' with") for f in findings if f.line == 10)


def test_a_monitored_session_under_the_distribute_coordinator_is_reported():
    """Run by the distribute coordinator, a MonitoredSession without a creator takes the worker
    context's: a ChiefSessionCreator passed in would replace it."""
    source = """\
import tensorflow as tf
from tensorflow.python.distribute import distribute_coordinator


def worker_fn(strategy):
    with tf.train.MonitoredSession() as sess:
        sess.run(train_op)


distribute_coordinator.run_distribute_coordinator(worker_fn, strategy)
"""
    (finding,) = assert_unchanged(source, RULES)
    assert sites([finding]) == [("NPU007", 6, 9, "unmigrated")]
    assert finding.message.startswith("the file uses the distribute coordinator")



def test_non_tensorflow_sessions_are_ignored():
    source = """\
import tensorflow as tf
import requests

http = requests.Session()
"""
    assert assert_unchanged(source, RULES) == []


def test_config_made_before_a_loop_is_configured_before_the_loop_not_on_every_pass():
    before = """\
import tensorflow as tf
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
for lr in (0.1, 0.01):
    with tf.Session(config=config) as sess:
        sess.run(lr)
"""
    after = HEADER + """\
import tensorflow as tf
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
""" + npu_lines("config") + """\
for lr in (0.1, 0.01):
    with tf.Session(config=config) as sess:
        sess.run(lr)
"""
    check(before, after, [("NPU007", 5, 9, "migrated")])


def test_loop_variable_config_is_configured_inside_the_loop():
    before = """\
import tensorflow as tf
for cfg in configs:
    with tf.Session(config=cfg) as sess:
        sess.run(1)
"""
    after = HEADER + """\
import tensorflow as tf
for cfg in configs:
""" + npu_lines("cfg", "    ") + """\
    with tf.Session(config=cfg) as sess:
        sess.run(1)
"""
    check(before, after, [("NPU007", 3, 9, "migrated")])


def test_a_loop_that_only_reads_the_config_gets_the_lines_before_it():
    """Logging or passing the config cannot rebind it: inside the loop the lines would add
    an NpuOptimizer to the same object on every pass."""
    before = """\
import tensorflow as tf
config = tf.ConfigProto()
for lr in (0.1, 0.01):
    logging.info("config: %s", config)
    with tf.Session(config=config) as sess:
        sess.run(lr)
"""
    after = HEADER + """\
import tensorflow as tf
config = tf.ConfigProto()
""" + npu_lines("config") + """\
for lr in (0.1, 0.01):
    logging.info("config: %s", config)
    with tf.Session(config=config) as sess:
        sess.run(lr)
"""
    check(before, after, [("NPU007", 5, 9, "migrated")])


def test_a_loop_that_binds_the_config_with_a_walrus_keeps_the_lines_inside():
    before = """\
import tensorflow as tf
while (config := next_config()) is not None:
    with tf.Session(config=config) as sess:
        sess.run(1)
"""
    after = HEADER + """\
import tensorflow as tf
while (config := next_config()) is not None:
""" + npu_lines("config", "    ") + """\
    with tf.Session(config=config) as sess:
        sess.run(1)
"""
    check(before, after, [("NPU007", 3, 9, "migrated")])


def test_module_config_shared_by_functions_is_configured_once_after_its_creation():
    functions = """\


def train():
    with tf.Session(config=config) as sess:
        sess.run(1)


def evaluate():
    with tf.Session(config=config) as sess:
        sess.run(2)
"""
    created = "import tensorflow as tf\nconfig = tf.ConfigProto()\n"
    after = HEADER + created + npu_lines("config") + functions
    check(created + functions, after, [("NPU007", 6, 9, "migrated"), ("NPU007", 11, 9, "migrated")])


def test_session_imported_from_compat_v1_gets_a_compat_v1_config():
    before = """\
import tensorflow as tf
from tensorflow.compat.v1 import Session
with Session() as sess:
    sess.run(1)
"""
    after = HEADER + """\
import tensorflow as tf
from tensorflow.compat.v1 import Session
config = tf.compat.v1.ConfigProto()
""" + npu_lines("config") + """\
with Session(config=config) as sess:
    sess.run(1)
"""
    check(before, after, [("NPU007", 3, 5, "migrated")])


def check_rerun_is_a_no_op(before: str, after: str) -> None:
    """The second run (on ``after``) changes no byte and reports the first run's (rule, status)s."""
    _, findings = run_rules(before, RULES)
    again, second = run_rules(after, RULES)
    assert again is None
    assert Counter((f.rule_id, f.status) for f in second) == Counter((f.rule_id, f.status) for f in findings)


def test_custom_op_of_the_user_at_module_level_is_not_rebound():
    before = """\
import tensorflow as tf

custom_op = tf.load_op_library("./zero_out.so")
sess = tf.Session()
print(sess.run(custom_op.zero_out([5, 4, 3])))
"""
    after = HEADER + """\
import tensorflow as tf

custom_op = tf.load_op_library("./zero_out.so")
config = tf.ConfigProto()
""" + npu_lines("config", custom_op="npu_custom_op") + """\
sess = tf.Session(config=config)
print(sess.run(custom_op.zero_out([5, 4, 3])))
"""
    check(before, after, [("NPU007", 4, 7, "migrated")])
    check_rerun_is_a_no_op(before, after)


def test_custom_op_parameter_is_not_rebound_and_other_functions_keep_custom_op():
    before = """\
import tensorflow as tf


def train(custom_op, steps):
    with tf.Session() as sess:
        sess.run(custom_op.zero_out([1]))


def evaluate():
    with tf.Session() as sess:
        sess.run(1)
"""
    after = HEADER + """\
import tensorflow as tf


def train(custom_op, steps):
    config = tf.ConfigProto()
""" + npu_lines("config", "    ", custom_op="npu_custom_op") + """\
    with tf.Session(config=config) as sess:
        sess.run(custom_op.zero_out([1]))


def evaluate():
    config = tf.ConfigProto()
""" + npu_lines("config", "    ") + """\
    with tf.Session(config=config) as sess:
        sess.run(1)
"""
    check(before, after, [("NPU007", 5, 9, "migrated"), ("NPU007", 10, 9, "migrated")])
    check_rerun_is_a_no_op(before, after)


def test_imported_custom_op_and_npu_custom_op_taken_give_npu_custom_op_1_for_every_config():
    before = """\
import tensorflow as tf
from my_ops import custom_op

npu_custom_op = custom_op.load()
cfg = tf.ConfigProto()
train_sess = tf.Session(config=cfg)
eval_sess = tf.Session()
"""
    after = HEADER + """\
import tensorflow as tf
from my_ops import custom_op

npu_custom_op = custom_op.load()
cfg = tf.ConfigProto()
""" + npu_lines("cfg", custom_op="npu_custom_op_1") + """\
train_sess = tf.Session(config=cfg)
config = tf.ConfigProto()
""" + npu_lines("config", custom_op="npu_custom_op_1") + """\
eval_sess = tf.Session(config=config)
"""
    check(before, after, [("NPU007", 6, 13, "migrated"), ("NPU007", 7, 12, "migrated")])
    check_rerun_is_a_no_op(before, after)


def test_custom_op_of_the_guide_lines_already_in_the_scope_is_reused():
    migrated = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

config = tf.ConfigProto()
""" + npu_lines("config") + """\
sess = tf.Session(config=config)
"""
    before = migrated + "eval_sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))\n"
    after = "from npu_bridge.npu_init import *\n" + migrated + """\
npu_config = tf.ConfigProto(log_device_placement=True)
""" + npu_lines("npu_config") + """\
eval_sess = tf.Session(config=npu_config)
"""
    check(before, after, [("NPU007", 9, 7, "migrated"), ("NPU007", 10, 12, "migrated")])
    check_rerun_is_a_no_op(before, after)


def test_in_a_same_file_config_function_only_a_clash_inside_it_counts():
    before = """\
import tensorflow as tf
from my_ops import custom_op


def make_config():
    return tf.ConfigProto()


def eval_config(custom_op):
    cfg = tf.ConfigProto(device_count={"GPU": custom_op.gpus})
    return cfg


sess = tf.Session(config=make_config())
eval_sess = tf.Session(config=eval_config(custom_op))
"""
    after = HEADER + """\
import tensorflow as tf
from my_ops import custom_op


def make_config():
    config = tf.ConfigProto()
""" + npu_lines("config", "    ") + """\
    return config


def eval_config(custom_op):
    cfg = tf.ConfigProto(device_count={"GPU": custom_op.gpus})
""" + npu_lines("cfg", "    ", custom_op="npu_custom_op") + """\
    return cfg


sess = tf.Session(config=make_config())
eval_sess = tf.Session(config=eval_config(custom_op))
"""
    check(before, after, [("NPU007", 14, 7, "migrated"), ("NPU007", 15, 12, "migrated")])
    check_rerun_is_a_no_op(before, after)


# TF-Slim's training and evaluation loops make their session themselves (through a Supervisor)
# from ``session_config=``: that config must carry the NPU lines like a Session's ``config=``.

SLIM_NAMED_CONFIG = """\
import tensorflow as tf

slim = tf.contrib.slim


def main(train_op):
    config = tf.ConfigProto(log_device_placement=False)
    config.gpu_options.allow_growth = True
    slim.learning.train(train_op, '/tmp/logdir', number_of_steps=10,
                        session_config=config)
"""


def test_slim_train_session_config_gets_the_npu_lines():
    after = HEADER + """\
import tensorflow as tf

slim = tf.contrib.slim


def main(train_op):
    config = tf.ConfigProto(log_device_placement=False)
    config.gpu_options.allow_growth = True
""" + npu_lines("config", "    ") + """\
    slim.learning.train(train_op, '/tmp/logdir', number_of_steps=10,
                        session_config=config)
"""
    check(SLIM_NAMED_CONFIG, after, [("NPU007", 9, 4, "migrated")])


def test_slim_train_bound_by_name_is_a_site_and_an_estimators_train_is_not():
    """``train`` is a site name only as ``x.train`` of a name the file binds, or a name bound
    to slim's (the unit layout's ``@train``): in a long file, the unit calling the Estimator's
    ``train`` is not parsed for it, and the selective and full engines agree."""
    filler = "".join(f"\n\ndef helper_{index}(x):\n    return x + {index}\n" for index in range(40))
    before = """\
import tensorflow as tf
from tensorflow.contrib.slim.learning import train


def main(train_op, estimator, input_fn):
    config = tf.ConfigProto()
    train(train_op, '/tmp/logdir', session_config=config)
    estimator.train(input_fn, max_steps=10)
""" + filler
    after = HEADER + before.replace(
        "    config = tf.ConfigProto()\n", "    config = tf.ConfigProto()\n" + npu_lines("config", "    "))
    check(before, after, [("NPU007", 7, 4, "migrated")])


def test_slim_evaluation_loops_without_session_config_get_one():
    before = """\
import tensorflow as tf
from tensorflow.contrib import slim


def evaluate(names_to_updates, checkpoint, logdir):
    slim.evaluation.evaluate_once('', checkpoint, logdir, eval_op=names_to_updates)
    tf.contrib.slim.evaluation.evaluation_loop('', checkpoint, logdir, eval_op=names_to_updates)
"""
    after = HEADER + """\
import tensorflow as tf
from tensorflow.contrib import slim


def evaluate(names_to_updates, checkpoint, logdir):
    config = tf.ConfigProto()
""" + npu_lines("config", "    ") + """\
    slim.evaluation.evaluate_once('', checkpoint, logdir, eval_op=names_to_updates, session_config=config)
    tf.contrib.slim.evaluation.evaluation_loop('', checkpoint, logdir, eval_op=names_to_updates, session_config=config)
"""
    check(before, after, [("NPU007", 6, 4, "migrated"), ("NPU007", 7, 4, "migrated")])


def test_slim_session_config_expression_is_moved_into_a_variable():
    before = """\
import tensorflow as tf
import tensorflow.contrib.slim as slim

slim.learning.train(train_op, logdir, session_config=tf.ConfigProto(log_device_placement=True))
"""
    after = HEADER + """\
import tensorflow as tf
import tensorflow.contrib.slim as slim

config = tf.ConfigProto(log_device_placement=True)
""" + npu_lines("config") + """\
slim.learning.train(train_op, logdir, session_config=config)
"""
    check(before, after, [("NPU007", 4, 0, "migrated")])


def test_a_train_method_that_is_not_slims_is_left_alone():
    source = """\
import tensorflow as tf

estimator = tf.estimator.Estimator(model_fn)
estimator.train(input_fn, steps=10)
"""
    _, findings = run_rules(source, RULES)
    assert [f for f in findings if f.rule_id == "NPU007"] == []


# Review round 26: prettytensor's Runner.session() makes its session with a SessionManager
# (``SESSION_MANAGER_FACTORY = tf.train.SessionManager``), which no rule saw: the session ran
# without the NPU optimizer and no finding said so.
SESSION_MANAGER = """\
import contextlib

import tensorflow as tf

SESSION_MANAGER_FACTORY = tf.train.SessionManager


class Runner(object):

  @contextlib.contextmanager
  def session(self, master='', config=None):
    session_manager = SESSION_MANAGER_FACTORY()
    with session_manager.prepare_session(master, None, config=config,
                                         init_fn=lambda _: None) as sess:
      yield sess


def wait_for_chief(master, config):
  manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
  sess = manager.wait_for_session(master, config, max_wait_secs=600)
  restored = manager.recover_session(master, checkpoint_dir="/tmp/ckpt")
  return sess, restored
"""


def test_session_manager_sessions_get_the_npu_config():
    after = HEADER.replace("\n", "\nimport copy\n", 1) + SESSION_MANAGER.replace(
        "    with session_manager", "    npu_config = copy.deepcopy(config) if config is not None "
        "else tf.ConfigProto()\n" + npu_lines("npu_config", "    ") + "    with session_manager").replace(
        "config=config,", "config=npu_config,").replace(
        "  sess = manager.wait_for_session(master, config,",
        "  npu_config = copy.deepcopy(config)\n" + npu_lines("npu_config", "  ") + "  sess = manager.wait_for_session(master, npu_config,").replace(
        "  restored = manager.recover_session(master, checkpoint_dir=\"/tmp/ckpt\")",
        "  npu_config_1 = tf.ConfigProto()\n" + npu_lines("npu_config_1", "  ")
        + "  restored = manager.recover_session(master, checkpoint_dir=\"/tmp/ckpt\", config=npu_config_1)")
    check(SESSION_MANAGER, after, [("NPU007", 13, 9, "migrated"), ("NPU007", 20, 9, "migrated"),
                                   ("NPU007", 21, 13, "migrated")])


def test_a_prepare_session_method_of_a_file_without_session_manager_is_no_session():
    source = SESSION_MANAGER.replace("SESSION_MANAGER_FACTORY = tf.train.SessionManager", "from x import F") \
        .replace("SESSION_MANAGER_FACTORY()", "F()").replace("tf.train.SessionManager(", "Manager(")
    assert_unchanged(source, RULES)
