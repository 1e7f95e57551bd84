"""NPU008 soft-placement: the uses-tf-device fact, and allow_soft_placement on session configs."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement
from npu_codemod.plugins.rules.sess_run._config_flow import target_flow
from npu_codemod.plugins.rules.sess_run.npu008_soft_placement import FACT, uses_tf_device

from support.rules import assert_migrates, assert_unchanged, run_rules, sites
from support.session_config import HEADER, npu_lines

RULES = {"NPU001", "NPU007", "NPU008"}
DEVICE = frozenset({FACT})


def check(before: str, after: str, expected: list) -> list:
    """With the fact: ``before`` becomes ``after``, NPU008 sites are ``expected``, rerun all migrated."""
    findings = assert_migrates(before, after, RULES, DEVICE)
    assert [s for s in sites(findings) if s[0] == "NPU008"] == expected
    _, second = run_rules(after, RULES, DEVICE)
    assert {f.status for f in second} == {"migrated"}, second
    return [f for f in findings if f.rule_id == "NPU008"]


@pytest.mark.parametrize("text, expected", [
    ("import tensorflow as tf\nwith tf.device('/cpu:0'):\n    x = 1\n", True),
    ("import tensorflow.compat.v1 as v1\nwith v1.device(dev):\n    pass\n", True),
    ("import tensorflow as tf\nwith tf.compat.v1.device('/gpu:0'):\n    pass\n", True),
    ("import tensorflow\nwith tensorflow.device('/gpu:0'):\n    pass\n", True),
    ("import tensorflow as tf\n# with tf.device('/gpu:0'):\nx = 1\n", False),
    ("import tensorflow as tf\nx = tf.constant(1).device\n", False),
    ("import torch\nx = t.to(torch.device('cuda'))\n", False),
    ("from tensorflow import device\nwith device('/gpu:0'):\n    pass\n", True),
    ("from tensorflow.compat.v1 import (Session,  # sessions\n    device as dev)\nwith dev(d):\n    pass\n", True),
    ("from tensorflow.compat.v1 import Session, device as dev\nwith dev(d):\n    pass\n", True),
    ("from tensorflow import device\nx = torch.device('cuda')\n", False),
    ("from torch import device\nwith device('cuda'):\n    pass\n", False),
])
def test_uses_tf_device(text, expected):
    assert uses_tf_device(text) is expected


def test_analyze_hook_reports_the_fact_for_the_repository():
    hook = load_plugins().pm.hook.npu_codemod_analyze_file
    model = "import tensorflow as tf\n\ndef net(x):\n    with tf.device('/gpu:0'):\n        return x\n"
    assert FACT in set().union(*hook(path="model.py", text=model))
    assert FACT not in set().union(*hook(path="train.py", text="import tensorflow as tf\n"))


def test_new_config_gets_the_keyword_exactly_like_the_guide():
    before = """\
import tensorflow as tf

init = tf.global_variables_initializer()
sess = tf.Session()
sess.run(init)
"""
    after = HEADER + """\
import tensorflow as tf

init = tf.global_variables_initializer()
config = tf.ConfigProto(allow_soft_placement=True)
""" + npu_lines("config") + """\
sess = tf.Session(config=config)
sess.run(init)
"""
    (finding,) = check(before, after, [("NPU008", 4, 7, "migrated")])
    assert "allow_soft_placement=True" in finding.message and "tf.device" in finding.message


def test_existing_object_gets_an_assignment_line():
    before = """\
import tensorflow as tf


def train():
    sess_config = tf.ConfigProto()
    sess_config.gpu_options.allow_growth = True
    with tf.Session(config=sess_config) as sess:
        sess.run(train_op)
"""
    after = HEADER + """\
import tensorflow as tf


def train():
    sess_config = tf.ConfigProto()
    sess_config.gpu_options.allow_growth = True
""" + npu_lines("sess_config", "    ") + """\
    sess_config.allow_soft_placement = True
    with tf.Session(config=sess_config) as sess:
        sess.run(train_op)
"""
    check(before, after, [("NPU008", 7, 9, "migrated")])


def test_hoisted_inline_config_gets_the_keyword():
    before = """\
import tensorflow.compat.v1 as tf

with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
    pass
"""
    after = HEADER + """\
import tensorflow.compat.v1 as tf

config = tf.ConfigProto(log_device_placement=True, allow_soft_placement=True)
""" + npu_lines("config") + """\
with tf.Session(config=config) as sess:
    pass
