"""NPU007 and the functions that return a config: the lines go into the function, once, and
no caller adds them again, in its own file or any other (issue 13, defect 2)."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.rules.sess_run._config_functions import (
    ConfiguredFunctions,
    config_function_facts,
    module_parts,
)

from support.rules import assert_migrates, assert_unchanged, engine, run_rules, sites
from support.session_config import HEADER, RULES, SESSION_UTILS, TRAIN_THEN_EVALUATE, npu_lines

BENCHMARK = '''\
"""Benchmark library: builds the model graph and the session config."""

from __future__ import print_function

import tensorflow as tf

from models import model_config


def create_config_proto(params):
  """Returns session config proto."""
  config = tf.ConfigProto()
  config.allow_soft_placement = True
  if params.num_intra_threads is None:
    if params.device == 'gpu':
      config.intra_op_parallelism_threads = 1
  else:
    config.intra_op_parallelism_threads = params.num_intra_threads
  config.inter_op_parallelism_threads = params.num_inter_threads
  return config


class BenchmarkCNN(object):

  def __init__(self, params):
    self.params = params
    self.model = model_config.get_model_config(params.model)

  def run(self):
    sv = tf.train.Supervisor(is_chief=True, logdir=self.params.train_dir)
    with sv.managed_session(config=create_config_proto(self.params)) as sess:
      for _ in range(self.params.num_batches):
        sess.run(self.model.train_op)
'''
CONFIGURED = "npu007-config:benchmark_cnn.create_config_proto"
MESSAGE = ("the config is configured in benchmark_cnn.create_config_proto, which returns it with "
           "the NPU optimizer config (NpuOptimizer on; remapping, memory_optimization off): "
           "nothing to add here")


def npu007(findings: list) -> list:
    return sorted((f.line, f.column, f.status, f.message) for f in findings if f.rule_id == "NPU007")


def test_a_function_a_session_of_its_file_uses_is_a_fact_of_the_repository():
    assert config_function_facts("benchmark_cnn.py", BENCHMARK) == {CONFIGURED}
    assert config_function_facts("scripts/tf_cnn_benchmarks/benchmark_cnn.py", BENCHMARK) == {
        "npu007-config:scripts.tf_cnn_benchmarks.benchmark_cnn.create_config_proto"}


@pytest.mark.parametrize("path, parts", [
    ("benchmark_cnn.py", ("benchmark_cnn",)),
    ("models/resnet_model.py", ("models", "resnet_model")),
    ("models/__init__.py", ("models",)),
    ("/ci/checkout/train.py", ("ci", "checkout", "train")),
])
def test_module_parts(path, parts):
    assert module_parts(path) == parts


@pytest.mark.parametrize("source, facts", [
    # not used by a session of its file, and returns a config without the lines: no promise
    ("import tensorflow as tf\n\ndef make():\n    return tf.ConfigProto()\n", set()),
    # configured already
    ("import tensorflow as tf\n\ndef make():\n    c = tf.ConfigProto()\n"
     "    op = c.graph_options.rewrite_options.custom_optimizers.add()\n"
     "    op.name = 'NpuOptimizer'\n    return c\n", {"npu007-config:m.make"}),
    # returns what a configured function of its file returns, directly or through a name
    (BENCHMARK + "\n\ndef session_config(params):\n  cfg = create_config_proto(params)\n"
     "  return cfg\n", {CONFIGURED.replace("benchmark_cnn", "m"), "npu007-config:m.session_config"}),
    # returns what an imported config function returns: configured when that one is
    ("import tensorflow as tf\nfrom . import bench\n\ndef get_config(p):\n"
     "    return bench.create_config_proto(p)\n",
     {"npu007-config:m.get_config=bench.create_config_proto"}),
    # not a config maker by its names: returning a call's result is no fact
    ("import numpy as np\nimport tensorflow as tf\n\ndef zeros(n):\n    return np.zeros(n)\n", set()),
    # a bare return on one path: NPU007 cannot complete it
    ("import tensorflow as tf\n\ndef make(on):\n    if not on:\n        return\n"
     "    return tf.ConfigProto()\n\nsess = tf.Session(config=make(True))\n", set()),
    # defined twice: which one a call means is unknown
    ("import tensorflow as tf\n\ndef make():\n    return tf.ConfigProto()\n\n"
     "def make():\n    return tf.ConfigProto()\n\nsess = tf.Session(config=make())\n", set()),
    # Python 2 only: no facts (ast cannot read it)
    ("import tensorflow as tf\nprint 'x'\n", set()),
])
def test_config_function_facts(source, facts):
    assert config_function_facts("pkg/m.py", source) == {
        fact.replace("npu007-config:m.", "npu007-config:pkg.m.").replace("=bench", "=pkg.bench")
        for fact in facts}


def test_calls_resolve_to_the_nearest_module_then_to_a_single_module_ending_so():
    functions = ConfiguredFunctions({
        "npu007-config:scripts.tf_cnn_benchmarks.benchmark_cnn.create_config_proto",
        "npu007-config:src.models.benchmark.create_config_proto",
        "npu007-config:tools.get_config=benchmark_cnn.create_config_proto",
        "npu007-config:tools.broken=nowhere.make_config",
        "uses-tf-device",
    })
    here = "scripts/tf_cnn_benchmarks/train.py"
    assert functions.find("benchmark_cnn.create_config_proto", here) == \
        "scripts.tf_cnn_benchmarks.benchmark_cnn.create_config_proto"
    # elsewhere in the repository: the one module of that name (it is on the path somehow)
    assert functions.find("benchmark_cnn.create_config_proto", "other/train.py") == \
        "scripts.tf_cnn_benchmarks.benchmark_cnn.create_config_proto"
    two = ConfiguredFunctions({"npu007-config:a.benchmark_cnn.create_config_proto",
                               "npu007-config:b.benchmark_cnn.create_config_proto"})
    assert two.find("benchmark_cnn.create_config_proto", "other/train.py") is None
    assert two.find("benchmark_cnn.create_config_proto", "b/train.py") == "b.benchmark_cnn.create_config_proto"
    assert functions.find("models.benchmark.create_config_proto", "train.py") == \
        "src.models.benchmark.create_config_proto"
    assert functions.find("scripts.tools.get_config", "x.py") is None
    # forwards to the one benchmark_cnn of the repository, configured
    assert functions.find("tools.get_config", "scripts/tf_cnn_benchmarks/run.py") == "tools.get_config"
    assert functions.find("tools.broken", "train.py") is None
    forwarding = ConfiguredFunctions({"npu007-config:tools.get_config=bench.make",
                                      "npu007-config:bench.make"})
    assert forwarding.find("tools.get_config", "train.py") == "tools.get_config"


TRAIN = '''\
"""Trains the benchmark model; evaluation goes through the same config."""

import tensorflow as tf

{imports}


def main(params):
  model = build_model(params)
  config = {call}
  config.gpu_options.allow_growth = True
  with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(params.num_batches):
      sess.run(model.train_op)
  eval_sess = tf.Session(config={call})
  return eval_sess
'''


@pytest.mark.parametrize("imports, call", [
    ("import benchmark_cnn", "benchmark_cnn.create_config_proto(params)"),
    ("import benchmark_cnn as bm", "bm.create_config_proto(params)"),
    ("from benchmark_cnn import create_config_proto", "create_config_proto(params)"),
    ("from benchmark_cnn import create_config_proto as make_config", "make_config(params)"),
])
def test_callers_in_another_file_add_nothing_whatever_the_import(imports, call):
    source = TRAIN.format(imports=imports, call=call)
    findings = assert_unchanged(source, RULES, {CONFIGURED})
    assert npu007(findings) == [(12, 7, "migrated", MESSAGE), (16, 14, "migrated", MESSAGE)]


@pytest.mark.parametrize("path, imports, call", [
    ("train.py", "from models import benchmark_cnn", "benchmark_cnn.create_config_proto(p)"),
    ("train.py", "import models.benchmark_cnn", "models.benchmark_cnn.create_config_proto(p)"),
    ("models/train.py", "from .benchmark_cnn import create_config_proto", "create_config_proto(p)"),
    ("models/eval/run.py", "from .. import benchmark_cnn", "benchmark_cnn.create_config_proto(p)"),
])
def test_a_package_module_imported_from_its_package_or_relatively(path, imports, call):
    facts = frozenset(config_function_facts("models/benchmark_cnn.py", BENCHMARK))
    outcome = engine(frozenset(RULES)).process(TRAIN.format(imports=imports, call=call).encode(),
                                                path, repo="repo", facts=facts)
    assert outcome.new_data is None
    assert {f.message.split(",")[0] for f in outcome.findings if f.rule_id == "NPU007"} == {
        "the config is configured in models.benchmark_cnn.create_config_proto"}


def after_docstring(source: str) -> str:
    """``source`` with the NPU001 and RewriterConfig imports after its docstring line."""
    docstring, rest = source.split("\n", 1)
    return f"{docstring}\n{HEADER}{rest}"


def test_without_the_fact_the_caller_configures_its_own_objects_once_each():
    source = TRAIN.format(imports="import benchmark_cnn", call="benchmark_cnn.create_config_proto(params)")
    after = after_docstring(source.replace(
        "  with tf.Session(config=config)", npu_lines("config", "  ") + "  with tf.Session(config=config)"
    ).replace("  eval_sess = tf.Session(config=benchmark_cnn.create_config_proto(params))",
              "  npu_config = benchmark_cnn.create_config_proto(params)\n" + npu_lines("npu_config", "  ")
              + "  eval_sess = tf.Session(config=npu_config)"))
    findings = assert_migrates(source, after, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [
        ("NPU007", 12, 7, "migrated"), ("NPU007", 16, 14, "migrated")]


def test_a_fresh_config_on_another_path_gets_its_lines_after_its_binding():
    source = '''\
import tensorflow as tf

import benchmark_cnn


def session(params, debug):
  if debug:
    config = tf.ConfigProto(log_device_placement=True)
  else:
    config = benchmark_cnn.create_config_proto(params)
  return tf.Session(config=config)
'''
    after = HEADER + source.replace(
        "    config = tf.ConfigProto(log_device_placement=True)\n",
        "    config = tf.ConfigProto(log_device_placement=True)\n" + npu_lines("config", "    "))
    findings = assert_migrates(source, after, RULES, {CONFIGURED})
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [("NPU007", 11, 9, "migrated")]


def test_lines_written_by_hand_on_top_of_a_configured_function_are_reported():
    source = '''\
import tensorflow as tf
from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

import benchmark_cnn


def main(params):
  config = benchmark_cnn.create_config_proto(params)
''' + npu_lines("config", "  ") + '''\
  with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
'''
    findings = assert_unchanged(source, RULES, {CONFIGURED})
    [(line, _, status, message)] = npu007(findings)
    assert (line, status) == (13, "unmigrated")
    assert message.startswith("'config' gets a second NpuOptimizer at line 9")
    # without the promise of benchmark_cnn (its file has no session), the lines are the only ones
    assert npu007(assert_unchanged(source, RULES))[0][2] == "migrated"


def test_a_same_file_chain_of_config_functions_configures_the_innermost_once():
    before = BENCHMARK + '''

def session_config(params):
  """The benchmark's config, plus the evaluation settings."""
  cfg = create_config_proto(params)
  cfg.gpu_options.allow_growth = True
  return cfg


