"""Files that are not sess.run training code: test files (by path) and eager-mode files.

Test files are left out by the run, ``scan`` and ``check`` (see test_skipped_files_cli.py);
an eager-mode file gets one file-level ``NPU000`` finding and no rule rewrites it.
"""

from __future__ import annotations

import json

import pytest

from npu_codemod.codemods.file_kinds import EAGER, is_test_file, notebook_uses_tensorflow

from support.rules import assert_migrates, assert_unchanged, sites

EAGER_TRAIN = '''\
"""Eager-mode MNIST: gradients with tf.GradientTape, no graph, no session."""
from __future__ import print_function

import tensorflow as tf

tf.enable_eager_execution()


def loss(model, images, labels):
    logits = model(images, training=True)
    return tf.losses.sparse_softmax_cross_entropy(labels, logits)


def train(model, dataset, optimizer):
    for images, labels in dataset.batch(64):
        with tf.GradientTape() as tape:
            value = loss(model, tf.nn.dropout(images, rate=0.1), labels)
        grads = tape.gradient(value, model.variables)
        optimizer.apply_gradients(zip(grads, model.variables))
'''


@pytest.mark.parametrize("path", [
    "test_model.py", "model_test.py", "conftest.py", "tests/helpers.py", "test/data.py",
    "src/tests/unit/test_io.py", "src/pkg/tests/fixtures/sample_graph.py", "nmt/utils/vocab_test.py",
    "tests\\windows_style.py", "test_utils.py", "nmt/utils/tests_utils.py", "testing_utils.py",
    "official/utils/estimator_test_utils.py", "seq2seq/decoder_testing.py",
])
def test_test_files_by_the_pytest_and_unittest_conventions(path: str) -> None:
    assert is_test_file(path)


@pytest.mark.parametrize("path", [
    "train.py", "testing.py", "contest.py", "latest_model.py", "test.py", "tests.py",
    "attest_utils.py", "testdata/train.py", "my_tests/train.py", "protest/test.py.txt",
    "test_utils.txt", "utils_testing.txt", "latest_utils.py", "backtesting.py",
])
def test_other_files_are_not_test_files(path: str) -> None:
    assert not is_test_file(path)


def test_an_eager_file_gets_one_file_finding_and_no_rewrite() -> None:
    findings = assert_unchanged(EAGER_TRAIN)
    assert sites(findings) == [("NPU000", 6, 0, "unmigrated")]
    assert findings[0].rule_name == "source-file"
    assert findings[0].message == EAGER.format(call="tf.enable_eager_execution()") == (
        "eager execution is enabled (tf.enable_eager_execution()): this file is not sess.run "
        "code and no rule rewrote it; Ascend's API list marks eager execution unsupported: port "
        "the file to graph mode (tf.Session and sess.run) or Keras by hand")


@pytest.mark.parametrize("imports, call, column", [
    ("import tensorflow as tf", "tf.compat.v1.enable_eager_execution()", 4),
    ("import tensorflow.compat.v1 as tf", "tf.enable_eager_execution()", 4),
    ("import tensorflow.compat.v1 as tf", "tf.enable_v2_behavior()", 4),
    ("import tensorflow as tf", "tf.compat.v1.enable_v2_behavior()", 4),
    ("from tensorflow.compat.v1 import enable_eager_execution", "enable_eager_execution()", 4),
    ("from tensorflow.compat.v1 import enable_eager_execution as eager", "eager()", 4),
    ("import tensorflow.contrib.eager as tfe", "tfe.enable_eager_execution()", 4),
    ("from tensorflow.python.framework import ops", "ops.enable_eager_execution()", 4),
])
def test_every_spelling_of_enabling_eager_execution(imports: str, call: str, column: int) -> None:
    source = (f"{imports}\nimport tensorflow as tf_graph\n\n\nif __name__ == '__main__':\n"
              f"    {call}\n    ds = tf_graph.data.Dataset.range(10).batch(2)\n")
    findings = assert_unchanged(source)
    assert sites(findings) == [("NPU000", 6, column, "unmigrated")]
    assert f"eager execution is enabled ({call})" in findings[0].message


def test_graph_mode_files_that_mention_eager_are_migrated() -> None:
    before = '''\
import tensorflow as tf

tf.compat.v1.disable_eager_execution()
tf.disable_v2_behavior()
# tf.enable_eager_execution() is left off: the model builds a graph
EAGER_FLAG = "enable_eager_execution"


def build(images, keep_prob, executing_eagerly=tf.executing_eagerly):
    hidden = tf.layers.dense(images, 512)
    return tf.nn.dropout(hidden, keep_prob)
'''
    after = "from npu_bridge.npu_init import *\n" + before.replace(
        "tf.nn.dropout(hidden", "npu_ops.dropout(hidden")
    findings = assert_migrates(before, after, rule_ids={"NPU001", "NPU004"})
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU004", 11, 11, "migrated")]


def test_enable_eager_execution_of_another_library_is_not_tensorflows() -> None:
    before = '''\
import tensorflow as tf
import mxnet_compat as mx

mx.enable_eager_execution()
h = tf.nn.dropout(x, 0.5)
'''
    after = "from npu_bridge.npu_init import *\n" + before.replace("tf.nn.dropout", "npu_ops.dropout")
    findings = assert_migrates(before, after, rule_ids={"NPU001", "NPU004"})
    assert sites(findings) == [("NPU001", 1, 0, "migrated"), ("NPU004", 5, 4, "migrated")]


def _notebook(*code: str, nbformat: int = 4) -> bytes:
    cells = [{"cell_type": "markdown", "source": ["Uses `import tensorflow` in prose only.\n"]}]
    cells += [{"cell_type": "code", "source": text.splitlines(keepends=True)} for text in code]
    if nbformat == 3:
        for cell in cells:
            cell["input"] = cell.pop("source")
        return json.dumps({"worksheets": [{"cells": cells}], "nbformat": 3}).encode()
    return json.dumps({"cells": cells, "nbformat": 4}).encode()


@pytest.mark.parametrize("notebook", [
    _notebook("import numpy as np\nimport tensorflow as tf\n"),
    _notebook("x = 1", "from tensorflow.contrib import slim"),
    _notebook("  import tensorflow.compat.v1 as tf  # indented in a try"),
    _notebook("!pip install -q tensorflow==1.13.1\n", "from seqlib import problems"),
    _notebook("%tensorflow_version 1.x\nimport seqlib"),
    _notebook("import tensorflow as tf", nbformat=3),
    b'{"cells": [{"cell_type": "code", "source": "import tensorflow as tf"',  # cut short
])
def test_notebooks_that_use_tensorflow(notebook: bytes) -> None:
    assert notebook_uses_tensorflow(notebook)


@pytest.mark.parametrize("notebook", [
    _notebook("import pandas as pd\nframe = pd.read_csv('log.csv')"),
    _notebook("# import tensorflow as tf\nprint('import tensorflow')"),
    _notebook("!pip install -q tensorflow_probability==0.6.0"),
    _notebook("import tensorflowjs_converter"),
    b"not json at all",
])
def test_notebooks_that_do_not(notebook: bytes) -> None:
    assert not notebook_uses_tensorflow(notebook)
