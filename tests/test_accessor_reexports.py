"""Module accessor functions reached through a package's re-export or a star import (spec:
"Module accessor functions"). A library keeps its accessors in one module
(``textlib/compat.py``: ``def get_tf(): return tf.compat.v1``) and passes them on from the
package (``textlib/__init__.py``: ``from textlib.compat import get_tf``, or ``from .compat
import *``); a script calls ``textlib.get_tf()``, or takes them with ``from textlib import
get_tf`` or ``from textlib.compat import *``, or spells the module in full (``import
textlib.compat; textlib.compat.get_tf()``). Each spelling resolves like the module the
function returns, for every rule and for NPU100, in both engine modes (the golden helpers run
both), as ``from textlib import compat; compat.get_tf()`` does; one whose module is not known
(``contrib_module("layers")``) is reported and counted by NPU100. Before, none of them was
resolved: the script's sites had no finding at all.
"""

from __future__ import annotations

import pytest

from npu_codemod.codemods.accessors import file_accessors, repository_accessors
from npu_codemod.codemods.reexports import reexports
from npu_codemod.testing import assert_migrates, engine_of_ids

from support.packs import repository_facts
from support.rules import messages

RULES = {"NPU001", "NPU004", "NPU007", "NPU010", "NPU011", "NPU012", "NPU013", "NPU100"}
HEADER = "from npu_bridge.npu_init import *\n"
REWRITER = "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"

#: The library's accessors: TensorFlow's modules, imported where they are used.
COMPAT = '''\
"""TensorFlow's modules for the library, imported when first used so that importing the
library does not need TensorFlow."""
from __future__ import absolute_import

import importlib


def get_tf():
  """tf.compat.v1, whatever TensorFlow is installed."""
  import tensorflow.compat.v1 as tf_v1  # pylint: disable=g-import-not-at-top
  return tf_v1


def nn():
  from tensorflow.compat.v1 import nn as tf_nn  # pylint: disable=g-import-not-at-top
  return tf_nn


def tpu():
  from tensorflow.contrib import tpu as contrib_tpu  # pylint: disable=g-import-not-at-top
  return contrib_tpu


def contrib_module(name):
  """Any other contrib package, by name."""
  return importlib.import_module("tensorflow.contrib." + name)


def _estimator_lib():
  from tensorflow import estimator as tf_estimator  # pylint: disable=g-import-not-at-top
  return tf_estimator
'''

#: A fine-tuning script: long, with few sites, its TensorFlow only through the accessors
#: (``{lib}`` spells how it reaches them: ``textlib.``, or nothing).
SCRIPT = '''\
"""Fine-tunes the text classifier on TPU, its TensorFlow modules taken from the library."""
from __future__ import absolute_import
from __future__ import division

import collections
import os

import tensorflow as tf_base
{imports}

tf = {lib}get_tf()
nn_lib = {lib}nn()

Example = collections.namedtuple("Example", ["ids", "label"])


def read_examples(path):
  """The examples of a tab-separated file, one a line."""
  examples = []
  with open(path) as handle:
    for line in handle:
      ids, label = line.rstrip("\\n").split("\\t")
      examples.append(Example([int(i) for i in ids.split()], int(label)))
  return examples


def classifier(features, keep_prob, num_labels):
  hidden = tf.layers.dense(features, 256, activation=tf_base.nn.relu)
  hidden = nn_lib.dropout(hidden, keep_prob)
  logits = tf.layers.dense(hidden, num_labels)
  summary = {lib}contrib_module("layers").summarize_tensor(logits)
  return logits, summary


def model_fn(features, labels, mode, params):
  logits, _ = classifier(features["ids"], params["keep_prob"], params["num_labels"])
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdamOptimizer(params["learning_rate"]).minimize(loss)
  return tf_base.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def evaluate(checkpoint, predictions):
  sess = tf.Session()
  tf.train.Saver().restore(sess, checkpoint)
  return sess.run(predictions)


def main(flags):
  run_config = {lib}tpu().RunConfig(model_dir=os.path.join(flags.output_dir, "model"))
  estimator = {lib}tpu().TPUEstimator(
      model_fn=model_fn,
      config=run_config,
      use_tpu=flags.use_tpu,
      train_batch_size=flags.batch_size,
      params={{"learning_rate": flags.learning_rate, "keep_prob": 0.9, "num_labels": 2}})
  estimator.train(input_fn=flags.input_fn, max_steps=flags.train_steps)
'''