def evaluate(params):
  with tf.Session(config=session_config(params)) as sess:
    sess.run("accuracy:0")
'''
    after = before.replace("from __future__ import print_function\n",
                           "from __future__ import print_function\n" + HEADER).replace(
        "  return config\n", npu_lines("config", "  ") + "  return config\n")
    findings = assert_migrates(before, after, RULES)
    assert after.count("custom_optimizers.add()") == 1
    assert [m.split(" the NPU")[0] for *_, m in npu007(findings)] == [
        "added the lines that give the config returned by create_config_proto()",
        "the config returned by session_config() already has"]


def test_a_helper_that_may_return_none_is_not_completed_inside_the_caller_configures():
    before = '''\
import tensorflow as tf


def maybe_config(flags):
    if flags.default_config:
        return None
    return tf.ConfigProto(intra_op_parallelism_threads=flags.threads)


def main(flags):
    sess = tf.Session(config=maybe_config(flags))
    return sess
'''
    after = HEADER + before.replace(
        "    sess = tf.Session(config=maybe_config(flags))",
        "    config = maybe_config(flags)\n" + npu_lines("config", "    ")
        + "    sess = tf.Session(config=config)")
    findings = assert_migrates(before, after, RULES)
    assert [s for s in sites(findings) if s[0] == "NPU007"] == [("NPU007", 11, 11, "migrated")]


def test_a_promised_function_no_session_here_reaches_is_completed_at_its_definition():
    source = '''\
