"""NPU007 on every path: a config counts as configured only when the object that reaches the
session got the NPU lines after its last binding, whichever branch ran (issue 13, defect 9)."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.rules.sess_run.npu008_soft_placement import FACT

from support.rules import assert_migrates, assert_unchanged, messages, run_rules, sites
from support.session_config import HEADER, RULES, check, npu_lines

IMPORTS = """\
import os

import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

FLAGS = tf.app.flags.FLAGS
"""


BRANCHES = IMPORTS + '''

def make_session(graph, on_npu):
    """One session for training; a plain one for debugging on the host."""
    if on_npu:
        config = tf.ConfigProto(allow_soft_placement=True)
''' + npu_lines("config", " " * 8) + '''\
    else:
        config = tf.ConfigProto(log_device_placement=True)
        config.gpu_options.allow_growth = True
    return tf.Session(graph=graph, config=config)


def train(graph, steps):
    sess = make_session(graph, FLAGS.on_npu)
    for _ in range(steps):
        sess.run("train_op")
    return sess
'''


ELSE_LINES = BRANCHES.replace(
    "        config = tf.ConfigProto(log_device_placement=True)\n",
    "        config = tf.ConfigProto(log_device_placement=True)\n" + npu_lines("config", " " * 8))


def test_config_made_in_the_else_branch_gets_the_lines_there_not_twice_in_the_if_branch():
    after = "from npu_bridge.npu_init import *\n" + ELSE_LINES
    findings = assert_migrates(BRANCHES, after, RULES)
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU007", 20, 11, "migrated")]
    assert messages(findings, "NPU007") == [
        "added the lines that give config the NPU optimizer config (NpuOptimizer on; remapping, "
        "memory_optimization off) (after line 18: that config had none on its way here)"]
    assert after.count("custom_optimizers.add()") == 2  # one per object, one on each path
    _, second = run_rules(after, RULES)
    assert messages(second, "NPU007") == ["config already has the NPU optimizer config (NpuOptimizer on; "
                                "remapping, memory_optimization off)"]


def test_soft_placement_set_in_one_branch_only_is_set_for_the_session():
    after = "from npu_bridge.npu_init import *\n" + ELSE_LINES.replace(
        "    return tf.Session(graph=graph, config=config)",
        "    config.allow_soft_placement = True\n    return tf.Session(graph=graph, config=config)")
    findings = assert_migrates(BRANCHES, after, RULES | {"NPU008"}, {FACT})
    assert [s for s in sites(findings) if s[0] != "NPU001"] == [
        ("NPU007", 20, 11, "migrated"), ("NPU008", 20, 11, "migrated")]  # one site: the session


REBOUND = IMPORTS + '''
config = tf.ConfigProto()
''' + npu_lines("config") + '''\
train_sess = tf.Session(config=config)

# evaluation runs on the host with placement logs
config = tf.ConfigProto(log_device_placement=True)
eval_sess = tf.Session(config=config)
'''


def test_an_earlier_object_bound_to_the_same_name_does_not_configure_the_new_one():
    after = "from npu_bridge.npu_init import *\n" + REBOUND.replace(
        "eval_sess = ", npu_lines("config") + "eval_sess = ")
    findings = assert_migrates(REBOUND, after, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [
        ("NPU007", 13, 13, "migrated"), ("NPU007", 17, 12, "migrated")]
    assert messages(findings, "NPU007")[0].startswith("config already has")
    assert messages(findings, "NPU007")[1].startswith("added the lines that give config")


PARTIAL = IMPORTS + '''

def run(graph, steps):
    config = tf.ConfigProto()
    if FLAGS.use_npu:
''' + npu_lines("config", " " * 8) + '''\
        sess = tf.Session(graph=graph, config=config)
        sess.run("warmup")
    sess = tf.Session(graph=graph, config=config)
    for _ in range(steps):
        sess.run("train_op")
'''


def test_lines_only_in_an_if_without_else_are_reported_with_the_snippet_not_added_twice():
    findings = assert_unchanged(PARTIAL, RULES)
    assert sites(findings) == [("NPU007", 16, 15, "migrated"), ("NPU007", 18, 11, "unmigrated")]
    message = messages(findings, "NPU007")[1]
    assert message.startswith("'config' has the NpuOptimizer lines on some paths to this session "
                              "only: the config bound at line 10 reaches it without them, and "
                              "adding them there would add a second NpuOptimizer on another path")
    assert 'custom_op.name = "NpuOptimizer"' in message


EVERY_PATH = IMPORTS + '''

def session_for(mode):
    if mode == "train":
        config = tf.ConfigProto(inter_op_parallelism_threads=8)
''' + npu_lines("config", " " * 8) + '''\
    elif mode == "eval":
        config = tf.ConfigProto()
''' + npu_lines("config", " " * 8) + '''\
    else:
        raise ValueError("unknown mode %s" % mode)
    return tf.Session(config=config)
'''


def test_configured_on_every_path_that_reaches_the_session_is_left_alone():
    findings = assert_unchanged(EVERY_PATH, RULES)
    assert sites(findings) == [("NPU007", 24, 11, "migrated")]
    assert messages(findings, "NPU007")[0].startswith("config already has")


RETRY = IMPORTS + '''

def open_session(target):
    try:
        config = tf.ConfigProto(device_count={"GPU": 1})
''' + npu_lines("config", " " * 8) + '''\
        sess = tf.Session(target, config=config)
    except tf.errors.UnavailableError:
        config = tf.ConfigProto(device_count={"GPU": 0})
        sess = tf.Session(target, config=config)
    return tf.Session(target, config=config)
'''


def test_a_fallback_config_of_an_except_handler_gets_its_own_lines():
    after = "from npu_bridge.npu_init import *\n" + RETRY.replace(
        '        config = tf.ConfigProto(device_count={"GPU": 0})\n',
        '        config = tf.ConfigProto(device_count={"GPU": 0})\n' + npu_lines("config", " " * 8))
    findings = assert_migrates(RETRY, after, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [
        ("NPU007", 16, 15, "migrated"), ("NPU007", 19, 15, "migrated"), ("NPU007", 20, 11, "migrated")]


EACH_PASS = IMPORTS + '''
config = tf.ConfigProto()
for lr in (0.1, 0.01):
''' + npu_lines("config", "    ") + '''\
    with tf.Session(config=config) as sess:
        sess.run("train_op", {"lr:0": lr})
'''


def test_lines_that_run_on_every_pass_of_a_loop_are_a_second_npu_optimizer():
    findings = assert_unchanged(EACH_PASS, RULES)
    assert sites(findings) == [("NPU007", 14, 9, "unmigrated")]
    assert messages(findings, "NPU007")[0].startswith("'config' gets a second NpuOptimizer at line 10")


PARAMETER = IMPORTS + '''

def evaluate(checkpoint, config=None):
    if config is None:
        config = tf.ConfigProto()
''' + npu_lines("config", " " * 8) + '''\
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
'''


def test_a_config_parameter_configured_only_when_none_is_reported():
    findings = assert_unchanged(PARAMETER, RULES)
    assert sites(findings) == [("NPU007", 16, 9, "unmigrated")]
    assert "the parameter 'config' reaches it without them" in messages(findings, "NPU007")[0]


def test_a_config_with_the_lines_on_no_path_gets_them_once_before_the_session():
    before = """\
