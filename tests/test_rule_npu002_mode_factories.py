"""NPU002 for an input function that serves both modes (review rvl L1): a factory named for both
(``_make_train_or_eval_input_fn``), or named for training but told the mode (``train_input_fn(
files, batch_size, mode)``), repeats only when training and batches once for both. Its name is
no evidence of training: what it is used for decides. Used for evaluation too, it is "shared by
training and evaluation" (spec NPU002: report unmigrated), as the same code named
``_make_input_fn`` already was; ``drop_remainder=True`` there loses the last partial
evaluation batch (all of it when the evaluation set is smaller than a batch).
"""

from __future__ import annotations

from pathlib import Path

from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.plugins.rules.sess_run._pipeline_uses import pipeline_use_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import TF_SCRIPT, git, make_repo, show

INPUTS = '''"""Input functions of the molecule regressor."""
import tensorflow as tf


def _make_train_or_eval_input_fn(files, batch_size, mode):
    def input_fn():
        dataset = tf.data.TFRecordDataset(files)
        if mode == tf.estimator.ModeKeys.TRAIN:
            dataset = dataset.shuffle(batch_size * 8).repeat()
        dataset = dataset.batch(batch_size)
        return dataset
    return input_fn


def make_train_input_fn(files, batch_size):
    return _make_train_or_eval_input_fn(files, batch_size, tf.estimator.ModeKeys.TRAIN)


def make_eval_input_fn(files, batch_size):
    return _make_train_or_eval_input_fn(files, batch_size, tf.estimator.ModeKeys.EVAL)
'''
TASK = '''import tensorflow as tf

from trainer import inputs


def main(estimator, train_files, eval_files):
    train_spec = tf.estimator.TrainSpec(input_fn=inputs.make_train_input_fn(train_files, 64), max_steps=100)
    eval_spec = tf.estimator.EvalSpec(input_fn=inputs.make_eval_input_fn(eval_files, 64))
    tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
'''
SHARED = ("inference/eval pipeline (input_fn() is used for inference (_make_train_or_eval_input_fn() "
          "is used for inference (in make_eval_input_fn(), line 20) and for training, line 12), "
          "repeat() only under 'if mode == tf.estimator.ModeKeys.TRAIN' (line 8) before this batch)")

MODE_PARAMETER = '''import tensorflow as tf


def train_input_fn(files, batch_size, mode):
    ds = tf.data.TFRecordDataset(files)
    if mode == tf.estimator.ModeKeys.TRAIN:
        ds = ds.repeat()
    return ds.batch(batch_size)


def main(estimator):
    estimator.train(input_fn=lambda: train_input_fn("a", 64, tf.estimator.ModeKeys.TRAIN), max_steps=10)
    estimator.evaluate(input_fn=lambda: train_input_fn("b", 64, tf.estimator.ModeKeys.EVAL))
'''


def _npu002(findings: list) -> list[tuple[int, str, str]]:
    return [(f.line, f.status, f.message.split(": do not drop")[0]) for f in findings if f.rule_id == "NPU002"]


def test_a_factory_named_for_training_and_evaluation_used_for_both_is_reported() -> None:
    assert _npu002(assert_reports({"NPU002"}, INPUTS, path="trainer/inputs.py")) == [
        (10, "unmigrated", SHARED)]


def test_a_factory_named_for_both_that_only_training_uses_is_rewritten() -> None:
    before = INPUTS.rsplit("\n\n\ndef make_eval_input_fn", 1)[0] + "\n"
    after = before.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    assert [(f.line, f.status) for f in assert_migrates({"NPU002"}, before, after)] == [(10, "migrated")]


def test_a_training_name_with_a_mode_parameter_is_no_evidence_its_uses_decide() -> None:
    found = _npu002(assert_reports({"NPU002"}, MODE_PARAMETER))
    assert found == [(8, "unmigrated", "inference/eval pipeline (train_input_fn() is used for inference "
                      "(passed to estimator.evaluate() on line 13) and for training, repeat() only under "
                      "'if mode == tf.estimator.ModeKeys.TRAIN' (line 6) before this batch)")]


def test_a_training_name_without_a_mode_parameter_still_says_training() -> None:
    before = MODE_PARAMETER.replace(", mode):", "):").replace(
        "    if mode == tf.estimator.ModeKeys.TRAIN:\n        ds = ds.repeat()\n", "    ds = ds.repeat(1)\n")
    before = before.split("\n\n\ndef main")[0] + "\n"
    after = before.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    assert [(f.line, f.status) for f in assert_migrates({"NPU002"}, before, after)] == [(7, "migrated")]


def test_another_files_function_named_for_both_modes_says_neither() -> None:
    """Its use of the factory is no training use (only its name would say so)."""
    script = TASK.split("\n\n\n")[0] + '''


def train_and_evaluate(estimator, files):
    make_input_fn = inputs.make_train_input_fn(files, 64)
    return make_input_fn
'''
    assert pipeline_use_facts("trainer/task.py", script) == set()


def test_run_reports_the_shared_factory_of_a_package_with_either_engine_and_on_a_rerun(
        tmp_path: Path) -> None:
    files = {"trainer/__init__.py": "", "trainer/inputs.py": INPUTS, "trainer/task.py": TASK,
             "requirements.txt": "tensorflow==1.15.5\n", "train.py": TF_SCRIPT}  # a file that changes
    trees = {}
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "repo", files)
        (root / "repos.txt").write_text("repo\n")
        for report in ("first", "again"):  # again: on the migrated branch, merged
            cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
                "--report-dir", report, "--workspace", "ws", cwd=root, expect=0)
            found = [(row["path"], row["line"], row["status"], row["message"].split(": do not drop")[0])
                     for row in read_csv(root / report / "findings.csv")
                     if row["rule_id"] == "NPU002" and row["path"].startswith("trainer/")]
            assert found == [("trainer/inputs.py", "10", "unmigrated", SHARED)]
            assert b"dataset.batch(batch_size)\n" in show(repo, DEFAULT_BRANCH, "trainer/inputs.py")
            trees[engine, report] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
            git(repo, "merge", "-q", "--ff-only", DEFAULT_BRANCH)
        assert trees[engine, "again"] == trees[engine, "first"]
    assert trees["selective", "first"] == trees["full", "first"]
