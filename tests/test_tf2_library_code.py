"""NPU067 and NPU068 leave library code alone (``spec/rules-tf2.md``: program-level changes go to
a program's entry scripts and what they reach; library modules get none). A package whose
``__init__`` imports a Keras model class with its own ``train_step`` and a test helper that
compiles with ``optimizer="adam"``, and no entry script: nothing is rewritten (``import mylib``
must not need ``npu_device``), each site is ``unmigrated`` with the line to add. With an entry
script that trains the class, the class's module is the program's code and gets its
``all_reduce``; the helper no entry reaches stays as it is. Through the CLI, on real git
repositories shaped like tensorflow/addons; selective and full engines agree, a rerun changes
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.cli import cli
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
RULES = ("--rules", "default,tf2-distributed")
INIT = '''"""A small library of Keras helpers."""
from mylib.utils import MeanWrapper
from mylib.wrap import CrfModel
'''
UTILS = '''"""Metrics, and the model the metric tests train."""
import numpy as np
import tensorflow as tf


class MeanWrapper(tf.keras.metrics.Mean):
    pass


def get_test_model(metric, num_output):
    model = tf.keras.Sequential()
    model.add(tf.keras.layers.Dense(num_output))
    model.compile(optimizer="adam", loss="mse", metrics=[metric])
    model.fit(np.zeros((10, 3)), np.zeros((10, num_output)), epochs=1, verbose=0)
    return model
'''
WRAP = '''"""A model wrapper with its own training step."""
import tensorflow as tf


class CrfModel(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}
'''
TRAIN = '''"""Trains the wrapper on random data."""
import numpy as np
import tensorflow as tf

from mylib.wrap import CrfModel

if __name__ == "__main__":
    inputs = tf.keras.Input((4,))
    model = CrfModel(inputs, tf.keras.layers.Dense(1)(inputs))
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1)
'''
UTILS_TEST = '''"""The metric's test, runnable as a script (a test, no training program)."""
import tensorflow as tf

from mylib.utils import MeanWrapper, get_test_model


class MeanTest(tf.test.TestCase):
    def test_fit(self):
        get_test_model(MeanWrapper(), 1)


if __name__ == "__main__":
    tf.test.main()
'''
LIBRARY = {"requirements.txt": "tensorflow==2.6.5\n", "mylib/__init__.py": INIT,
           "mylib/utils.py": UTILS, "mylib/wrap.py": WRAP, "mylib/tests/utils_test.py": UTILS_TEST}
LIBRARY_CODE = "library code (no entry script of the repository reaches this module)"


def _run(root: Path, report: str, repos: str, *extra: str) -> dict[str, Any]:
    cli("run", "--repos", repos, "--report-dir", report, "--no-progress", "--no-cache", *RULES, *extra,
        cwd=root, expect=0)
    (record,) = json.loads((root / report / "run.json").read_text())["repos"]
    return dict(record)


def _distributed(record: dict[str, Any]) -> list[tuple[str, int, str, str, str]]:
    return sorted((f["path"], f["line"], f["rule_id"], f["status"], f["message"].split(":")[0])
                  for f in record["findings"] if f["rule_id"] in ("NPU067", "NPU068"))


def test_a_library_with_no_entry_script_is_reported_not_rewritten(tmp_path: Path) -> None:
    make_repo(tmp_path / "lib", LIBRARY)
    (tmp_path / "repos.txt").write_text("lib\n")
    record = _run(tmp_path, "one", "repos.txt")
    assert record["files_changed"] == []
    assert _distributed(record) == [
        ("mylib/utils.py", 11, "NPU067", "unmigrated", "variables are created lazily"),
        ("mylib/utils.py", 13, "NPU068", "unmigrated", LIBRARY_CODE),
        ("mylib/wrap.py", 10, "NPU068", "unmigrated", LIBRARY_CODE)]
    messages = [f["message"] for f in record["findings"] if f["rule_id"] == "NPU068"]
    assert any('build the optimizer as npu.distribute.npu_distributed_keras_optimizer_wrapper("adam")' in m
               for m in messages)
    assert any('add gradients = npu.distribute.all_reduce(gradients, "mean") after this line' in m
               for m in messages)
    full = _run(tmp_path, "full", "repos.txt", "--engine", "full", "--dry-run")
    assert full["findings"] == record["findings"]


def test_the_module_an_entry_trains_is_rewritten_and_the_rest_of_the_library_is_not(tmp_path: Path) -> None:
    make_repo(tmp_path / "app", {**LIBRARY, "train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("app\n")
    record = _run(tmp_path, "one", "repos.txt")
    own = "the model's class overrides train_step and applies gradients itself"
    assert _distributed(record) == [
        ("mylib/utils.py", 11, "NPU067", "unmigrated", "variables are created lazily"),
        ("mylib/utils.py", 13, "NPU068", "unmigrated", LIBRARY_CODE),
        ("mylib/wrap.py", 10, "NPU068", "migrated",
         'added gradients = npu.distribute.all_reduce(gradients, "mean") before the gradients are applied'),
        ("train.py", 9, "NPU067", "unmigrated", "variables are created lazily"),
        ("train.py", 10, "NPU068", "compliant", own)]
    assert sorted(record["files_changed"]) == ["mylib/wrap.py", "train.py"]
    assert "npu" not in git(tmp_path / "app", "show", f"{BRANCH}:mylib/utils.py")
    wrap = git(tmp_path / "app", "show", f"{BRANCH}:mylib/wrap.py")
    assert wrap.count("all_reduce") == 1 and "import npu_device as npu" in wrap

    full = _run(tmp_path, "full", "repos.txt", "--engine", "full", "--dry-run")
    assert full["findings"] == record["findings"]

    (tmp_path / "again.txt").write_text(f"app {BRANCH}\n")
    rerun = _run(tmp_path, "two", "again.txt", "--branch", "again")
    assert rerun["files_changed"] == []
    assert [(path, line, rule, status) for path, line, rule, status, _ in _distributed(rerun)] == [
        ("mylib/utils.py", 11, "NPU067", "unmigrated"), ("mylib/utils.py", 13, "NPU068", "unmigrated"),
        ("mylib/wrap.py", 11, "NPU068", "compliant"), ("train.py", 11, "NPU067", "unmigrated"),
        ("train.py", 12, "NPU068", "compliant")]


def test_a_test_run_as_a_script_is_no_program_that_makes_its_helper_program_code(tmp_path: Path) -> None:
    make_repo(tmp_path / "lib", LIBRARY)
    (tmp_path / "repos.txt").write_text("lib\n")
    record = _run(tmp_path, "one", "repos.txt", "--include-tests", "--dry-run")
    assert [(path, line, rule, status) for path, line, rule, status, _ in _distributed(record)] == [
        ("mylib/utils.py", 11, "NPU067", "unmigrated"), ("mylib/utils.py", 13, "NPU068", "unmigrated"),
        ("mylib/wrap.py", 10, "NPU068", "unmigrated")]
    assert "mylib/utils.py" not in record["files_changed"]