import tensorflow as tf


def main(argv):
    if argv[1:]:
        config = tf.ConfigProto()
        config.gpu_options.allow_growth = True
    else:
        config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run("init")
"""
    after = HEADER + before.replace("    with tf.Session", npu_lines("config", "    ") + "    with tf.Session")
    check(before, after, [("NPU007", 10, 9, "migrated")])


def _copied(name: str, parameter: str, indent: str, copied: str = "") -> str:
    """A copy of the parameter ``parameter`` given the guide's lines (:func:`_configure_copy`)."""
    return f"{indent}{name} = {copied or f'copy.deepcopy({parameter})'}\n" + npu_lines(name, indent)


#: A session helper that the script calls twice with one config: training, then evaluation.
TWICE = '''\
import tensorflow as tf


def create_session(config, checkpoint=None):
    """A session with the caller's config, restored from ``checkpoint`` when given."""
    sess = tf.Session(config=config)
    if checkpoint:
        tf.train.Saver().restore(sess, checkpoint)
    return sess


def main(argv):
    config = tf.ConfigProto(log_device_placement=True)
    config.gpu_options.allow_growth = True
    train_sess = create_session(config)
    train_sess.run("train_op")
    eval_sess = create_session(config, checkpoint=argv[1])
    print(eval_sess.run("accuracy:0"))
'''