"""
    check(before, after, [("NPU008", 3, 5, "migrated")])


def test_explicit_false_is_flipped_in_keyword_and_assignment():
    before = """\
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=False, log_device_placement=True)
eval_config = tf.ConfigProto()
eval_config.allow_soft_placement = False
"""
    after = HEADER.splitlines(keepends=True)[0] + before.replace("= False", "= True").replace(
        "allow_soft_placement=False", "allow_soft_placement=True")
    findings = check(before, after, [("NPU008", 3, 24, "migrated"), ("NPU008", 5, 0, "migrated")])
    assert all("flipped allow_soft_placement=False to True" in f.message for f in findings)


def test_helper_function_config_gets_the_line_before_its_return():
    before = """\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig


def session_config():
    config = tf.ConfigProto()
    return config


sess = tf.Session(config=session_config())
"""
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "    return config",
        npu_lines("config", "    ") + "    config.allow_soft_placement = True\n    return config")
    check(before, after, [("NPU008", 10, 7, "migrated")])


def test_already_true_is_migrated_and_unchanged():
    source = HEADER + """\
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=True)
""" + npu_lines("config") + """\
sess = tf.Session(config=config)
"""
    findings = assert_unchanged(source, RULES, DEVICE)
    # on the session's line, where a first run that adds the keyword reports it: one site
    assert [s for s in sites(findings) if s[0] == "NPU008"] == [("NPU008", 10, 7, "migrated")]
    unsent = HEADER + "import tensorflow as tf\n\nconfig = tf.ConfigProto(allow_soft_placement=True)\n"
    assert [s for s in sites(assert_unchanged(unsent, RULES, DEVICE)) if s[0] == "NPU008"] == [
        ("NPU008", 5, 24, "migrated")]  # no session: on the keyword itself


def test_non_literal_value_is_kept_and_reported():
    source = HEADER + """\
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=FLAGS.soft_placement)
""" + npu_lines("config") + """\
sess = tf.Session(config=config)
"""
    findings = assert_unchanged(source, RULES, DEVICE)
    assert [s for s in sites(findings) if s[0] == "NPU008"] == [("NPU008", 5, 24, "unmigrated")]
    (finding,) = [f for f in findings if f.rule_id == "NPU008"]
    assert "must be True when tf.device is used" in finding.message
    assert "FLAGS.soft_placement" in finding.message


def test_without_the_fact_nothing_about_soft_placement():
    before = """\
import tensorflow as tf