import tensorflow as tf


def make_config(threads):
    return tf.ConfigProto(intra_op_parallelism_threads=threads)


def debug_session():
    config = tf.ConfigProto()
    sess = tf.Session(config=config)
    config = make_config(4)
    return sess, config
'''
    facts = config_function_facts("train.py", source)
    assert facts == {"npu007-config:train.make_config"}  # the generous analysis: any binding
    after = HEADER + source.replace(
        "    return tf.ConfigProto(intra_op_parallelism_threads=threads)",
        "    config = tf.ConfigProto(intra_op_parallelism_threads=threads)\n"
        + npu_lines("config", "    ") + "    return config").replace(
        "    sess = tf.Session(config=config)", npu_lines("config", "    ") + "    sess = tf.Session(config=config)")
    findings = assert_migrates(source, after, RULES, facts)
    assert [(line, status) for line, _, status, _ in npu007(findings)] == [(4, "migrated"), (10, "migrated")]
    assert npu007(findings)[0][3].endswith("(the repository analysis counts on it: callers in other files add nothing)")
    _, second = run_rules(after, RULES, config_function_facts("train.py", after))
    assert [(line, status) for line, _, status, _ in npu007(second)] == [(6, "migrated"), (21, "migrated")]


SHARED_PARAMETER = '''\
import tensorflow as tf