#: Each shape: the package's ``__init__``, the script's import line, how it spells the
#: accessors. The first imports the accessors' module itself (resolved before too).
SHAPES = {
    "the module itself": ("", "from textlib import compat", "compat."),
    "package re-export, import the package": (
        '"""Text models."""\nfrom textlib.compat import contrib_module, get_tf, nn, tpu\n',
        "import textlib", "textlib."),
    "package re-export, import the function": (
        '"""Text models."""\nfrom textlib.compat import contrib_module, get_tf, nn, tpu\n',
        "from textlib import contrib_module, get_tf, nn, tpu", ""),
    "package star re-export, import the function": (
        '"""Text models."""\nfrom .compat import *  # noqa: F401,F403\n',
        "from textlib import contrib_module, get_tf, nn, tpu", ""),
    "package star re-export, import the package": (
        '"""Text models."""\nfrom .compat import *  # noqa: F401,F403\n', "import textlib", "textlib."),
    "star import of the module": ("", "from textlib.compat import *  # noqa: F403", ""),
    "dotted import of the module": ("", "import textlib.compat", "textlib.compat."),
    "star import of the re-exporting package": (
        '"""Text models."""\nfrom textlib.compat import contrib_module, get_tf, nn, tpu\n',
        "from textlib import *  # noqa: F403", ""),
}


def _case(shape: str) -> tuple[frozenset[str], str]:
    init, imports, lib = SHAPES[shape]
    script = SCRIPT.format(imports=imports, lib=lib)
    files = {"textlib/__init__.py": init, "textlib/compat.py": COMPAT, "finetune.py": script}
    return repository_facts(files), script


def _migrated(script: str, lib: str) -> str:
    return script.replace("from __future__ import division\n", "from __future__ import division\n" + HEADER + REWRITER).replace(
        "nn_lib.dropout(hidden, keep_prob)", "npu_ops.dropout(hidden, keep_prob)").replace(
        "  sess = tf.Session()\n", "  config = tf.ConfigProto()\n  custom_op = config.graph_options.rewrite_options."
        "custom_optimizers.add()\n  custom_op.name = \"NpuOptimizer\"\n  config.graph_options.rewrite_options."
        "remapping = RewriterConfig.OFF\n  config.graph_options.rewrite_options.memory_optimization = "
        "RewriterConfig.OFF\n  sess = tf.Session(config=config)\n").replace(
        '"model"))', '"model"), save_summary_steps=0)').replace(
        "      config=run_config,", "      config=npu_run_config_init(run_config=run_config),").replace(
        "      use_tpu=flags.use_tpu,", "      use_tpu=False,").replace(
        '"num_labels": 2})', '"num_labels": 2}, eval_on_tpu=False, export_to_tpu=False)')


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_accessor_passed_on_resolves_like_its_module(shape: str) -> None:
    facts, script = _case(shape)
    lib = SHAPES[shape][2]
    findings = assert_migrates(RULES, script, _migrated(script, lib), facts=facts, path="finetune.py", findings=[
        ("NPU001", 5, 0, "migrated"),
        ("NPU004", 29, 11, "migrated"),  # nn_lib.dropout
        ("NPU100", 31, 12, "unmigrated"),  # contrib_module("layers"): looked up by name
        ("NPU007", 43, 9, "migrated"), ("NPU010", 43, 9, "unmigrated"),  # tf.Session()
        ("NPU013", 49, 15, "migrated"),  # tpu().RunConfig
        ("NPU011", 50, 14, "migrated"), ("NPU012", 50, 14, "migrated")])  # tpu().TPUEstimator
    assert messages(findings, "NPU100") == [
        f"unresolved TensorFlow access: {lib}contrib_module() is a function of the repository that "
        "returns a TensorFlow module npu-codemod cannot resolve (it picks or looks the module up): "
        f"check {lib}contrib_module().summarize_tensor against Ascend's API support list by hand "
        "(guide: Ascend's TF 1.15 API support list, "
        "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu100-api-support)"]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_unresolved_access_passed_on_is_counted(shape: str) -> None:
    facts, script = _case(shape)
    for mode in ("selective", "full"):
        outcome = engine_of_ids(frozenset(RULES), mode).process(script.encode(), "finetune.py", repo="repo",
                                                                facts=facts)
        unknown = [(sites.api, sites.sites) for sites in outcome.api_sites if sites.status == "unknown"]
        assert sum(count for _, count in unknown) == 1, (mode, unknown)


def test_a_star_import_binds_the_public_accessors_the_file_has_not_otherwise() -> None:
    """Not ``_estimator_lib`` (private), nor ``nn`` (imported from elsewhere) nor ``tpu``
    (defined here)."""
    facts = repository_facts({"textlib/__init__.py": "", "textlib/compat.py": COMPAT})
    script = "from textlib.compat import *\nfrom textlib.other import nn\n\n\ndef tpu():\n  return None\n"
    spelled = file_accessors("train.py", script, repository_accessors(facts))
    assert spelled == {"get_tf": "tensorflow", "contrib_module": "?"}


