"""A script that trains with standalone Keras (``import keras``) on TensorFlow 1.x, whether or
not it imports TensorFlow itself, is reported at its first training call, never left alone in
silence with the repository ``ready`` (``codemods/standalone_keras``); not in a TF 2.x folder,
nor in a repository with no TensorFlow (Keras on another backend), nor where the rules handle
its session (TensorFlow's Keras: NPU041; ``K.set_session``: NPU007)."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.standalone_keras import MESSAGE, MESSAGE_TF2, keras_fact, keras_findings
from npu_codemod.codemods.tf_versions import RUNTIME_FACT, SCOPE_FACT

from support.cli import cli, repo_record
from support.git import make_repo

LOSSES = '''"""Losses written with the TensorFlow backend's ops."""
import tensorflow as tf


def masked_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))
'''

TRAIN = '''"""Fits the small model (Keras 2.2 on TensorFlow 1.15)."""
import numpy as np
import keras.backend as K
from keras.layers import Dense, Input
from keras.models import Model

from losses import masked_loss


def main():
    x = Input(shape=(4,))
    model = Model(x, Dense(1)(x))
    model.compile(optimizer="adam", loss=masked_loss)
    model.fit_generator(iter([(np.zeros((8, 4)), np.zeros((8, 1)))]), steps_per_epoch=1)
    K.clear_session()


if __name__ == "__main__":
    main()
'''

TF_FILE = "tf-file@|losses.py"

#: Imports TensorFlow and trains with standalone Keras: NPU041 sees no model of TensorFlow's.
BOTH = """import numpy as np
import tensorflow as tf
from keras.layers import Dense
from keras.models import Sequential

tf.set_random_seed(0)

if __name__ == "__main__":
    model = Sequential([Dense(1, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 1)))
"""


def test_the_fact_names_the_first_training_call() -> None:
    assert keras_fact("train.py", TRAIN) == "keras-standalone:train.py|14"
    assert keras_fact("plot.py", "import keras\n\nprint(keras.__version__)\n") is None  # trains nothing
    assert keras_fact("fit.py", "import numpy as np\n\nnp.polyfit(x, y, 1).fit(x)\n") is None
    augment = ("from keras.datasets import cifar10\nfrom keras.preprocessing.image import ImageDataGenerator\n"
               "\ngen = ImageDataGenerator(horizontal_flip=True)\ngen.fit(cifar10.load_data()[0][0])\n")
    assert keras_fact("data.py", augment) is None  # statistics for augmentation: no model
    assert keras_fact("m.py", "import keras\n\nm = keras.models.Sequential()\nm.fit(x, y)\n") == \
        "keras-standalone:m.py|4"


def test_a_file_that_imports_tensorflow_too_has_the_fact() -> None:
    assert keras_fact("both.py", BOTH, imports_tf=True) == "keras-standalone:both.py|11"
    tf_keras = BOTH.replace("model = Sequential(", "model = tf.keras.Sequential(")
    assert keras_fact("both.py", tf_keras, imports_tf=True) is None  # NPU041's model
    sets = BOTH.replace("tf.set_random_seed(0)", "K.set_session(tf.Session(config=tf.ConfigProto()))")
    assert keras_fact("both.py", sets, imports_tf=True) is None  # NPU007 configures that session
    assert keras_fact("both.py", sets) == "keras-standalone:both.py|11"  # without TF: no NPU007
    done = BOTH.replace("tf.set_random_seed(0)", "npu_keras_sess = set_keras_session_npu_config()")
    assert keras_fact("both.py", done, imports_tf=True) is None  # configured by hand


def test_reported_where_tensorflow_runs_with_what_each_version_needs() -> None:
    """TF 1.x: the session lines to add by hand. A TF 2.x folder: tf.keras's names, which the
    TF 2.x rules read (they were said to be its business, but no rule reads ``keras.*``: a TF
    2.6 repository training with ``import keras`` was ``ready``, unchanged)."""
    facts = ["keras-standalone:train.py|14", "keras-standalone:tf2/train.py|3", TF_FILE]
    decided = frozenset({f"{RUNTIME_FACT}undetermined", f"{SCOPE_FACT}tf2/:2"})
    found = keras_findings(facts, decided)
    assert found == [("tf2/train.py", 3, MESSAGE_TF2), ("train.py", 14, MESSAGE)]
    # no TensorFlow file: Keras on another backend, unless the folder pins TensorFlow 2
    assert keras_findings(facts[:2], decided) == [("tf2/train.py", 3, MESSAGE_TF2)]


def test_keras_3_s_imports_and_model_classes_train_a_model() -> None:
    """Keras 3's examples import modules by name and subclass ``keras.Model``."""
    step = ("import keras\nfrom keras import ops\n\n\nclass Net(keras.Model):\n    pass\n\n\n"
            "net = Net()\nnet.fit(x, y)\n")
    assert keras_fact("step.py", step, imports_tf=True) == "keras-standalone:step.py|10"
    layers = "import keras\nfrom keras import layers\n\nm = build(layers.Dense(1))\nm.fit(x, y)\n"
    assert keras_fact("layers.py", layers) == "keras-standalone:layers.py|5"


def test_keras_3_on_another_backend_is_no_tensorflow_code() -> None:
    jax = "import os\n\nos.environ[\"KERAS_BACKEND\"] = \"jax\"\n" + \
        "import keras\n\nm = keras.Sequential()\nm.fit(x, y)\n"
    assert keras_fact("jax.py", jax) is None
    assert keras_fact("tf.py", jax.replace('"jax"', "'tensorflow'")) == "keras-standalone:tf.py|7"


KERAS_26 = '''"""Fits an MNIST convnet with the keras package (Keras 2.6, TensorFlow's Keras)."""
import numpy as np
import keras
from keras import layers

