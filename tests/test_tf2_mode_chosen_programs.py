"""Programs of real TF 2.x repositories that NPU061 got wrong (``spec/rules-tf2.md``, "Detecting
TF 2.x files" and NPU061):

- a package imported as such runs its ``__init__`` alone: keras-retinanet's ``bin`` scripts
  bootstrap ``sys.path`` with ``import keras_retinanet.bin`` (an empty ``__init__``), which
  reaches none of the package's training modules, so ``convert_model.py`` is no entry;
- ``tf.compat.v1`` graph code that runs only when TensorFlow does not execute eagerly
  (TF-Agents' ``tf_agent.py``), or a ``disable_v2_behavior()`` in a function's branch on a
  version its caller passes (Model Maker's ``setup_tf_behavior(tf_version=2)``), is no C1/C2
  signal: it switches no eager program to graph mode, so no program importing it is mixed;
- a ``__main__`` script that imports no TensorFlow but trains a Keras model a module of the
  repository builds (``models.build()``) is the program's entry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_versions import RUNTIME_TF2, TF2_COMPAT, TF_NEUTRAL, file_kind, signals_of

from support.cli import check_lines, cli, repo_record
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
PINS = "tensorflow>=2.4\n"
INIT_ADDED = "NPU061 [fixable] add 'import npu_device as npu' and 'npu.open().as_default()'"
NO_TRAINING = "NPU061 TF 2.x script without training code"
MAIN_LINE = 'if __name__ == "__main__":\n    main()'

# --- a package imported as such --------------------------------------------------------------

BOOTSTRAP = '''\
import os
import sys

if __name__ == "__main__" and __package__ is None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    import zoo.bin  # noqa: F401
    __package__ = "zoo.bin"
'''
CONVERT = BOOTSTRAP + '''
import tensorflow as tf

from .. import nets


def main():
    model = nets.build()
    tf.keras.models.save_model(model, sys.argv[1])


if __name__ == "__main__":
    main()
'''
TRAIN = BOOTSTRAP + '''
from .. import nets


def main():
    model = nets.build()
    model.compile(optimizer="adam", loss="mse")
    model.fit([[0.0] * 4], [0.0])


if __name__ == "__main__":
    main()
'''
#: The line of the converter's own ``__main__`` block (the bootstrap's comes first).
CONVERT_MAIN = CONVERT[:CONVERT.rindex(MAIN_LINE)].count("\n") + 1
NETS = '''\
import tensorflow as tf


def build():
    inputs = tf.keras.Input((4,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
'''


@pytest.mark.parametrize("init", ["", '"""The zoo."""\n'], ids=["empty-init", "docstring-init"])
def test_importing_a_package_reaches_none_of_its_sibling_training_modules(tmp_path: Path, init: str) -> None:
    """Regression (fizyr/keras-retinanet ``bin/convert_model.py``): ``import zoo.bin`` counted
    ``bin/train.py`` as the converter's closure, and the converter got the device init."""
    make_repo(tmp_path / "zoo", {"requirements.txt": PINS, "zoo/__init__.py": init, "zoo/bin/__init__.py": init,
                                 "zoo/nets.py": NETS, "zoo/bin/convert.py": CONVERT, "zoo/bin/train.py": TRAIN})
    lines = check_lines(tmp_path, "zoo", expect=1)
    device_init = [line for line in lines if "NPU061" in line]
    assert len(device_init) == 2, lines
    assert device_init[0].startswith(f"zoo/zoo/bin/convert.py:{CONVERT_MAIN}:1: {NO_TRAINING}: ")
    assert device_init[1].startswith(f"zoo/zoo/bin/train.py:1:1: {INIT_ADDED} at the top of the entry script")


def test_a_package_whose_init_imports_a_trainer_still_reaches_it(tmp_path: Path) -> None:
    """An ``__init__`` that imports a module runs it: the package's importer reaches it."""
    launcher = "import trainer_pkg\n\nif __name__ == \"__main__\":\n    trainer_pkg.train()\n"
    trainer = NETS + "\n\ndef train():\n    model = build()\n    model.compile(optimizer='adam', loss='mse')\n"
    make_repo(tmp_path / "pkg", {"requirements.txt": PINS, "trainer_pkg/__init__.py": "from .core import train\n",
                                 "trainer_pkg/core.py": trainer, "main.py": launcher})
    lines = check_lines(tmp_path, "pkg", expect=1)
    assert f"pkg/main.py:1:1: {INIT_ADDED} at the top of the entry script" in lines