def test_a_package_passes_on_the_accessor_modules_it_imports() -> None:
    """``import textlib; textlib.compat.get_tf()`` where ``textlib/__init__.py`` imports its
    ``compat`` (``from . import compat``): the module is the package's attribute."""
    facts = repository_facts({"textlib/__init__.py": "from . import compat\n", "textlib/compat.py": COMPAT})
    spelled = file_accessors("train.py", "import textlib as tl\n", repository_accessors(facts),
                             reexported=reexports(facts))
    assert spelled["tl.compat.get_tf"] == "tensorflow" and "tl.compat._estimator_lib" in spelled
    assert file_accessors("train.py", "import textlib as tl\n", repository_accessors(facts)) == {}


#: The accessors called where the module is used (``nn().dropout(...)``, ``get_tf().Session()``).
CALLS = '''\
"""Evaluates a checkpoint, each TensorFlow module looked up where it is used."""
import tensorflow as tf_base
{imports}


def evaluate(features, keep_prob, checkpoint):
  hidden = {lib}nn().dropout(features, keep_prob)
  sess = {lib}get_tf().Session()
  {lib}get_tf().train.Saver().restore(sess, checkpoint)
  return sess.run(hidden)
'''


def _calls(shape: str) -> tuple[list[tuple[str, int, int, str]], list[tuple[str, str, int]]]:
    init, imports, lib = SHAPES[shape]
    script = CALLS.format(imports=imports, lib=lib)
    facts = repository_facts({"textlib/__init__.py": init, "textlib/compat.py": COMPAT, "evaluate.py": script})
    outcome = engine_of_ids(frozenset(RULES)).process(script.encode(), "evaluate.py", repo="repo", facts=facts)
    return (sorted((f.rule_id, f.line, f.column, f.status) for f in outcome.findings),
            sorted((sites.api, sites.status, sites.sites) for sites in outcome.api_sites))


@pytest.mark.parametrize("shape", sorted(set(SHAPES) - {"the module itself"}))
def test_calls_of_an_accessor_passed_on_are_audited_like_the_modules_own(shape: str) -> None:
    """What no rule migrates in this form (a dropout or a session of an accessor's call) NPU100
    reports and counts, as for ``compat.nn().dropout``."""
    findings, sites = _calls(shape)
    assert (findings, sites) == _calls("the module itself")
    assert [rule for rule, _, _, _ in findings] == ["NPU100", "NPU100"]  # tf.nn.dropout, tf.Session


#: A package that passes on one of two accessors, whichever TensorFlow has.
EITHER = '''\
"""Text models."""
from textlib.compat import contrib_module, get_tf, nn

try:
  from textlib.compat import tpu
except ImportError:
  from textlib.compat_tf2 import tpu
'''
COMPAT_TF2 = '''\
"""The TPU module where TensorFlow has no contrib."""


def tpu():
  from tensorflow.compat.v1 import tpu as tf_tpu  # pylint: disable=g-import-not-at-top
  return tf_tpu
'''


def test_a_package_passing_on_either_of_two_modules_is_reported_not_resolved() -> None:
    """``textlib.tpu()`` is ``tf.contrib.tpu`` or ``tf.compat.v1.tpu``: which one, npu-codemod
    cannot tell, so NPU100 reports each access through it (the first one found was taken)."""
    script = SCRIPT.format(imports="import textlib", lib="textlib.")
    files = {"textlib/__init__.py": EITHER, "textlib/compat.py": COMPAT, "textlib/compat_tf2.py": COMPAT_TF2,
             "finetune.py": script}
    facts = repository_facts(files)
    assert file_accessors("finetune.py", script, repository_accessors(facts),
                          reexported=reexports(facts))["textlib.tpu"] == "?"
    findings = engine_of_ids(frozenset(RULES)).process(script.encode(), "finetune.py", repo="repo",
                                                       facts=facts).findings
    assert [(f.line, f.status) for f in findings if f.rule_id in ("NPU011", "NPU012", "NPU013")] == []
    assert [message.partition(": check ")[2].partition(" against")[0] for message in messages(findings, "NPU100")
            if message.startswith("unresolved")] == [
        "textlib.contrib_module().summarize_tensor", "textlib.tpu().RunConfig", "textlib.tpu().TPUEstimator"]
    same = repository_facts({**files, "textlib/compat_tf2.py": COMPAT_TF2.replace(
        "from tensorflow.compat.v1 import tpu", "from tensorflow.contrib import tpu")})
    assert file_accessors("finetune.py", script, repository_accessors(same),
                          reexported=reexports(same))["textlib.tpu"] == "tensorflow.contrib.tpu"
