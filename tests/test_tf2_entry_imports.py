"""NPU061's entries through the imports Python runs (``codemods/program_graph``,
``codemods/tf_programs``): a dotted ``import pkg.train``, a model a package re-exports, a
package that re-exports a ``conflict`` module, and a script importing no TensorFlow that trains
a repository model at module level.

Regressions of the review rounds (Mask-RCNN-TF2's ``import mrcnn.model``, DeepCTR's
``from deepctr.models import DeepFM`` whose ``__init__`` also imports ``dien.py``): each was no
entry, or "TF 2.x script without training code", and got no device init.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.tf_programs import program_facts
from npu_codemod.codemods.tf_runtime import decide
from npu_codemod.codemods.tf_scopes import with_trained_models
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.cli import cli
from support.git import make_repo, show
from support.tf2_scripts import DEVICE_INIT

PINS = "tensorflow==2.6.5\n"
BRANCH = "npu-codemod/sess-run-to-npu"

#: A training module of a package: a traced step, called by ``fit``.
PKG_TRAIN = '''\
import tensorflow as tf


@tf.function
def step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def fit(model, xs):
    optimizer = tf.keras.optimizers.SGD()
    for x in xs:
        step(model, optimizer, x)
'''

PKG_UTIL = '''\
import os


def checkpoint_dir(root):
    return os.path.join(root, "ckpt")
'''

DOTTED = '''\
import pkg.train

if __name__ == "__main__":
    pkg.train.fit(None, [[1.0]])
'''

DOTTED_TF = '''\
import tensorflow as tf

import pkg.train

if __name__ == "__main__":
    tf.print("start")
    pkg.train.fit(None, [[1.0]])
'''

SIBLING = '''\
import pkg.util

if __name__ == "__main__":
    print(pkg.util.checkpoint_dir("."))
'''

#: A function of the repository that returns a Keras model.
NET = '''\
import tensorflow as tf


def Net(units):
    inputs = tf.keras.layers.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(units)(inputs)
    return tf.keras.models.Model(inputs=inputs, outputs=outputs)
'''

#: TF 1.x-only APIs and a compat.v1 call in a TF 2.x repository: a ``conflict`` file.
LEGACY = '''\
import tensorflow as tf


def initialized(model):
    tf.keras.backend.get_session().run(tf.global_variables_initializer())
    tf.compat.v1.keras.backend.get_session().run(tf.compat.v1.tables_initializer())
    return model
'''

MODELS_INIT = '''\
from .net import Net
from .legacy import initialized
'''

PLAIN = '''\
import numpy as np

from lib.models import Net

if __name__ == "__main__":
    model = Net(2)
    model.compile("adam", "mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 2)), epochs=1)
'''

WITH_TF = '''\
import numpy as np
from tensorflow.keras.utils import to_categorical

from lib.models import Net

if __name__ == "__main__":
    model = Net(2)
    model.compile("adam", "mse")
    model.fit(np.zeros((8, 4)), to_categorical(np.zeros(8), 2), epochs=1)
'''

EAGER = '''\
import tensorflow as tf

from lib.models import initialized
from lib.models.net import Net

if __name__ == "__main__":
    model = initialized(Net(2))
    optimizer = tf.keras.optimizers.SGD()
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(tf.zeros((8, 4))))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
'''

MODULE_LEVEL = '''\
import numpy as np

from lib.models.net import Net

model = Net(2)
model.compile("adam", "mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 2)), epochs=1)
'''

#: A repository object's own method trains: no module-level training of the file's (as for a
#: TensorFlow file of this shape).
METHOD_CALL = '''\
import numpy as np

from lib import trainer

net = trainer.Trainer()
net.train(np.zeros((8, 4)), np.zeros((8, 2)))
'''

TRAINER = '''\
import tensorflow as tf


class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    def train(self, x, y):
        self.model.compile(optimizer="adam", loss="mse")
        self.model.fit(x, y, epochs=1)
'''


def entries(files: dict[str, str]) -> set[str]:
    """The entry scripts :func:`program_facts` finds in a TF 2.x repository of ``files``."""
    loaded = load_rules(RuleSelection())
    facts = with_trained_models(loaded.repository_facts((path, text.encode()) for path, text in files.items()).facts)
    found, _ = program_facts(facts, decide("2", {}, facts).value)
    return {fact.partition(":")[2] for fact in found if fact.startswith("tf2-entry:")}


PACKAGE = {"pkg/__init__.py": "", "pkg/train.py": PKG_TRAIN, "pkg/util.py": PKG_UTIL}
LIBRARY = {"lib/__init__.py": "", "lib/models/__init__.py": MODELS_INIT, "lib/models/net.py": NET,
           "lib/models/legacy.py": LEGACY}


def test_a_dotted_import_reaches_the_module_and_no_sibling() -> None:
    assert entries({**PACKAGE, "main.py": DOTTED, "main_tf.py": DOTTED_TF, "tool.py": SIBLING}) \
        == {"main.py", "main_tf.py"}


def test_a_dotted_import_runs_the_packages_on_its_way() -> None:
    """``import pkg.sub.names`` runs ``pkg/sub/__init__.py``, which imports the trainer: a
    script that calls the trainer the package re-exports is an entry; one that only imports
    it (and calls ``checkpoint_dir``) trains nothing (``training_calls``)."""
    calling = "import pkg.sub.names\n\nif __name__ == \"__main__\":\n    pkg.sub.fit(None, [[1.0]])\n"
    files = {**PACKAGE, "pkg/sub/__init__.py": "from pkg.train import fit\n", "pkg/sub/names.py": PKG_UTIL,
             "main.py": calling, "tool.py": SIBLING.replace("pkg.util", "pkg.sub.names")}
    assert entries(files) == {"main.py"}
    assert entries({**files, "pkg/sub/__init__.py": ""}) == set()


def test_a_model_a_package_re_exports_makes_its_trainer_an_entry() -> None:
    assert entries({**LIBRARY, "train_plain.py": PLAIN, "train_tf.py": WITH_TF}) == {"train_plain.py", "train_tf.py"}


def test_a_conflict_module_a_package_re_exports_mixes_no_program() -> None:
    assert entries({**LIBRARY, "train_eager.py": EAGER}) == {"train_eager.py"}


#: compat.v1 graph APIs beside ``tensorflow.compat.v2`` and no compat switch: a ``conflict`` file
#: of the other kind ("graph-mode compat.v1 API in eager TF 2.x code": EfficientDet's ``utils.py``,
#: imported by its Keras scripts). Nothing rewrites it, so it switches no program to graph mode.
GRAPH_IN_EAGER = '''\
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2


def batch_norm(inputs, training):
    layer = tf2.keras.layers.BatchNormalization()
    outputs = layer(inputs, training=training)
    for update in layer.updates:
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update)
    return outputs
'''

SEGMENT = '''\
import tensorflow as tf

import utils


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(utils.batch_norm(tf.zeros((8, 4)), True), tf.zeros((8, 2)))


if __name__ == "__main__":
    main()
'''


def test_a_graph_in_eager_conflict_module_mixes_no_program() -> None:
    """Regression (automl's ``efficientdet/tf2/segmentation.py``): the program was refused as
    mixing eager files with "compat.v1 graph files (efficientdet/utils.py)", a ``conflict`` file
    that gets no compat header, and its entry got no device init."""
    assert entries({"utils.py": GRAPH_IN_EAGER, "segment.py": SEGMENT}) == {"segment.py"}


def test_a_script_importing_no_tf_that_trains_a_repository_model_at_module_level_is_an_entry() -> None:
    assert entries({**LIBRARY, "run_fit.py": MODULE_LEVEL}) == {"run_fit.py"}
    assert entries({**LIBRARY, "run_fit.py": MODULE_LEVEL, "sweep.py": "import run_fit\n"}) == set()
    assert entries({**LIBRARY, "tests/test_fit.py": MODULE_LEVEL}) == set()


@pytest.mark.parametrize("tf", [False, True])
def test_a_module_level_call_of_a_repository_method_is_no_entry(tf: bool) -> None:
    """As for a TensorFlow file: only training the file spells itself makes a module-level entry."""
    script = ("import tensorflow as tf\n" if tf else "") + METHOD_CALL
    assert entries({"lib/__init__.py": "", "lib/trainer.py": TRAINER, "run_training.py": script}) == set()


def npu061(record: dict) -> list[tuple[str, str, str]]:
    return sorted((f["path"], f["status"], f["message"].split(":")[0])
                  for f in record["findings"] if f["rule_id"] == "NPU061")


def run(root: Path, report: str, engine: str) -> dict:
    cli("run", "--repos", "repos.txt", "--report-dir", report, "--jobs", "1", "--engine", engine,
        cwd=root, expect=0)
    return json.loads((root / report / "run.json").read_text())["repos"][0]


def test_the_entries_get_the_init_once_with_either_engine(tmp_path: Path) -> None:
    files = {**PACKAGE, **LIBRARY, "requirements.txt": PINS, "main.py": DOTTED, "main_tf.py": DOTTED_TF,
             "tool.py": SIBLING, "train_plain.py": PLAIN, "train_tf.py": WITH_TF, "train_eager.py": EAGER,
             "run_fit.py": MODULE_LEVEL}
    added = "added 'import npu_device as npu' and 'npu.open().as_default()' at the top of the entry script"
    scripts = ("main.py", "main_tf.py", "run_fit.py", "train_eager.py", "train_plain.py", "train_tf.py")
    records, branches = [], []
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "zoo", files)
        (root / "repos.txt").write_text("zoo\n")
        record = run(root, "rep", engine)
        assert npu061(record) == [(path, "migrated", added) for path in scripts]
        for path in ("main.py", "run_fit.py", "train_plain.py"):  # no TensorFlow: nothing else changes them
            assert show(repo, BRANCH, path).decode() == DEVICE_INIT + files[path]
        assert "tool.py" not in record["files_changed"]
        again = run(root, "rep2", engine)
        assert again["status"] == "unchanged"
        assert [(path, status) for path, status, _ in npu061(again)] == [(path, "migrated") for path in scripts]
        records.append(record["findings"])
        branches.append({path: show(repo, BRANCH, path) for path in sorted(record["files_changed"])})
    assert records[0] == records[1]
    assert branches[0] == branches[1]