def _with_copy(before: str, module: str = "copy") -> str:
    """``before`` (``TWICE`` or a variant) as NPU007 writes it: ``create_session``'s session
    takes a configured copy of its parameter, made with the ``copy`` module imported as
    ``module``."""
    imported = "import copy" if module == "copy" else f"import copy as {module}"
    return HEADER.replace("import *\n", f"import *\n{imported}\n") + before.replace(
        "    sess = tf.Session(config=config)\n",
        _copied("npu_config", "config", "    ", f"{module}.deepcopy(config)")
        + "    sess = tf.Session(config=npu_config)\n")


def test_a_config_parameter_is_copied_not_changed_for_the_caller():
    """The lines for the parameter changed the caller's object, once per call: ``main``'s
    config got a second NpuOptimizer entry from the second call (the spec: "a config object
    gets the NpuOptimizer exactly once, whatever path it takes"), and every other use of it
    the NPU lines. Each call configures a copy instead, which its session takes."""
    findings = assert_migrates(TWICE, _with_copy(TWICE), RULES)
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU007", 6, 11, "migrated")]
    assert messages(findings, "NPU007") == [
        "added the lines that give a copy of the parameter 'config' ('npu_config': the caller's object "
        "stays as it was) the NPU optimizer config (NpuOptimizer on; remapping, memory_optimization off)"]


#: A session per checkpoint, the caller's config adjusted in the loop before each.
PER_CHECKPOINT = '''\
import tensorflow as tf


def evaluate_all(config, checkpoints, eval_op):
    for checkpoint in checkpoints:
        config.gpu_options.per_process_gpu_memory_fraction = checkpoint.memory
        with tf.Session(config=config) as sess:
            tf.train.Saver().restore(sess, checkpoint.path)
            sess.run(eval_op)
'''


def test_a_parameter_used_in_a_loop_is_copied_on_each_pass_after_the_settings_of_the_pass():
    """A copy made once before the loop would miss the memory fraction the loop sets before
    each session; the copy made right before the session has it, and each pass configures
    its own copy once (NPU008 sets soft placement on the copy)."""
    after = HEADER.replace("import *\n", "import *\nimport copy\n") + PER_CHECKPOINT.replace(
        "        with tf.Session(config=config) as sess:\n",
        _copied("npu_config", "config", " " * 8) + "        npu_config.allow_soft_placement = True\n"
        "        with tf.Session(config=npu_config) as sess:\n")
    findings = assert_migrates(PER_CHECKPOINT, after, RULES | {"NPU008"}, {FACT})
    assert [site for site in sites(findings) if site[0] != "NPU001"] == [
        ("NPU007", 7, 13, "migrated"), ("NPU008", 7, 13, "migrated")]
    assert messages(findings, "NPU008") == [
        "set allow_soft_placement=True on 'npu_config': tf.device is used in this repository"]


def test_the_copy_spells_the_copy_module_under_a_free_name_where_copy_is_taken():
    """``copy`` is the function's list here, and ``from copy import copy`` the module's name
    elsewhere: ``copy.deepcopy`` would call an attribute of either. The module comes in as
    ``npu_copy``, once for the file."""
    before = TWICE.replace("import tensorflow as tf\n", "from copy import copy\n\nimport tensorflow as tf\n").replace(
        "    sess = tf.Session(config=config)\n",
        "    copy = list(checkpoint or [])\n    sess = tf.Session(config=config)\n")
    assert_migrates(before, _with_copy(before, "npu_copy"), RULES)


