"""A script that trains with standalone Keras (``import keras``) on TensorFlow 1.x, whether or
not it imports TensorFlow itself, is reported at its first training call, never left alone in
silence with the repository ``ready`` (``codemods/standalone_keras``); not in a TF 2.x folder,
nor in a repository with no TensorFlow (Keras on another backend), nor where the rules handle
its session (TensorFlow's Keras: NPU041; ``K.set_session``: NPU007)."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.standalone_keras import MESSAGE, keras_fact, keras_findings
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


def test_reported_where_tensorflow_1_runs_not_in_tf2_folders_or_without_tensorflow() -> None:
    facts = ["keras-standalone:train.py|14", "keras-standalone:tf2/train.py|3", TF_FILE]
    decided = frozenset({f"{RUNTIME_FACT}undetermined", f"{SCOPE_FACT}tf2/:2"})
    found = keras_findings(facts, decided)
    assert [(path, line) for path, line, _ in found] == [("train.py", 14)]
    assert found[0][2] == MESSAGE
    assert keras_findings(facts[:2], decided) == []  # no TensorFlow file: another backend


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