def create_session(config, target=""):
    """A session on ``target`` with the caller's config."""
    return tf.Session(target, config=config)


def main():
    config = tf.ConfigProto()
    sess = tf.Session(config=config)
    with create_session(config) as eval_sess:
        eval_sess.run(tf.no_op())
    sess.run(tf.no_op())
    sess.close()
'''


@pytest.mark.parametrize("call", ["create_session(config)", "create_session(config=config)"])
def test_a_parameter_config_a_caller_configures_gets_no_second_npu_optimizer(call: str):
    """``main`` gives ``config`` to its own session (NPU007 configures it there) and hands
    the same object to ``create_session``: lines for the parameter there added a second
    NpuOptimizer entry to it ("a config object gets the NpuOptimizer exactly once"). The
    helper's session is reported, its caller's config configured once."""
    source = SHARED_PARAMETER.replace("create_session(config) as", f"{call} as")
    new, findings = run_rules(source, RULES)
    assert new is not None
    assert new.count("custom_optimizers.add()") == 1
    assert '''config."""\n    return tf.Session(target, config=config)\n''' in new
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [
        ("NPU007", 6, 11, "unmigrated"), ("NPU007", 11, 11, "migrated")]
    (message,) = [f.message for f in findings if f.rule_id == "NPU007" and f.status == "unmigrated"]
    assert message.startswith("'config' is a parameter of create_session, and line 12 passes it a config")


def test_a_parameter_config_no_caller_configures_is_configured_in_the_function():
    source = SHARED_PARAMETER.replace("    sess = tf.Session(config=config)\n", "").replace(
        "    sess.run(tf.no_op())\n", "").replace("    sess.close()\n", "")
    new, findings = run_rules(source, RULES)
    assert new is not None and new.count("custom_optimizers.add()") == 1
    assert '''config."""\n    npu_config = copy.deepcopy(config)\n    custom_op = npu_config''' in new


#: The helper falls back on a config of its own when the caller passes none.
OR_DEFAULT = SHARED_PARAMETER.replace('def create_session(config, target=""):', 'def create_session(config=None, target=""):').replace(
    "    return tf.Session(target, config=config)\n",
    "    config = config or tf.ConfigProto()\n    return tf.Session(target, config=config)\n")


def test_a_parameter_config_kept_by_an_or_default_is_the_callers_object_too():
    """``config = config or tf.ConfigProto()`` binds the caller's object whenever one is
    passed: lines for ``config`` changed it at every call, as for the parameter itself. A
    copy gets them; and where a caller configures the config it passes, that is reported."""
    alone = OR_DEFAULT.replace("    sess = tf.Session(config=config)\n", "").replace(
        "    sess.run(tf.no_op())\n", "").replace("    sess.close()\n", "")
    new, _ = run_rules(alone, RULES)
    assert new is not None and new.count("custom_optimizers.add()") == 1
    assert ("    config = config or tf.ConfigProto()\n    npu_config = copy.deepcopy(config)\n"
            "    custom_op = npu_config") in new
    assert "return tf.Session(target, config=npu_config)" in new
    assert_migrates(alone, new, RULES)  # compiles; a second run changes nothing
    shared, findings = run_rules(OR_DEFAULT, RULES)
    assert shared is not None and shared.count("custom_optimizers.add()") == 1
    assert "    config = config or tf.ConfigProto()\n    return tf.Session(target, config=config)\n" in shared
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [
        ("NPU007", 7, 11, "unmigrated"), ("NPU007", 12, 11, "migrated")]


FALLBACK_PARAMETER = '''\
import tensorflow as tf