config = tf.ConfigProto(allow_soft_placement=False)
sess = tf.Session(config=config)
"""
    new, findings = run_rules(before, RULES)
    assert "allow_soft_placement=False" in new and "allow_soft_placement = True" not in new
    assert not [f for f in findings if f.rule_id == "NPU008"]


def test_unrelated_allow_soft_placement_keyword_is_ignored():
    source = "import tensorflow as tf\n\nrun(allow_soft_placement=False)\n"
    assert assert_unchanged(source, RULES, DEVICE) == []


TRAINER = '''\
import tensorflow as tf


class Trainer(object):
    """Owns the session; the model is built by the caller."""

    def __init__(self, model, allow_soft_placement=True, log_device_placement=False):
        self.model = model
        self.config = tf.ConfigProto(allow_soft_placement=allow_soft_placement,
                                     log_device_placement=log_device_placement)

    def session(self):
        return tf.Session(config=self.config)


def build_config(threads, soft_placement=True):
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    config.allow_soft_placement = soft_placement
    return config
'''


def npu008(findings: list) -> list:
    return sorted((f.line, f.column, f.status) for f in findings if f.rule_id == "NPU008")


def test_a_parameter_that_defaults_to_true_and_no_call_changes_needs_no_finding():
    callers = "\ntrainer = Trainer(model)\nconfig = build_config(4)\neval_config = build_config(2, True)\n"
    _, findings = run_rules(TRAINER + callers, RULES, DEVICE)
    assert npu008(findings) == []


@pytest.mark.parametrize("call, line", [
    ("Trainer(model, allow_soft_placement=FLAGS.soft)", 9),  # a keyword, not literally True
    ("Trainer(model, False)", 9),  # positionally (after self)
    ("Trainer(model, **FLAGS.trainer_args)", 9),  # unknown keywords
    ("build_config(4, soft_placement=False)", 18),
    ("build_config(*FLAGS.config_args)", 18),
])
def test_a_call_that_may_pass_another_value_keeps_the_finding_at_the_parameter(call, line):
    _, findings = run_rules(TRAINER + f"\nhandle = {call}\n", RULES, DEVICE)
    assert [site for site in npu008(findings) if site[0] == line][0][2] == "unmigrated"
    assert len([site for site in npu008(findings) if site[2] == "unmigrated"]) == 1


def test_calls_in_other_files_are_known_from_the_repository_facts():
    hook = load_plugins().pm.hook.npu_codemod_analyze_file
    caller = "import tensorflow as tf\nfrom trainer import Trainer\n\nt = Trainer(net, allow_soft_placement=False)\n"
    facts = set().union(*hook(path="main.py", text=caller))
    assert "passes-soft-placement:Trainer:allow_soft_placement" in facts
    _, findings = run_rules(TRAINER, RULES, DEVICE | facts)
    assert npu008(findings) == [(9, 37, "unmigrated")]
    positional = "import tensorflow as tf\nimport trainer\n\nc = trainer.build_config(8, FLAGS.soft_placement)\n"
    facts = set().union(*hook(path="main.py", text=positional))
    assert "passes-soft-placement:build_config:1" in facts
    _, findings = run_rules(TRAINER, RULES, DEVICE | facts)
    assert npu008(findings) == [(18, 4, "unmigrated")]


def test_a_parameter_not_named_for_soft_placement_keeps_the_finding():
    # other files' calls are recorded for soft-placement-like names only: no promise for 'flag'
    source = TRAINER.replace("threads, soft_placement=True", "threads, flag=True").replace(
        "= soft_placement", "= flag")
    _, findings = run_rules(source, RULES, DEVICE)
    assert npu008(findings) == [(18, 4, "unmigrated")]


def test_a_parameter_the_function_rebinds_keeps_the_finding():
    source = TRAINER.replace("        self.model = model\n",
                             "        self.model = model\n        allow_soft_placement = allow_soft_placement and FLAGS.soft\n")
    _, findings = run_rules(source, RULES, DEVICE)
    assert npu008(findings) == [(10, 37, "unmigrated")]


EMBEDDING_TRAINER = '''\
"""Trains the embedding on the CPU, the rest where TensorFlow puts it."""
import tensorflow as tf

from data import batches


def build(vocabulary_size, embedding_size):
    with tf.device("/cpu:0"):
        embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
    return embeddings


def train(graph, steps):
    with tf.Session(graph=graph) as session:
        session.run(tf.global_variables_initializer())
        for step, batch in zip(range(steps), batches()):
            session.run("train", feed_dict=batch)
'''


def test_a_rerun_counts_the_session_config_site_on_the_session_line_again() -> None:
    """A first run gives the session a config (NPU007) and sets soft placement on it (NPU008):
    one site, the session's line. On the migrated code both are compliant, and NPU008's
    finding is on the session's line again, not on the config's own line: the same sites."""
    migrated, first = run_rules(EMBEDDING_TRAINER, RULES, DEVICE)
    _, second = run_rules(migrated, RULES, DEVICE)

    def lines(findings: list, code: str) -> set:
        return {code.splitlines()[f.line - 1].strip() for f in findings if f.rule_id in ("NPU007", "NPU008")}

    assert lines(first, EMBEDDING_TRAINER) == {"with tf.Session(graph=graph) as session:"}
    assert len(lines(second, migrated)) == 1 and all("Session(" in line for line in lines(second, migrated))
    assert sorted(f.rule_id for f in second if f.rule_id in ("NPU007", "NPU008")) == ["NPU007", "NPU008"]


SESSION_HELPER = '''"""Session helpers of the RL baselines: a default session, or a plain one."""
import tensorflow as tf


def make_session(config=None, make_default=False, graph=None):
    if config is None:
        config = tf.ConfigProto(inter_op_parallelism_threads=1)
    if make_default:
        return tf.InteractiveSession(config=config, graph=graph)
    else:
        return tf.Session(config=config, graph=graph)
'''


def test_a_rerun_counts_each_session_of_one_config_once() -> None:
    """Two sessions of one config, one per branch: a first run sets soft placement before each
    (two sites); on the migrated code each setting is that session's, not both the first's."""
    migrated, first = run_rules(SESSION_HELPER, RULES, DEVICE)
    _, second = run_rules(migrated, RULES, DEVICE)

    def sessions(findings: list, code: str) -> list:
        return sorted(code.splitlines()[f.line - 1].strip().split("(")[0] for f in findings
                      if f.rule_id == "NPU008")

    assert sessions(first, SESSION_HELPER) == ["return tf.InteractiveSession", "return tf.Session"]
    assert sessions(second, migrated) == sessions(first, SESSION_HELPER)
    assert {f.status for f in second if f.rule_id == "NPU008"} == {"migrated"}


@pytest.mark.parametrize("source", [SESSION_HELPER, SESSION_HELPER.replace(
    "tf.ConfigProto(inter_op_parallelism_threads=1)",
    "tf.ConfigProto(inter_op_parallelism_threads=1, allow_soft_placement=True)")])
def test_each_session_config_is_followed_once(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``finish`` followed each config to its session, then again to place the findings of the
    settings ``visit`` found (a setting found or not: the second walk ran for every session of
    every file); the bindings that reach a session are the same after the setting is added."""
    walked: list[int] = []

    def counted(target, *args, **kwargs):
        walked.append(id(target))
        return target_flow(target, *args, **kwargs)

    monkeypatch.setattr(npu008_soft_placement, "target_flow", counted)
    run_rules(source, RULES, DEVICE)
    assert walked and len(walked) == len(set(walked))