# --- graph code the mode chooses -------------------------------------------------------------

AGENT = '''\
import tensorflow as tf


class Agent(object):

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def initialize(self):
        if not tf.executing_eagerly():
            return tf.compat.v1.get_default_graph().get_operations()[-1]
        return None
'''
AGENT_ELSE = AGENT.replace('''        if not tf.executing_eagerly():
            return tf.compat.v1.get_default_graph().get_operations()[-1]
        return None''', '''        if tf.executing_eagerly():
            return None
        else:
            return tf.compat.v1.get_default_graph().get_operations()[-1]''')
AGENT_EARLY = AGENT.replace('''        if not tf.executing_eagerly():
            return tf.compat.v1.get_default_graph().get_operations()[-1]
        return None''', '''        if tf.executing_eagerly():
            return None
        for op in tf.compat.v1.get_default_graph().get_operations():
            return op''')
AGENT_SESSION = AGENT.replace('''    def initialize(self):
        if not tf.executing_eagerly():
            return tf.compat.v1.get_default_graph().get_operations()[-1]
        return None''', '''    def initialize(self, ds):
        if tf.executing_eagerly():
            return [x for x in ds.as_numpy_iterator()]
        else:
            it = tf.compat.v1.data.make_one_shot_iterator(ds)
            with tf.compat.v1.Session() as sess:
                return [sess.run(it.get_next())]''')
