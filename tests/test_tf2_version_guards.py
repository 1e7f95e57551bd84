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
    CONFLICT,
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


# --- a TF 1.x name in the branch TF 2.x never takes ------------------------------------------

TF1_BRANCHES = {
    "else": '''\
import tensorflow as tf


def lookup(features, columns):
    if tf.__version__ >= "2.0.0":
        return tf.compat.v1.feature_column.input_layer(features, columns)
    else:
        return tf.feature_column.input_layer(features, columns)
''',
    "after-return": '''\
import tensorflow as tf


def lookup(features, columns):
    if tf.__version__ >= '2.0.0':
        return tf.compat.v1.feature_column.input_layer(features, columns)
    return tf.feature_column.input_layer(features, columns)
''',
    "loose-version-below": '''\
from distutils.version import LooseVersion

import tensorflow as tf


def lookup(features, columns):
    if LooseVersion(tf.__version__) < LooseVersion("2.0"):
        return tf.feature_column.input_layer(features, columns)
    return tf.compat.v1.feature_column.input_layer(features, columns)
''',
    "major-equals-one": '''\
import tensorflow as tf

if int(tf.__version__.split(".")[0]) == 1:
    LOG = tf.log
else:
    LOG = tf.math.log
''',
    "reversed-comparison": '''\
import tensorflow as tf

LOG = tf.math.log if "2.0" <= tf.version.VERSION else tf.log
''',
    "try-tf1-first": '''\
import tensorflow as tf


def log(x):
    try:
        return tf.log(x)
    except AttributeError:
        return tf.math.log(x)
''',
    "try-tf2-first": '''\
import tensorflow as tf


def step():
    try:
        return tf.compat.v1.train.get_global_step()
    except (ImportError, AttributeError):
        return tf.train.get_global_step()
''',
}
TF1_NOT_GUARDED = {
    "tf1-name-in-the-tf2-branch": TF1_BRANCHES["else"].replace(
        "tf.compat.v1.feature_column.input_layer", "tf.feature_column.input_layer"),
    "a-threshold-inside-tf2": TF1_BRANCHES["else"].replace('"2.0.0"', '"2.4.0"'),
    "another-exception": TF1_BRANCHES["try-tf1-first"].replace("AttributeError", "ValueError"),
    "after-the-guarded-function": TF1_BRANCHES["after-return"] + "\n\ndef log(x):\n    return tf.log(x)\n",
}


@pytest.mark.parametrize("text", TF1_BRANCHES.values(), ids=TF1_BRANCHES.keys())
def test_a_tf1_name_in_the_branch_tf2_never_takes_is_no_t1_signal(text: str) -> None:
    """Regression (DeepCTR ``estimator/feature_column.py:11``, ``estimator/inputs.py:17``,
    ``models/sequence/dien.py:47``...): with the runtime TF 2.x, the TF 1.x spelling of a
    version test's other branch, or of an ``AttributeError`` fallback, made the file a
    ``conflict`` ("move it to tf.compat.v1...; nothing was rewritten"). The mirror of the
    version-guarded TF 2.x name: the module adapts to the version."""
    signals = signals_of(text, "lib/ops.py")
    assert signals.t1 is None and signals.t2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF_NEUTRAL


SESSION_FALLBACK = '''\
import tensorflow as tf


def initialise(model):
    try:
        tf.keras.backend.get_session().run(tf.global_variables_initializer())
    except AttributeError:
        tf.compat.v1.keras.backend.get_session().run(tf.compat.v1.global_variables_initializer())
    return model
'''


def test_a_compat_session_in_an_attribute_error_fallback_is_no_graph_signal() -> None:
    """Regression (DeepCTR ``models/sequence/dien.py:214-218``, re-exported by its package
    ``__init__``): the compat.v1 spelling in the ``except AttributeError`` of a version
    fallback made the module a compat.v1 graph file, and every TF 2.x program importing the
    package "mixed", with nothing rewritten. A session outside such a fallback is still C2."""
    signals = signals_of(SESSION_FALLBACK, "lib/models/rnn.py")
    assert signals.c2 is None and signals.t1 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF_NEUTRAL
    unguarded = SESSION_FALLBACK.replace("except AttributeError:", "except ValueError:")
    assert signals_of(unguarded, "lib/models/rnn.py").c2 is not None