def create_session(target="", config=None):
    """A session on ``target``; a default config when the caller gives none."""
    config = config or tf.ConfigProto()
    return tf.Session(target, config=config)


def main():
    config = tf.ConfigProto()
    sess = tf.Session(config=config)
    with create_session(config=config) as eval_sess:
        eval_sess.run(tf.no_op())
    sess.run(tf.no_op())
    sess.close()
'''
FALLBACKS = ["config or tf.ConfigProto()", "config if config is not None else tf.ConfigProto()",
             "tf.ConfigProto() if config is None else config"]


@pytest.mark.parametrize("fallback", FALLBACKS)
def test_a_parameter_config_a_fallback_keeps_is_the_callers_object(fallback: str):
    """``config = config or tf.ConfigProto()`` keeps the object ``main`` passes, which NPU007
    configures for ``main``'s own session: lines after the fallback gave that object a second
    NpuOptimizer entry, as lines for a plain parameter would."""
    source = FALLBACK_PARAMETER.replace("config or tf.ConfigProto()", fallback)
    new, findings = run_rules(source, RULES)
    assert new is not None
    assert new.count("custom_optimizers.add()") == 1
    assert f"    config = {fallback}\n    return tf.Session(target, config=config)\n" in new
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [
        ("NPU007", 7, 11, "unmigrated"), ("NPU007", 12, 11, "migrated")]


@pytest.mark.parametrize("fallback", FALLBACKS)
def test_a_parameter_config_a_fallback_keeps_is_configured_once_without_such_a_caller(fallback: str):
    source = FALLBACK_PARAMETER.replace("config or tf.ConfigProto()", fallback).replace(
        "    sess = tf.Session(config=config)\n", "").replace(
        "    sess.run(tf.no_op())\n", "").replace("    sess.close()\n", "")
    copied = "    npu_config = copy.deepcopy(config)\n" + npu_lines("npu_config", "    ")
    after = HEADER.replace("import *\n", "import *\nimport copy\n") + source.replace(
        "    return tf.Session(target, config=config)", copied + "    return tf.Session(target, config=npu_config)")
    findings = assert_migrates(source, after, RULES)
    assert [site for site in sites(findings) if site[0] == "NPU007"] == [("NPU007", 7, 11, "migrated")]


def _repository_facts(files: dict) -> frozenset:
    return frozenset().union(*(config_function_facts(path, text) for path, text in files.items()))


@pytest.mark.parametrize("caller", [
    TRAIN_THEN_EVALUATE,  # its own session uses the config: NPU007 configures it there
    TRAIN_THEN_EVALUATE.replace("session_utils.create_session(config)", "session_utils.create_session(\n"
                                "        config=config, target='')"),
    # from the function of the helper's module that a session there makes configured
    TRAIN_THEN_EVALUATE.replace("tf.ConfigProto(allow_soft_placement=True)", "session_utils.make_config(8)"
                                ).replace("    with tf.Session(config=config) as sess:\n        sess.run(\"train_op\")\n", ""),
    # from utils.session_utils import create_session, as the migrated caller (it has the lines)
    TRAIN_THEN_EVALUATE.replace("from utils import session_utils", "from utils.session_utils import create_session"
                                ).replace("session_utils.create_session", "create_session").replace(
        "    with tf.Session", npu_lines("config", "    ") + "    with tf.Session"),
])
def test_a_parameter_config_a_caller_of_another_file_configures_gets_no_second_npu_optimizer(caller: str):
    """``train.py`` configures ``config`` (its own session takes it, it has the lines, or
    make_config returns it configured) and hands the same object to ``create_session`` of
    ``utils/session_utils.py``: lines for the parameter there gave it a second NpuOptimizer
    entry. The repository analysis tells the helper's file; its session is reported."""
    facts = _repository_facts({"utils/session_utils.py": SESSION_UTILS, "train.py": caller})
    outcome = engine(RULES).process(SESSION_UTILS.encode(), "utils/session_utils.py", facts=facts)
    assert outcome.new_data is not None  # make_config: configured once, for default_session
    new = outcome.new_data.decode()
    assert new.count("custom_optimizers.add()") == 1
    assert '    sess = tf.Session(target, config=config)\n' in new and "  = config.graph" not in new
    findings = npu007(outcome.findings)
    assert [(line, status) for line, _, status, _ in findings] == [(13, "migrated"), (18, "unmigrated")]
    assert findings[1][3].startswith("'config' is a parameter of create_session, and a call in train.py "
                                     "passes it a config that is configured there (")
    assert any(fact.startswith("npu007-passes:train.py|utils.session_utils.create_session|") for fact in facts)


def test_a_parameter_config_no_caller_of_another_file_configures_is_configured_in_the_function():
    caller = TRAIN_THEN_EVALUATE.replace("    with tf.Session(config=config) as sess:\n        sess.run(\"train_op\")\n", "")
    facts = _repository_facts({"utils/session_utils.py": SESSION_UTILS, "train.py": caller})
    assert not any(fact.startswith("npu007-passes:") for fact in facts)
    outcome = engine(RULES).process(SESSION_UTILS.encode(), "utils/session_utils.py", facts=facts)
    assert outcome.new_data is not None and outcome.new_data.decode().count("custom_optimizers.add()") == 2
    assert [status for _, _, status, _ in npu007(outcome.findings)] == ["migrated", "migrated"]


@pytest.mark.parametrize("source, facts", [
    # module-level script code; the callee as the import spells it, a keyword
    ("import tensorflow as tf\nimport helpers\nconfig = tf.ConfigProto()\nsess = tf.Session(config=config)\n"
     "helpers.evaluate(sess, session_config=config)\n", {"helpers.evaluate|session_config|session"}),
    # an attribute configured anywhere in the file; a class of the module, by position
    ("import tensorflow as tf\nclass Evaluator:\n    def __init__(self, config):\n        pass\n"
     "class Trainer:\n    def build(self):\n        self.config = tf.ConfigProto()\n"
     "        c = self.config.graph_options.rewrite_options.custom_optimizers.add()\n"
     "    def eval(self):\n        return Evaluator(self.config)\n", {"pkg.m.Evaluator|#0|lines"}),
    # a config function's result (a class's is no config function's: BertConfig)
    ("from utils import get_session_config, BertConfig, run\nc = get_session_config()\nb = BertConfig()\n"
     "run(c, b)\n", {"utils.run|#0|=utils.get_session_config"}),
    # a method of an object: no function the analysis can name; the session's own argument
    ("import tensorflow as tf\ndef main(helper):\n    config = tf.ConfigProto()\n"
     "    s = tf.Session(config=config)\n    return helper.create_session(config)\n", set()),
    # another scope's name; a train(...) whose 23rd argument only may be slim's session_config
    ("import tensorflow as tf\nimport helpers\ndef a():\n    config = tf.ConfigProto()\n"
     "    return tf.Session(config=config)\ndef b(config):\n    return helpers.evaluate(config)\n"
     "def c(x):\n    train(" + "0, " * 22 + "x)\n    helpers.evaluate(x)\n", set()),
])
def test_calls_that_pass_a_config_their_caller_configures_are_facts(source, facts):
    found = {fact for fact in config_function_facts("pkg/m.py", source) if fact.startswith("npu007-passes:")}
    assert found == {f"npu007-passes:pkg/m.py|{fact}" for fact in facts}