AGENT_UNGUARDED = AGENT.replace("        if not tf.executing_eagerly():\n    ", "")
BEHAVIOUR = '''\
import tensorflow as tf

_behavior = 2


def setup_tf_behavior(tf_version=2):
    global _behavior
    if tf_version == 1:
        tf.compat.v1.disable_v2_behavior()
    else:
        tf.compat.v2.enable_v2_behavior()
    _behavior = tf_version
'''
MODULE_SWITCH = '''\
import tensorflow as tf

if tf.__version__.startswith("2"):
    tf.compat.v1.disable_v2_behavior()
'''
AGENT_TRAIN = '''\
import tensorflow as tf

from agent import Agent


@tf.function
def train_step(agent, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(agent.model(x) - y))
    grads = tape.gradient(loss, agent.model.trainable_variables)
    agent.optimizer.apply_gradients(zip(grads, agent.model.trainable_variables))
    return loss


def main():
    agent = Agent(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.optimizers.Adam())
    agent.initialize()
    train_step(agent, tf.zeros((4, 2)), tf.zeros((4, 1)))


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("text, kind", [(AGENT, TF_NEUTRAL), (AGENT_ELSE, TF_NEUTRAL), (AGENT_EARLY, TF_NEUTRAL),
                                        (BEHAVIOUR, TF_NEUTRAL)],
                         ids=["not-eager-body", "eager-else", "after-eager-return", "version-parameter"])
def test_graph_code_the_mode_chooses_is_no_compat_signal(text: str, kind: str) -> None:
    """The version-parameter file's ``enable_v2_behavior()`` is in the ``else`` of a version
    test too: no E signal either (version-adaptive code, ``test_tf2_version_guards``)."""
    signals = signals_of(text, "lib.py")
    assert signals.c1 is None and signals.c2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == kind


@pytest.mark.parametrize("text, signal", [(AGENT_UNGUARDED, "c2"), (MODULE_SWITCH, "c1")],
                         ids=["unguarded", "module-level-version-switch"])
def test_graph_code_that_always_runs_is_still_a_compat_signal(text: str, signal: str) -> None:
    """``if tf.__version__.startswith("2"): disable_v2_behavior()`` switches every TF 2.x
    process: TF 1.x code run on TF 2.x, as before."""
    signals = signals_of(text, "lib.py")
    assert getattr(signals, signal) is not None
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT


@pytest.mark.parametrize("agent", [AGENT, AGENT_ELSE, AGENT_EARLY],
                         ids=["not-eager-body", "eager-else", "after-eager-return"])
def test_a_program_importing_version_adaptive_graph_code_is_not_mixed(tmp_path: Path, agent: str) -> None:
    """Regression (tensorflow/agents ``tf_agent.py``): every TF-Agents training program was
    refused as mixed, and none got the device init."""
    repo = make_repo(tmp_path / "agents", {"requirements.txt": PINS, "agent.py": agent, "train.py": AGENT_TRAIN})
    (tmp_path / "repos.txt").write_text("agents\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert not [f for f in record["findings"] if "mixes" in f["message"] or "mixed" in f["message"]]
    assert show(repo, BRANCH, "train.py").decode().startswith("import npu_device as npu\nnpu.open().as_default()\n")


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_session_in_graph_only_code_of_an_eager_library_is_no_site_left(tmp_path: Path, engine: str) -> None:
    """Regression (tensorflow/examples Model Maker ``data_util.py``): the ``tf.compat.v1.Session``
    of the ``else`` of ``if tf.executing_eagerly():`` was an NPU071 miss, a site left."""
    script = AGENT_TRAIN.replace("agent.initialize()", "agent.initialize(tf.data.Dataset.range(3))")
    make_repo(tmp_path / "agents", {"requirements.txt": PINS, "agent.py": AGENT_SESSION, "train.py": script})
    (tmp_path / "repos.txt").write_text("agents\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train.py", "NPU061", "migrated")]
    assert record["verdict"] == "ready"


def test_a_program_of_a_caller_chosen_behaviour_is_not_mixed(tmp_path: Path) -> None:
    """Regression (tensorflow/examples Model Maker ``core/compat.py``)."""
    script = AGENT_TRAIN.replace("from agent import Agent\n", "from agent import Agent\nimport compat\n") \
        .replace("def main():\n", "def main():\n    compat.setup_tf_behavior(2)\n")
    make_repo(tmp_path / "mm", {"requirements.txt": PINS, "agent.py": AGENT, "compat.py": BEHAVIOUR,
                                "train.py": script})
    lines = check_lines(tmp_path, "mm", expect=1)
    assert not [line for line in lines if "mixes" in line or "mixed" in line], lines
    assert f"mm/train.py:1:1: {INIT_ADDED} at the top of the entry script" in lines


def test_a_program_importing_unguarded_graph_code_is_still_mixed(tmp_path: Path) -> None:
    make_repo(tmp_path / "agents", {"requirements.txt": PINS, "agent.py": AGENT_UNGUARDED, "train.py": AGENT_TRAIN})
    lines = check_lines(tmp_path, "agents", expect=1)
    assert any("agents/train.py:1:1: NPU061 this program mixes eager TF 2.x files" in line for line in lines)


# --- a script that imports no TensorFlow ---------------------------------------------------

KERAS_SCRIPT = '''\
import numpy as np

import nets


def main():
    model = nets.build()
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=2)


if __name__ == "__main__":
    main()
'''
OTHER_SCRIPT = '''\
import numpy as np

import features


def main():
    scaler = features.scaler()
    scaler.fit(np.zeros((8, 4)))


if __name__ == "__main__":
    main()
'''
FEATURES = '''\
from sklearn.preprocessing import StandardScaler


def scaler():
    return StandardScaler()
'''


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_script_importing_no_tf_that_trains_a_repository_model_is_the_entry(tmp_path: Path, engine: str) -> None:
    """Regression: the script got nothing (no init, no "no entry script found") and the
    repository was ``ready``."""
    repo = make_repo(tmp_path / "keras", {"requirements.txt": PINS, "nets.py": NETS, "train.py": KERAS_SCRIPT,
                                          "features.py": FEATURES, "scale.py": OTHER_SCRIPT})
    (tmp_path / "repos.txt").write_text("keras\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train.py", "NPU061", "migrated")]
    assert show(repo, BRANCH, "train.py").decode() == \
        "import npu_device as npu\nnpu.open().as_default()\n" + KERAS_SCRIPT
    assert show(repo, BRANCH, "scale.py").decode() == OTHER_SCRIPT