#: ``make_config`` returns None for a local run; the session takes its result from either path.
TWO_CALLS = '''\
import tensorflow as tf


def make_config(threads, local):
    if local:
        config = None
    else:
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
        custom_op.name = "NpuOptimizer"
    return config


def run(fast):
    if fast:
        config = make_config(8, False)
    else:
        config = make_config(1, True)
    sess = tf.Session(config=config)
    sess.run("train_op")
'''


def test_a_function_bound_on_two_paths_gives_one_finding_for_the_session() -> None:
    """NPU007 made sure of ``make_config`` once per binding that reaches the session, and
    handed NPU008 its returned config twice: the same finding came twice at the session."""
    findings = assert_unchanged(TWO_CALLS, RULES, DEVICE)
    assert [site for site in sites(findings) if site[0] != "NPU001"] == [
        ("NPU007", 19, 11, "unmigrated"), ("NPU008", 19, 11, "unmigrated")]


def test_a_config_copied_from_itself_in_a_loop_is_followed_without_end() -> None:
    """Soft placement on a deep copy is looked for on the object copied; ``config =
    copy.deepcopy(config)`` in a loop copies the object its own line bound on the pass
    before: followed back without end, that was a RecursionError."""
    source = '''\
import copy

import tensorflow as tf


def evaluate(config, checkpoints):
    config.allow_soft_placement = True
    for checkpoint in checkpoints:
        config = copy.deepcopy(config)
        with tf.Session(config=config) as sess:
            sess.run(checkpoint)
'''
    new, findings = run_rules(source, RULES, DEVICE)
    assert new is not None and not [f for f in findings if f.status == "error"]


#: baselines' ``make_session``: a config parameter, made with soft placement when None.
MADE_WITH_SOFT_PLACEMENT_WHEN_NONE = '''\
import tensorflow as tf


def make_session(config=None, num_cpu=4):
    """A session with ``num_cpu`` threads, or the caller's config."""
    if config is None:
        config = tf.ConfigProto(
            allow_soft_placement=True,
            intra_op_parallelism_threads=num_cpu)
        config.gpu_options.allow_growth = True
    return tf.Session(config=config)
'''


def test_a_copied_parameters_own_soft_placement_is_the_sessions_site_once():
    """NPU007 hands the session a copy of the parameter (``npu_config = copy.deepcopy(config)``):
    the ``allow_soft_placement=True`` of the config made when None reaches the session through
    the copy, and is that session's site, not a second one on the keyword's line (first run and
    rerun alike)."""
    after = (HEADER.replace("import *\n", "import *\nimport copy\n")
             + MADE_WITH_SOFT_PLACEMENT_WHEN_NONE.replace(
                 "    return tf.Session(config=config)\n",
                 "    npu_config = copy.deepcopy(config)\n" + npu_lines("npu_config", "    ")
                 + "    npu_config.allow_soft_placement = True\n"
                 + "    return tf.Session(config=npu_config)\n"))
    check(MADE_WITH_SOFT_PLACEMENT_WHEN_NONE, after, [("NPU008", 11, 11, "migrated")])
    _, second = run_rules(after, RULES, DEVICE)
    assert [s for s in sites(second) if s[0] == "NPU008"] == [("NPU008", 20, 11, "migrated")]
