"""TF 2.x detection on real-code review findings (``spec/rules-tf2.md``, "Detecting TF 2.x files"):

- a TF 2.x-only name or idiom in code a version test guards (tensorpack's ``train/tower.py``:
  ``if is_tfv2() and isinstance(opt, tf.optimizers.Optimizer): ... else:
  opt.compute_gradients(...)``) is version-adaptive library code, no T2/E signal: it makes no
  module eager, and no TF 1.x program importing it mixed or a TF 2.x one;
- a Keras model kept on an attribute of an imported module (DeepLearningZeroToAll's
  ``tf.model = tf.keras.Sequential(); tf.model.fit(...)``) is the file's own model: its
  module-level training makes the script an entry (NPU061), and NPU067 follows it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.module_training import trains_when_run
from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.tf_versions import (
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    TF2,
    TF_NEUTRAL,
    file_kind,
    signals_of,
)

from support.cli import cli, repo_record
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
DEVICE_INIT = "import npu_device as npu\nnpu.open().as_default()\n"

# --- a TF 2.x name under a version guard -----------------------------------------------------

COMPAT = '''\
import tensorflow as tf


def is_tfv2():
    try:
        from tensorflow.python import tf2
        return tf2.enabled()
    except Exception:
        return False


tfv1 = tf.compat.v1
'''
TOWER = '''\
import tensorflow as tf

from .compat import tfv1, is_tfv2


def compute_grads(opt, cost):
    varlist = tfv1.trainable_variables()
    if is_tfv2() and isinstance(opt, tf.optimizers.Optimizer):
        grads = opt.get_gradients(cost, varlist)
        return list(zip(grads, varlist))
    return opt.compute_gradients(cost, var_list=varlist)
'''
TOWER_UNGUARDED = TOWER.replace("is_tfv2() and isinstance", "isinstance")
GUARDS = {
    "is-tfv2-call": TOWER,
    "version-prefix": TOWER.replace("is_tfv2() and", 'tf.__version__.startswith("2") and'),
    "loose-version": TOWER.replace("is_tfv2() and", 'LooseVersion(tf.__version__) >= LooseVersion("2.0") and'),
    "version-constant": TOWER.replace("is_tfv2() and", "tf.version.VERSION >= '2' and"),
    "executing-eagerly": TOWER.replace("is_tfv2() and", "tf.executing_eagerly() and"),
    "tf2-constant": TOWER.replace("is_tfv2() and", "TF2 and"),
    "tf2-enabled": TOWER.replace("is_tfv2() and", "tf2_enabled() and"),
    "conditional-expression": '''\
import tensorflow as tf

from .compat import is_tf2

OPTIMIZER = tf.optimizers.SGD if is_tf2() else tf.keras.optimizers.SGD
''',
    "guarded-tape": '''\
import tensorflow as tf

from .compat import is_tfv2


def gradients(loss_fn, variables):
    if is_tfv2():
        with tf.GradientTape() as tape:
            loss = loss_fn()
        return tape.gradient(loss, variables)
    return tf.gradients(loss_fn(), variables)
''',
}
TRAIN_GRAPH = '''\
import tensorflow as tf
from mylib import compute_grads

x = tf.placeholder(tf.float32, [None, 1])
w = tf.Variable(1.0)
opt = tf.train.GradientDescentOptimizer(0.1)
train_op = opt.apply_gradients(compute_grads(opt, tf.reduce_sum(w * x)))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train_op, {x: [[1.0]]})
'''
TRAIN_STAR = '''\
import tensorflow as tf
from mylib import *


def build(x, opt):
    q = tf.identity(tf.reduce_mean(x, 1), name="q")
    return opt.apply_gradients(compute_grads(opt, tf.reduce_sum(q)))


if __name__ == "__main__":
    print(build)
'''


@pytest.mark.parametrize("text", GUARDS.values(), ids=GUARDS.keys())
def test_a_tf2_name_under_a_version_guard_is_no_eager_signal(text: str) -> None:
    signals = signals_of(text, "mylib/tower.py")
    assert signals.t2 is None and signals.e is None
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == TF_NEUTRAL


def test_an_unguarded_tf2_name_is_still_t2() -> None:
    signals = signals_of(TOWER_UNGUARDED, "mylib/tower.py")
    assert signals.t2 is not None and signals.t2.spelled == "tf.optimizers.Optimizer"
    assert file_kind(signals, RUNTIME_TF2).kind == TF2


def test_a_guard_elsewhere_in_the_file_guards_nothing_else() -> None:
    text = TOWER + "\n\ndef seed():\n    tf.random.set_seed(1)\n"
    assert signals_of(text, "mylib/tower.py").t2 is not None


def _tensorpack_like(tmp_path: Path, tower: str) -> Path:
    return make_repo(tmp_path / "tp", {
        "mylib/__init__.py": "from .compat import tfv1, is_tfv2\nfrom .tower import compute_grads\n",
        "mylib/compat.py": COMPAT, "mylib/tower.py": tower,
        "train_graph.py": TRAIN_GRAPH, "train_dqn.py": TRAIN_STAR})


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_tf1_programs_importing_version_adaptive_library_code_stay_tf1(tmp_path: Path, engine: str) -> None:
    """Regression (tensorpack ``train/tower.py:263``): the guarded ``tf.optimizers.Optimizer``
    made the library ``tf2``, 92 TF 1.x programs were refused as mixed and TF 1.x graph scripts
    got the eager device init while their sessions stayed unconfigured."""
    repo = _tensorpack_like(tmp_path, TOWER)
    (tmp_path / "repos.txt").write_text("tp\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train_graph.py", "NPU007", "migrated")]
    assert "tf2" not in record["file_kinds"]
    assert not show(repo, BRANCH, "train_dqn.py").decode().startswith(DEVICE_INIT)
    assert "NpuOptimizer" in show(repo, BRANCH, "train_graph.py").decode()


# --- a model kept on the tf module -----------------------------------------------------------

TF_MODEL = '''\
import numpy as np
import tensorflow as tf

x = np.random.rand(64, 4)
y = np.random.rand(64, 1)
tf.model = tf.keras.Sequential()
tf.model.add(tf.keras.layers.Dense(units=8, input_dim=4, activation="relu"))
tf.model.add(tf.keras.layers.Dense(units=1))
tf.model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.1))
tf.model.fit(x, y, epochs=2)
'''
LIBRARY_CALL = '''\
import re

PATTERN = re.compile("a+")
'''


@pytest.mark.parametrize("text, trains", [
    (TF_MODEL, True),
    (TF_MODEL.replace("tf.model", "model"), True),
    (LIBRARY_CALL, False),
    ("import scipy.optimize as opt\n\nopt.minimize(abs, 1.0)\n", False),
    ("import keras\n\nkeras.other = 1\nkeras.models.fit(None)\n", False),
], ids=["tf-attribute", "name", "re-compile", "scipy-minimize", "other-attribute-stored"])
def test_a_model_stored_on_an_imported_module_trains_when_run(text: str, trains: bool) -> None:
    tree = module_ast(text)
    assert tree is not None and trains_when_run(tree) is trains


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_script_training_tf_model_gets_the_device_init(tmp_path: Path, engine: str) -> None:
    """Regression (DeepLearningZeroToAll ``tf2/*.py``): no finding at all, while the same script
    with ``model = ...`` got NPU061."""
    repo = make_repo(tmp_path / "zero", {"requirements.txt": "tensorflow>=2.4\n", "train.py": TF_MODEL})
    (tmp_path / "repos.txt").write_text("zero\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train.py", "NPU061", "migrated")]
    assert show(repo, BRANCH, "train.py").decode() == DEVICE_INIT + TF_MODEL


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_distributed_tf_model_gets_the_init_and_its_broadcast(tmp_path: Path, engine: str) -> None:
    """Regression: with ``tf2-distributed`` NPU068 wrapped the optimizer but NPU061 added no
    ``npu.open()`` and NPU067 reported no broadcast: a half migration."""
    make_repo(tmp_path / "zero", {"requirements.txt": "tensorflow>=2.4\n", "train.py": TF_MODEL})
    (tmp_path / "repos.txt").write_text("zero\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        "--rules", "default,tf2-distributed", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["line"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train.py", 1, "NPU061", "migrated"), ("train.py", 6, "NPU067", "unmigrated"),
        ("train.py", 9, "NPU068", "migrated")]
    broadcast = next(f for f in record["findings"] if f["rule_id"] == "NPU067")
    assert broadcast["message"].startswith("variables are created lazily: call "
                                           "npu.distribute.broadcast(tf.model.trainable_variables)")
