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
from npu_codemod.codemods.reexports import accessor_reexports, reexports
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

#: A package that passes the accessors on by assigning them (``get_tf = compat.get_tf``).
ASSIGNING = '''\
"""Text models."""
from textlib import compat

contrib_module = compat.contrib_module
get_tf = compat.get_tf
nn = compat.nn
tpu = compat.tpu
'''
#: ...or by assigning what it imported under another name.
RENAMING = '''\
"""Text models."""
from .compat import contrib_module as _contrib_module
from .compat import get_tf as _get_tf
from .compat import nn as _nn
from .compat import tpu as _tpu

contrib_module = _contrib_module
get_tf = _get_tf
nn = _nn
tpu = _tpu
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
    "package assignment, import the package": (ASSIGNING, "import textlib", "textlib."),
    "package assignment, import the function": (
        ASSIGNING, "from textlib import contrib_module, get_tf, nn, tpu", ""),
    "package assignment of an imported alias": (
        RENAMING, "from textlib import contrib_module, get_tf, nn, tpu", ""),
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


def _star_of(listed: str) -> tuple[frozenset[str], str]:
    """The fine-tuning script's repository where it star-imports ``textlib.compat``, whose
    ``__all__`` is ``listed`` (a line of the module)."""
    script = SCRIPT.format(imports="from textlib.compat import *  # noqa: F403", lib="")
    files = {"textlib/__init__.py": "", "textlib/compat.py": COMPAT + listed, "finetune.py": script}
    return repository_facts(files), script


def test_a_star_import_binds_the_accessors_the_modules_all_names() -> None:
    """``__all__`` names ``get_tf``, ``nn`` and ``contrib_module``, not ``tpu``: the script's
    ``tpu()`` is no accessor of the module (Python leaves it unbound), so no rule acts on it,
    in either engine mode; the others resolve as before."""
    facts, script = _star_of('\n__all__ = ["contrib_module", "get_tf", "nn"]\n')
    assert file_accessors("finetune.py", script, repository_accessors(facts)) == {
        "get_tf": "tensorflow", "nn": "tensorflow.nn", "contrib_module": "?"}
    for mode in ("selective", "full"):
        outcome = engine_of_ids(frozenset(RULES), mode).process(script.encode(), "finetune.py", repo="repo",
                                                                facts=facts)
        assert sorted((f.rule_id, f.line) for f in outcome.findings) == [
            ("NPU001", 5), ("NPU004", 29), ("NPU007", 43), ("NPU010", 43), ("NPU100", 31)], mode


def test_a_listed_private_accessor_is_star_imported_and_a_computed_all_is_not_resolved() -> None:
    facts, script = _star_of('\n__all__ = ["get_tf", "_estimator_lib"]\n')
    assert file_accessors("finetune.py", script, repository_accessors(facts)) == {
        "get_tf": "tensorflow", "_estimator_lib": "tensorflow.estimator"}
    facts, script = _star_of('\n__all__ = [name for name in dir() if not name.startswith("_")]\n')
    assert file_accessors("finetune.py", script, repository_accessors(facts)) == {
        "get_tf": "?", "nn": "?", "tpu": "?", "contrib_module": "?"}


def test_accessors_of_a_star_import_with_a_computed_all_are_counted() -> None:
    """What the star import binds is not known: each access through it is NPU100's, counted
    (six through ``tf``, one through ``nn_lib``, ``contrib_module()``'s, two of ``tpu()``)."""
    facts, script = _star_of('\n__all__ = [name for name in dir() if not name.startswith("_")]\n')
    for mode in ("selective", "full"):
        outcome = engine_of_ids(frozenset(RULES), mode).process(script.encode(), "finetune.py", repo="repo",
                                                                facts=facts)
        assert not {"NPU011", "NPU012", "NPU013"} & {f.rule_id for f in outcome.findings}, mode
        assert sum(sites.sites for sites in outcome.api_sites if sites.status == "unknown") == 10, mode


#: A package that uses the accessors itself, imported the Python 2 way (``from compat import``:
#: its own ``compat``), in a repository with another ``compat`` module.
PACKAGE_SCRIPT = SCRIPT.replace('"""Fine-tunes', '"""Text models: fine-tunes').format(
    imports="from compat import contrib_module, get_tf, nn, tpu", lib="")


def test_a_packages_init_finds_accessors_from_its_own_folder() -> None:
    """``textlib/__init__.py``'s ``compat`` is ``textlib/compat.py``, as for any module of the
    package (it was looked up from the folder above, where two ``compat`` modules left it
    unresolved: no finding at all)."""
    facts = repository_facts({"textlib/__init__.py": PACKAGE_SCRIPT, "textlib/compat.py": COMPAT,
                              "tools/compat.py": COMPAT_TF2})
    assert_migrates(RULES, PACKAGE_SCRIPT, _migrated(PACKAGE_SCRIPT, ""), facts=facts, path="textlib/__init__.py",
                    findings=[("NPU001", 5, 0, "migrated"), ("NPU004", 29, 11, "migrated"),
                              ("NPU100", 31, 12, "unmigrated"), ("NPU007", 43, 9, "migrated"),
                              ("NPU010", 43, 9, "unmigrated"), ("NPU013", 49, 15, "migrated"),
                              ("NPU011", 50, 14, "migrated"), ("NPU012", 50, 14, "migrated")])


def test_a_package_assigning_either_of_two_modules_is_not_resolved_and_a_loop_ends() -> None:
    """``tpu = compat.tpu`` or ``compat_tf2.tpu``, whichever imports: not known (``?``, counted
    by NPU100). Packages that assign each other's accessor in a loop resolve to nothing."""
    either = ASSIGNING.replace("tpu = compat.tpu\n", "try:\n  tpu = compat.tpu\nexcept AttributeError:\n"
                               "  tpu = compat_tf2.tpu\n").replace(
        "from textlib import compat\n", "from textlib import compat, compat_tf2\n")
    facts = repository_facts({"textlib/__init__.py": either, "textlib/compat.py": COMPAT,
                              "textlib/compat_tf2.py": COMPAT_TF2})
    spelled = file_accessors("train.py", "import textlib\n", repository_accessors(facts),
                             reexported=accessor_reexports(facts))
    assert (spelled["textlib.tpu"], spelled["textlib.get_tf"]) == ("?", "tensorflow")
    loop = repository_facts({"textlib/__init__.py": "from textlib import models\n\nget_tf = models.get_tf\n",
                             "textlib/models/__init__.py": "import textlib\n\nget_tf = textlib.get_tf\n",
                             "textlib/compat.py": COMPAT})
    spelled = file_accessors("train.py", "import textlib\n", repository_accessors(loop),
                             reexported=accessor_reexports(loop))
    assert spelled == {}


def _passed_by_star(listed: str) -> dict[str, str]:
    """How ``import textlib`` spells the accessors where ``textlib/__init__.py`` star-imports
    ``textlib.compat``, whose ``__all__`` is ``listed`` (a line of the module): the names it
    passes on (not ``textlib.compat.*``, the module's own, which the import makes an attribute
    of the package)."""
    facts = repository_facts({"textlib/__init__.py": '"""Text models."""\nfrom .compat import *  # noqa: F403\n',
                              "textlib/compat.py": COMPAT + listed})
    spelled = file_accessors("train.py", "import textlib\n", repository_accessors(facts),
                             reexported=accessor_reexports(facts))
    return {name: target for name, target in spelled.items() if name.count(".") == 1}


def test_a_package_star_import_passes_on_what_the_modules_all_names() -> None:
    assert _passed_by_star('\n__all__ = ["get_tf", "nn"]\n') == {
        "textlib.get_tf": "tensorflow", "textlib.nn": "tensorflow.nn"}
    assert _passed_by_star("") == {"textlib.get_tf": "tensorflow", "textlib.nn": "tensorflow.nn",
                                   "textlib.tpu": "tensorflow.contrib.tpu", "textlib.contrib_module": "?"}
    assert set(_passed_by_star('\n__all__ = sorted(dir())\n').values()) == {"?"}
