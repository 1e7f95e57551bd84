"""Keras training on a model that a function of another module returns is the E signal
(``spec/rules-tf2.md``, "E TF2 idiom (weak)": "Keras compile/fit/train_on_batch on a model the file
builds (NPU027's definition)", which takes "a call of a function of the repository that returns
one"). Read alone, ``train.py`` builds no model: the repository's ``model-function:`` facts
decide, so a TF 2.x script with no pin is ``tf2`` (no ``npu_bridge`` import, no Keras session)
and the repository gets the "version undetermined" finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.built_models import model_facts
from npu_codemod.codemods.engine import FILE_RULE_ID
from npu_codemod.codemods.tf_model_idioms import signals_in
from npu_codemod.codemods.tf_runtime import UNDETERMINED
from npu_codemod.codemods.tf_versions import TF2_CODE, file_kind, signals_of
from npu_codemod.orchestrator.verify.verify_repository import repository_tensorflow
from npu_codemod.plugins.manager import load_plugins

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.rules import assert_unchanged

BRANCH = "npu-codemod/sess-run-to-npu"
#: The rules of every pack but the tf2 pack: what npu-codemod ran before it.
TF1_RULES = frozenset(rule.id for rule in load_plugins().rules()
                      if rule.pack not in ("tf2", "tf2-distributed"))

NETS = '''"""The models and data of the training scripts."""
import tensorflow as tf


def small_net():
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
        tf.keras.layers.Dropout(rate=0.2),
        tf.keras.layers.Dense(2, activation="softmax"),
    ])


def regressor():
    from sklearn.linear_model import LinearRegression
    return LinearRegression()
'''

THROUGH_HELPER = '''"""Train the small net (TF 2.x Keras, eager)."""
import numpy as np
import tensorflow as tf
from nets import small_net


def get_model():
    model = small_net()
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=tf.keras.optimizers.Adam(learning_rate=0.001))
    return model


if __name__ == "__main__":
    model = get_model()
    model.fit(np.zeros((8, 4)), np.zeros((8,)), epochs=1)
'''

THROUGH_MODULE = '''"""Train the small net (TF 2.x Keras, eager)."""
import numpy as np
import tensorflow as tf

import nets

if __name__ == "__main__":
    model = nets.small_net()
    model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
    model.fit(np.zeros((8, 4)), np.zeros((8,)), epochs=1, callbacks=[tf.keras.callbacks.History()])
'''

NOT_A_MODEL = '''"""Fit a regression on features TensorFlow computes."""
import numpy as np
import tensorflow as tf
from nets import regressor

if __name__ == "__main__":
    features = tf.ones([8, 4]).numpy()
    model = regressor()
    model.fit(features, np.zeros((8,)))
'''


# --- the signal ---------------------------------------------------------------------------------


def test_a_training_on_a_model_of_no_call_of_the_file_waits_for_the_repository() -> None:
    signals = signals_of(THROUGH_HELPER, "train.py")
    assert signals.e is None
    assert signals.training is not None and signals.training.line == 9
    assert signals.model_calls == ("nets.small_net", "train.get_model")
    facts = model_facts("nets.py", NETS) | model_facts("train.py", THROUGH_HELPER)
    assert file_kind(signals_in(signals, "train.py", facts), "undetermined").kind == "tf2"
    assert file_kind(signals_in(signals, "train.py", frozenset()), "undetermined").kind == "tf-neutral"


def test_a_keras_model_class_of_the_repository_is_a_model_the_file_builds() -> None:
    """NPU027's definition takes the repository's subclasses of ``tf.keras.Model`` too."""
    source = ("import tensorflow as tf\n\n\nclass Net(tf.keras.Model):\n    def call(self, x):\n"
              "        return x\n\n\nmodel = Net()\nmodel.compile(loss='mse')\n")
    signals = signals_of(source, "train.py")
    assert signals.e is None and signals.model_calls == ("train.Net",)
    facts = model_facts("train.py", source)
    assert file_kind(signals_in(signals, "train.py", facts), "undetermined").kind == "tf2"


def test_a_file_that_builds_its_model_or_calls_nothing_of_the_repository_needs_no_facts() -> None:
    inline = THROUGH_MODULE.replace("nets.small_net()", "tf.keras.Sequential()")
    assert signals_of(inline, "train.py").e is not None
    assert signals_of(inline, "train.py").training is None
    alone = "import tensorflow as tf\nimport numpy as np\n\nmodel.fit(np.zeros((8, 4)))\n"
    assert signals_of(alone, "train.py").training is None  # nothing that could make a model


def test_the_tf1_rules_leave_a_training_on_a_model_of_another_module_alone() -> None:
    facts = {"tf-runtime:undetermined"} | model_facts("nets.py", NETS) \
        | model_facts("train.py", THROUGH_HELPER)
    findings = assert_unchanged(THROUGH_HELPER, TF1_RULES, facts=facts)
    assert [(f.rule_id, f.status, f.message) for f in findings] == [
        (FILE_RULE_ID, "unmigrated", TF2_CODE)]


# --- through a run --------------------------------------------------------------------------------


def _run(tmp_path: Path, files: dict[str, str], *options: str) -> dict:
    make_repo(tmp_path / "keras2", files)
    (tmp_path / "repos.txt").write_text("keras2\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", *options,
        cwd=tmp_path, expect=0)
    return repo_record(tmp_path / "rep")


@pytest.mark.parametrize("train", [THROUGH_HELPER, THROUGH_MODULE], ids=["helper", "module"])
def test_a_tf2_keras_script_whose_model_is_another_module_s_is_tf2(tmp_path: Path, train: str) -> None:
    record = _run(tmp_path, {"nets.py": NETS, "train.py": train})
    assert record["file_kinds"] == {"tf2": 1, "tf-neutral": 1}
    found = {(f["path"], f["rule_id"], f["message"]) for f in record["findings"]
             if f["rule_id"] != "NPU071"}
    assert ("", FILE_RULE_ID, UNDETERMINED) in found
    assert {(path, rule) for path, rule, _ in found} == {("", FILE_RULE_ID), ("train.py", "NPU061")}
    script = show(tmp_path / "keras2", BRANCH, "train.py").decode()
    docstring, _, rest = train.partition("\n")
    assert script == f"{docstring}\nimport npu_device as npu\nnpu.open().as_default()\n{rest}"
    assert record["files_changed"] == ["train.py"]


def test_selective_and_full_engines_agree_on_it(tmp_path: Path) -> None:
    files = {"nets.py": NETS, "train.py": THROUGH_HELPER, "other.py": THROUGH_MODULE}
    make_repo(tmp_path / "keras2", files)
    (tmp_path / "repos.txt").write_text("keras2\n")
    records = []
    for engine in ("selective", "full"):
        cli("scan", "--repos", "repos.txt", "--report-dir", engine, "--engine", engine,
            cwd=tmp_path, expect=0)
        records.append(repo_record(tmp_path / engine))
    assert records[0]["findings"] == records[1]["findings"]
    assert records[0]["file_kinds"] == records[1]["file_kinds"] == {"tf2": 2, "tf-neutral": 1}


def test_pinned_to_tf1_the_same_script_stays_tf1(tmp_path: Path) -> None:
    record = _run(tmp_path, {"nets.py": NETS, "train.py": THROUGH_HELPER,
                             "requirements.txt": "tensorflow==1.15\nnumpy\n"})
    assert record["file_kinds"] == {"tf1": 1, "tf-neutral": 1}
    assert "set_keras_session_npu_config()" in show(tmp_path / "keras2", BRANCH, "train.py").decode()
    assert not any(f["message"] == UNDETERMINED for f in record["findings"])


def test_a_function_that_returns_no_keras_model_makes_no_signal(tmp_path: Path) -> None:
    record = _run(tmp_path, {"nets.py": NETS, "train.py": NOT_A_MODEL})
    assert record["file_kinds"] == {"tf-neutral": 2}
    assert not any(f["message"] == UNDETERMINED for f in record["findings"])


def test_verify_runs_such_a_repository_as_tf2(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "train.py").write_text(THROUGH_HELPER)
    assert repository_tensorflow(tmp_path) == "2"
    (tmp_path / "train.py").write_text(NOT_A_MODEL)
    assert repository_tensorflow(tmp_path) == "1"