@pytest.mark.parametrize("text", TF1_NOT_GUARDED.values(), ids=TF1_NOT_GUARDED.keys())
def test_a_tf1_name_tf2_may_run_is_still_t1(text: str) -> None:
    kind = file_kind(signals_of(text, "lib/ops.py"), RUNTIME_TF2)
    assert kind.kind == CONFLICT and kind.message.startswith("TF 1.x-only API tf.")


# --- a class only looked at ------------------------------------------------------------------

INTROSPECTIONS = {
    "dict": "NAMES = list(tf.compat.v1.train.Optimizer.__dict__.items())\n",
    "name": "NAME = tf.compat.v1.train.Saver.__name__\n",
    "getmembers": "import inspect\n\nNAMES = inspect.getmembers(tf.compat.v1.train.Optimizer)\n",
    "dir": "NAMES = dir(tf.compat.v1.layers.Dense)\n",
    "isinstance": "def graph_optimizer(opt):\n    return isinstance(opt, (tf.compat.v1.train.Optimizer, int))\n",
}


@pytest.mark.parametrize("text", INTROSPECTIONS.values(), ids=INTROSPECTIONS.keys())
def test_a_compat_class_only_looked_at_is_no_graph_signal(text: str) -> None:
    signals = signals_of("import tensorflow as tf\n\n" + text, "gendoc.py")
    assert signals.c2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF_NEUTRAL


def test_a_compat_class_built_or_subclassed_is_still_c2() -> None:
    text = "import tensorflow as tf\n\n\nclass Opt(tf.compat.v1.train.Optimizer):\n    pass\n"
    assert signals_of(text, "opt.py").c2 is not None
    assert signals_of(text.replace("pass", "NAME = tf.compat.v1.Session().__class__"), "opt.py").c2 is not None


GEN_DOC = '''\
import tensorflow as tf

from pkg import train


def hidden():
    return list(tf.compat.v1.train.Optimizer.__dict__.items()) + dir(tf.keras.layers.Layer)


if __name__ == "__main__":
    print(hidden(), train.__doc__)
'''
RUN = '''\
import tensorflow as tf

from pkg.train import fit

if __name__ == "__main__":
    fit(tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))]), [[1.0]])
'''
PKG_TRAIN = '''\
import tensorflow as tf

from pkg.data import make
from pkg.ops import log


@tf.function
def step(model, opt, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(log(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


def fit(model, xs):
    opt = tf.keras.optimizers.SGD()
    for x in make(xs, 4):
        step(model, opt, x)
'''
PKG_DATA = '''\
import tensorflow as tf


def make(xs, n):
    return tf.data.Dataset.from_tensor_slices(xs).repeat().batch(n)
'''


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_doc_generators_and_version_adaptive_helpers_leave_a_tf2_program_whole(tmp_path: Path, engine: str) -> None:
    """Regression (tensorflow/similarity ``scripts/gen_api_doc.py:123``; DeepCTR, rvh P8): the
    doc generator's ``tf.compat.v1.train.Optimizer.__dict__`` made it a compat.v1 graph file and
    every module it imports was refused as "part of a program that mixes..."; the helper's
    ``try: tf.log(x) except AttributeError:`` made it a ``conflict``. Now the pipeline gets
    ``drop_remainder``, the trainer the device init, and nothing is refused; the doc generator
    calls no training (review round M3), so it is reported, not given the init."""
    repo = make_repo(tmp_path / "sim", {
        "requirements.txt": "tensorflow==2.6.5\n", "gendoc.py": GEN_DOC, "run.py": RUN,
        "pkg/__init__.py": "", "pkg/train.py": PKG_TRAIN, "pkg/data.py": PKG_DATA,
        "pkg/ops.py": TF1_BRANCHES["try-tf1-first"] + "\n\n" + TF1_BRANCHES["after-return"].partition("\n\n\n")[2]})
    (tmp_path / "repos.txt").write_text("sim\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("gendoc.py", "NPU061", "unmigrated"), ("pkg/data.py", "NPU064", "migrated"),
        ("pkg/ops.py", "NPU071", "unmigrated"), ("run.py", "NPU061", "migrated")]
    assert "conflict" not in record["file_kinds"] and "tf2-compat" not in record["file_kinds"]
    assert "drop_remainder=True" in show(repo, BRANCH, "pkg/data.py").decode()