def test_a_copy_import_in_another_function_is_not_the_modules():
    """``import copy`` in ``clone`` binds the name there only: ``copy.deepcopy`` in
    ``create_session`` raised NameError. The module's own import is asked for."""
    before = TWICE.replace("\n\ndef main(argv):", "\n\ndef clone(value):\n    import copy\n"
                           "    return copy.deepcopy(value)\n\n\ndef main(argv):")
    assert_migrates(before, _with_copy(before, "npu_copy"), RULES)


def test_soft_placement_the_parameter_has_is_the_copys_too():
    """The caller's helper sets soft placement on the parameter before the session: the copy
    made after it has it. A line for the copy said it again, and the setting's finding left
    the session's line for its own (where the first run without a copy had it)."""
    before = TWICE.replace("    sess = tf.Session(config=config)\n",
                           "    config.allow_soft_placement = True\n    sess = tf.Session(config=config)\n")
    findings = assert_migrates(before, _with_copy(before), RULES | {"NPU008"}, {FACT})
    assert [site for site in sites(findings) if site[0] == "NPU008"] == [("NPU008", 7, 11, "migrated")]
    assert messages(findings, "NPU008") == [
        "allow_soft_placement=True is set (tf.device is used in this repository)"]


CREATORS = IMPORTS + '''

def train(config, server, is_chief):
    """Between-graph replication: the chief initializes, the workers wait for it."""
    if is_chief:
        creator = tf.train.ChiefSessionCreator(master=server.target, config=config)
    else:
        creator = tf.train.WorkerSessionCreator(master=server.target, config=config)
    with tf.train.MonitoredSession(session_creator=creator) as sess:
        while not sess.should_stop():
            sess.run("train_op")
'''


