"""NPU053 nccl-collectives and NPU054 custom-op-library: code that needs NVIDIA's kernels.

The audit cannot see them: Ascend's list does not name NCCL's ops (``unknown``) and marks
``tf.load_op_library`` supported. A GAN's hand-written multi-GPU towers summed with NCCL and its
CUDA custom ops (StyleGAN/StyleGAN2's shape) left a repository ``ready`` in silence."""

from __future__ import annotations

import json

import pytest

from npu_codemod.testing import assert_reports

from support.cli import cli
from support.git import make_repo
from support.rules import messages

RULES = {"NPU053", "NPU054"}

OPTIMIZER = '''\
"""Multi-GPU optimizer: one tower per GPU, gradients summed across the towers with NCCL."""
from collections import OrderedDict

import tensorflow as tf

try:
    from tensorflow.python.ops import nccl_ops
except ImportError:
    import tensorflow.contrib.nccl as nccl_ops


class Optimizer:
    def __init__(self, name, learning_rate=0.001):
        self.name = name
        self.learning_rate = learning_rate
        self._dev_grads = OrderedDict()

    def apply_updates(self):
        devices = list(self._dev_grads.keys())
        if len(devices) > 1:
            for all_vars in zip(*self._dev_grads.values()):
                summed = nccl_ops.all_sum(all_vars)
                for device, grad in zip(devices, summed):
                    self._dev_grads[device] = grad
        return tf.group(*self._dev_grads.values())
'''

CUSTOM_OPS = '''\
"""Fused bias + activation with a CUDA kernel built on first use, or the reference graph."""
import os

import tensorflow as tf


def _get_plugin():
    return tf.load_op_library(os.path.join(os.path.dirname(__file__), "fused_bias_act.so"))


def fused_bias_act(x, b, impl="cuda"):
    if impl == "cuda":
        return _get_plugin().fused_bias_act(x=x, b=b)
    return tf.nn.leaky_relu(x + b)
'''


def test_nccl_towers_are_reported_with_the_npus_collectives() -> None:
    findings = assert_reports(RULES, OPTIMIZER, findings=[("NPU053", 22, 25, "unmigrated")])
    assert messages(findings, "NPU053")[0].startswith(
        "nccl_ops.all_sum(...): NCCL collectives have no NPU kernel: sum the towers' gradients "
        "with the NPU's collectives (HCCL")


def test_a_custom_operator_library_is_reported() -> None:
    findings = assert_reports(RULES, CUSTOM_OPS, findings=[("NPU054", 8, 11, "unmigrated")])
    assert "CUDA kernels it registers do not run on the NPU" in messages(findings, "NPU054")[0]


@pytest.mark.parametrize("source, rule, column", [
    ("import tensorflow as tf\n\ns = tf.contrib.nccl.all_sum(grads)\n", "NPU053", 4),
    ("from tensorflow.contrib import nccl\n\ns = nccl.reduce_sum(grads)\n", "NPU053", 4),
    ("import tensorflow as tf\n\ns = tf.raw_ops.NcclAllReduce(input=g, reduction='sum', num_devices=2, "
     "shared_name='x')\n", "NPU053", 4),
    ("import tensorflow as tf\n\nops = tf.compat.v1.load_op_library('ops.so')\n", "NPU054", 6),
])
def test_every_spelling_is_reported(source: str, rule: str, column: int) -> None:
    assert_reports(RULES, source, findings=[(rule, 3, column, "unmigrated")])


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\n\nops = load_op_library('ops.so')\n",  # not TensorFlow's
    "import tensorflow as tf\n\nstrategy = tf.distribute.MirroredStrategy()\n",
    "import tensorflow as tf\n\nname = tf.load_op_library\n",  # not called: nothing loaded here
])
def test_what_needs_no_nvidia_kernel_is_left_alone(source: str) -> None:
    assert_reports(RULES, source, findings=[])


def test_a_repository_with_nccl_towers_is_not_ready(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI: the sites are left work, and the verdict says so."""
    make_repo(tmp_path / "gan", {"dnnlib/optimizer.py": OPTIMIZER, "dnnlib/custom_ops.py": CUSTOM_OPS})
    (tmp_path / "repos.txt").write_text("gan\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "out", "--no-progress", "--no-cache",
        cwd=tmp_path, expect=0)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    [repo] = record["repos"]
    ours = sorted((f["rule_id"], f["path"], f["line"]) for f in repo["findings"]
                  if f["rule_id"] in RULES)
    assert ours == [("NPU053", "dnnlib/optimizer.py", 22), ("NPU054", "dnnlib/custom_ops.py", 8)]
    assert repo["verdict"] != "ready"