(x_train, y_train), _ = keras.datasets.mnist.load_data()
model = keras.Sequential([keras.Input(shape=(28, 28, 1)), layers.Flatten(), layers.Dense(10)])
model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
model.fit(np.expand_dims(x_train / 255.0, -1), y_train, batch_size=128, epochs=15)
'''


def test_a_tf2_repository_training_with_the_keras_package_is_not_ready(tmp_path: Path) -> None:
    make_repo(tmp_path / "mnist", {"train.py": KERAS_26, "requirements.txt": "tensorflow==2.6.5\nkeras==2.6.0\n"})
    (tmp_path / "repos.txt").write_text("mnist\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--no-cache",
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["line"], f["rule_id"], f["status"], f["message"]) for f in record["findings"]] == [
        ("train.py", 9, "NPU000", "unmigrated", MESSAGE_TF2)]
    assert record["verdict"] == "needs-work"


def test_the_cli_reports_it_and_the_repository_is_not_ready(tmp_path: Path) -> None:
    make_repo(tmp_path / "yolo", {"losses.py": LOSSES, "train.py": TRAIN,
                                  "requirements.txt": "keras==2.2.4\ntensorflow-gpu==1.15.0\n"})
    (tmp_path / "repos.txt").write_text("yolo\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--no-cache",
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["line"], f["status"], f["message"]) for f in record["findings"]
            if f["rule_id"] == "NPU000"] == [("train.py", 14, "unmigrated", MESSAGE)]
    assert record["verdict"] == "needs-work"
    lines = cli("check", ".", cwd=tmp_path / "yolo", expect=1).stdout.splitlines()
    assert any(line.startswith("train.py:14:1: NPU000 trains with standalone Keras") for line in lines)


def test_the_cli_reports_a_file_that_imports_tensorflow_too(tmp_path: Path) -> None:
    make_repo(tmp_path / "mlp", {"train.py": BOTH, "requirements.txt": "keras==2.2.4\ntensorflow==1.15.5\n"})
    (tmp_path / "repos.txt").write_text("mlp\n")
    for engine in ("selective", "full", "full"):  # the last: a rerun, from the result cache
        cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--engine", engine,
            cwd=tmp_path, expect=0)
        record = repo_record(tmp_path / "rep")
        assert [(f["path"], f["line"], f["rule_id"], f["status"], f["message"])
                for f in record["findings"]] == [("train.py", 11, "NPU000", "unmigrated", MESSAGE)]
        assert record["verdict"] == "needs-work"
    lines = cli("check", ".", cwd=tmp_path / "mlp", expect=1).stdout.splitlines()
    assert any(line.startswith("train.py:11:1: NPU000 trains with standalone Keras") for line in lines)