def test_a_config_given_to_a_creator_in_each_branch_gets_its_lines_before_each_creator():
    """The lines go before the statement that passes ``config=`` (the spec), once per path: only
    one branch runs. One insertion after the branches would rely on each creator reading the
    config only when the session is made; before ``tf.Session(config=...)`` calls in branches
    it would come too late. The parameter is the caller's object: each creator takes a copy."""
    after = "from npu_bridge.npu_init import *\nimport copy\n" + CREATORS.replace(
        "        creator = tf.train.ChiefSessionCreator(master=server.target, config=config)",
        _copied("npu_config", "config", " " * 8)
        + "        creator = tf.train.ChiefSessionCreator(master=server.target, config=npu_config)").replace(
        "        creator = tf.train.WorkerSessionCreator(master=server.target, config=config)",
        _copied("npu_config_1", "config", " " * 8)
        + "        creator = tf.train.WorkerSessionCreator(master=server.target, config=npu_config_1)")
    findings = assert_migrates(CREATORS, after, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [
        ("NPU007", 12, 18, "migrated"), ("NPU007", 14, 18, "migrated"),
        ("NPU007", 15, 9, "migrated")]


POSE = IMPORTS + '''

class PoseEstimator:
    """Loads a frozen graph; callers may leave the session config out."""

    def __init__(self, graph_path, target_size=(432, 368), tf_config=None):
        self.target_size = target_size
        self.graph = tf.get_default_graph()
        self.persistent_sess = tf.Session(graph=self.graph, config=tf_config)


def evaluate(checkpoint, config):
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
'''


def _guarded(name: str, indent: str) -> str:
    return f"{indent}if {name} is None:\n{indent}    {name} = tf.ConfigProto()\n"


def test_a_config_parameter_that_defaults_to_none_is_made_before_its_lines():
    """``PoseEstimator(path)`` passes None: lines for the object alone would raise there; the
    session takes a new config then, else a copy of the caller's."""
    after = "from npu_bridge.npu_init import *\nimport copy\n" + POSE.replace(
        "        self.persistent_sess = tf.Session(graph=self.graph, config=tf_config)",
        _copied("npu_tf_config", "tf_config", " " * 8,
                "copy.deepcopy(tf_config) if tf_config is not None else tf.ConfigProto()")
        + "        self.persistent_sess = tf.Session(graph=self.graph, config=npu_tf_config)").replace(
        "    with tf.Session(config=config)", _copied("npu_config", "config", "    ")
        + "    with tf.Session(config=npu_config)")
    check(POSE, after, [("NPU007", 15, 31, "migrated"), ("NPU007", 19, 9, "migrated")])


def test_soft_placement_goes_on_the_copy_of_a_parameter():
    new, findings = run_rules(POSE, RULES | {"NPU008"}, {FACT})
    assert new is not None
    assert_migrates(POSE, new, RULES | {"NPU008"}, {FACT})  # compiles; a second run changes nothing
    copied = new.index("        npu_tf_config = copy.deepcopy(tf_config) if tf_config is not None")
    assert copied < new.index("        npu_tf_config.allow_soft_placement = True") < new.index("self.persistent_sess")
    assert "tf_config.allow" not in new.replace("npu_tf_config.allow", "")
    assert ("NPU008", 15, 31, "migrated") in sites(findings)


MADE_WHEN_NONE = IMPORTS + '''

def evaluate(checkpoint, config=None):
    if config is None:
        config = tf.ConfigProto(allow_soft_placement=True)
        tf.logging.info("no session config given: a default one")
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
'''


@pytest.mark.parametrize("test", ["config is None", "not config"])
def test_a_parameter_the_function_makes_when_none_gets_no_second_guard(test: str):
    """``if config is None: config = tf.ConfigProto(...)`` already makes the object: a second
    ``if config is None:`` guard before the lines (the one for a parameter that reaches the
    session as passed) repeated it for nothing. The copy the session takes needs none either."""
    before = MADE_WHEN_NONE.replace("if config is None:", f"if {test}:")
    after = "from npu_bridge.npu_init import *\nimport copy\n" + before.replace(
        "    with tf.Session(config=config)",
        _copied("npu_config", "config", "    ") + "    with tf.Session(config=npu_config)")
    check(before, after, [("NPU007", 13, 9, "migrated")])


#: A compat.v1 evaluation module of a repository pinned to TF 2.x, which imports the TF 2.x
#: namespace (``import tensorflow as tf``): TF 2.x has no ``tf.ConfigProto``.
COMPAT_EVALUATION = '''\
import tensorflow as tf


def evaluate_once(checkpoint, eval_ops, config=None):
    creator = tf.compat.v1.train.ChiefSessionCreator(checkpoint_filename_with_path=checkpoint, config=config)
    with tf.compat.v1.train.MonitoredSession(session_creator=creator) as session:
        return session.run(eval_ops)


def train(train_op, logdir):
    sv = tf.compat.v1.train.Supervisor(logdir=logdir)
    with sv.managed_session() as sess:
        sess.run(train_op)


def run_plain(fetches):
    with tf.compat.v1.Session() as sess:
        return sess.run(fetches)
'''
COMPAT_HEADER = ("import npu_device\nfrom npu_device.compat.v1.npu_init import *\nnpu_device.compat.enable_v1()\n"
                 "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n")


def test_a_tf2_compat_file_spells_every_config_it_writes_through_compat_v1():
    """The config made when the parameter is None and the one made for a Supervisor's session
    are spelled as the config made for ``tf.compat.v1.Session()``: ``tf.ConfigProto()`` raised
    AttributeError on TF 2.x whenever no config was passed (tensorflow/gan's evaluation_helper)."""
    created = "    config = tf.compat.v1.ConfigProto()\n" + npu_lines("config", "    ")
    after = COMPAT_HEADER.replace(
        "npu_device.compat.enable_v1()\n", "npu_device.compat.enable_v1()\nimport copy\n") + COMPAT_EVALUATION.replace(
        "    creator =", _copied("npu_config", "config", "    ",
                             "copy.deepcopy(config) if config is not None else tf.compat.v1.ConfigProto()")
        + "    creator =").replace("checkpoint, config=config)", "checkpoint, config=npu_config)").replace(
        "    with sv.managed_session() as", created + "    with sv.managed_session(config=config) as").replace(
        "    with tf.compat.v1.Session() as", created + "    with tf.compat.v1.Session(config=config) as")
    findings = assert_migrates(COMPAT_EVALUATION, after, {"NPU062", "NPU007"}, {"tf-runtime:2"})
    assert sites(findings) == [("NPU007", 5, 14, "migrated"), ("NPU007", 6, 9, "migrated"),
                               ("NPU007", 12, 9, "migrated"), ("NPU007", 17, 9, "migrated"),
                               ("NPU062", 1, 0, "migrated")]
    assert "tf.ConfigProto" not in after


#: A between-graph cluster script that also runs alone: the local run passes no config (rvl L4).
CLUSTER_OR_LOCAL = '''\
import tensorflow as tf


def run(cluster_spec, step):
    if cluster_spec:
        server = tf.train.Server(tf.train.ClusterSpec(cluster_spec), job_name="worker")
        target = server.target
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    else:
        target = ""
        config = None
    with tf.train.MonitoredTrainingSession(master=target, config=config) as sess:
        sess.run(step)
'''


def test_a_local_bound_to_none_in_one_branch_is_made_before_its_lines():
    """``config.graph_options...`` after the branches raised AttributeError in the local run."""
    after = HEADER + CLUSTER_OR_LOCAL.replace(
        "    with tf.train.MonitoredTrainingSession",
        _guarded("config", "    ") + npu_lines("config", "    ") + "    with tf.train.MonitoredTrainingSession")
    check(CLUSTER_OR_LOCAL, after, [("NPU007", 12, 9, "migrated")])


def test_soft_placement_on_a_local_that_may_be_none_goes_after_the_guard():
    new, findings = run_rules(CLUSTER_OR_LOCAL, RULES | {"NPU008"}, {FACT})
    assert new is not None
    assert_migrates(CLUSTER_OR_LOCAL, new, RULES | {"NPU008"}, {FACT})
    assert new.index("    if config is None:") < new.index("    config.allow_soft_placement = True")
    assert ("NPU008", 12, 9, "migrated") in sites(findings)


def test_a_config_that_is_none_unless_a_test_holds_is_made_before_its_lines():
    before = '''\
import tensorflow as tf


def train(train_op, logdir, cluster):
    config = tf.ConfigProto(device_filters=["/job:ps"]) if cluster else None
    sv = tf.train.Supervisor(logdir=logdir)
    with sv.managed_session("", config=config) as sess:
        sess.run(train_op)
'''
    after = HEADER + before.replace(
        "    with sv.managed_session", _guarded("config", "    ") + npu_lines("config", "    ")
        + "    with sv.managed_session")
    check(before, after, [("NPU007", 7, 9, "migrated")])


CONFIGURED_OR_NONE = IMPORTS + '''

def run(cluster):
    if cluster:
        config = tf.ConfigProto(device_filters=["/job:ps"])
''' + npu_lines("config", " " * 8) + '''\
    else:
        config = None
    with tf.Session(config=config) as sess:
        sess.run("train_op")
'''


def test_a_config_configured_on_one_path_and_none_on_the_other_is_reported():
    """No line can go after ``config = None``, and before the session it would be a second
    NpuOptimizer on the other path; NPU008's line there would raise on None too."""
    findings = assert_unchanged(CONFIGURED_OR_NONE, RULES | {"NPU008"}, {FACT})
    assert sites(findings) == [("NPU007", 18, 9, "unmigrated"), ("NPU008", 18, 9, "unmigrated")]
    assert messages(findings, "NPU007")[0].startswith(
        "'config' may be None at this session (bound at line 17)")
    assert "it may be None at this session" in messages(findings, "NPU008")[0]
