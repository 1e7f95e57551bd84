"""A name imported from a repository module that binds it to TensorFlow (tensorpack's
``from ..compat import tfv1 as tf``, ``tfv1 = tf.compat.v1``) resolves as TensorFlow in a file
that also imports TensorFlow itself (``codemods/tf_aliases``): its ``tf.Session`` is NPU007's.
Before, the file got no finding at all (the named-alias NPU000 covers only files that import
no TensorFlow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_aliases import alias_facts, file_aliases, repository_aliases
from npu_codemod.testing import assert_migrates

from support.cli import cli, repo_record
from support.git import make_repo

COMPAT = '''import tensorflow as tf

if tf.__version__.startswith("2"):
    tfv1 = tf.compat.v1
else:
    tfv1 = tf
'''
SESSCREATE = '''from ..compat import tfv1 as tf


def create_session():
    config = tf.ConfigProto(allow_soft_placement=True)
    sess = tf.Session(config=config)
    return sess


def backward_ops(ops):
    from tensorflow.python.ops.op_selector import get_backward_walk_ops
    return get_backward_walk_ops(ops)
'''
MIGRATED = '''from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig
from ..compat import tfv1 as tf


def create_session():
    config = tf.ConfigProto(allow_soft_placement=True)
    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()
    custom_op.name = "NpuOptimizer"
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF
    sess = tf.Session(config=config)
    return sess


def backward_ops(ops):
    from tensorflow.python.ops.op_selector import get_backward_walk_ops
    return get_backward_walk_ops(ops)
'''
FACT = "tf-alias:mylib.compat.tfv1=tensorflow.compat.v1"


def test_a_module_s_tf_like_assignments_and_re_exports_are_facts() -> None:
    assert alias_facts("mylib/compat/__init__.py", COMPAT) == {FACT}
    assert alias_facts("mylib/__init__.py", "from .compat import tfv1\n") == {
        "tf-alias:mylib.tfv1=@mylib.compat.tfv1"}
    assert alias_facts("lib.py", "import numpy as np\ntfv1 = np.float32\nact = np.tanh\n") == set()


def test_re_exports_are_followed_and_the_file_s_imported_names_resolved() -> None:
    aliases = repository_aliases(frozenset({FACT, "tf-alias:mylib.tfv1=@mylib.compat.tfv1"}))
    assert aliases == {"mylib.compat.tfv1": "tensorflow.compat.v1", "mylib.tfv1": "tensorflow.compat.v1"}
    imported = {"tf": "mylib.tfv1", "np": "numpy", "get_backward_walk_ops": "tensorflow.python.ops.x"}
    assert file_aliases("examples/train.py", aliases, imported) == {"tf": "tensorflow.compat.v1"}


def test_a_session_through_the_repository_alias_gets_the_npu_config() -> None:
    """tensorpack ``tfutils/sesscreate.py``: the file imports TensorFlow only in a function."""
    assert_migrates(["NPU007"], SESSCREATE, MIGRATED, facts={FACT}, path="mylib/tfutils/sesscreate.py",
                    findings=[("NPU007", 6, 11, "migrated")])


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_repository_file_with_the_alias_and_a_local_tf_import_is_migrated(tmp_path: Path, engine: str) -> None:
    make_repo(tmp_path / "alias", {"mylib/__init__.py": "", "mylib/compat/__init__.py": COMPAT,
                                   "mylib/tfutils/__init__.py": "", "mylib/tfutils/sesscreate.py": SESSCREATE})
    (tmp_path / "repos.txt").write_text("alias\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert ("mylib/tfutils/sesscreate.py", 6, "NPU007", "migrated") in [
        (f["path"], f["line"], f["rule_id"], f["status"]) for f in record["findings"]]
