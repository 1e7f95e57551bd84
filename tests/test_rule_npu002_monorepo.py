"""NPU002 in a repository of sample projects, each with its own ``trainer`` package (review rvl
L2): ``import trainer.model`` in ``census/trainer/task.py`` is census's ``trainer/model.py``, as
Python finds it from the project (the nearest folder, ``sys.path[0]``), not every
``trainer/model.py`` of the repository. Census evaluates with its ``input_fn``; the train-only
``input_fn`` of the penguins project must not be refused for census's use.
"""

from __future__ import annotations

from pathlib import Path

from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._pipeline_uses import module_facts, pipeline_use_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show

CENSUS_MODEL = '''import tensorflow as tf


def input_fn(files, batch_size, num_epochs=None):
    ds = tf.data.TFRecordDataset(files)
    ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size)
    return ds
'''
CENSUS_TASK = '''import tensorflow as tf

import trainer.model as model


def main():
    est = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=[])
    est.evaluate(input_fn=lambda: model.input_fn("eval.tfr", 64, num_epochs=1))
'''
PENGUINS_MODEL = CENSUS_MODEL.replace("ds.repeat(num_epochs)", "ds.shuffle(100).repeat(num_epochs)")
PENGUINS_TASK = '''import tensorflow as tf

from trainer import model


def main():
    est = tf.estimator.DNNRegressor(hidden_units=[4], feature_columns=[])
    est.train(input_fn=lambda: model.input_fn("train.tfr", 64), max_steps=10)
'''
FILES = {"census/trainer/__init__.py": "", "census/trainer/model.py": CENSUS_MODEL,
         "census/trainer/task.py": CENSUS_TASK, "penguins/trainer/__init__.py": "",
         "penguins/trainer/model.py": PENGUINS_MODEL, "penguins/trainer/task.py": PENGUINS_TASK}
REWRITTEN = PENGUINS_MODEL.replace("ds.batch(batch_size)", "ds.batch(batch_size, drop_remainder=True)")
EVALUATED = ("inference/eval pipeline (input_fn() is used for inference (by another module of the "
             "repository: census/trainer/task.py line {}), repeat(num_epochs) before this batch is not "
             "shown to repeat for ever)")


def facts() -> frozenset[str]:
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU002"})))
    return loaded_rules.repository_facts((path, text.encode("utf-8")) for path, text in FILES.items()).facts


def test_a_module_that_defines_functions_is_known_and_a_package_init_is_not() -> None:
    assert module_facts("census/trainer/model.py", CENSUS_MODEL) == {"npu002-module:census.trainer.model"}
    assert module_facts("census/trainer/__init__.py", CENSUS_MODEL) == set()
    assert module_facts("census/trainer/constants.py", "import tensorflow as tf\nSIZE = 4\n") == set()


def test_the_import_of_one_project_is_its_own_module_not_another_projects() -> None:
    found = assert_migrates({"NPU002"}, PENGUINS_MODEL, REWRITTEN, facts=facts(),
                            path="penguins/trainer/model.py")
    assert [(f.line, f.status) for f in found] == [(7, "migrated")]


def test_the_project_that_evaluates_with_its_own_input_fn_is_still_reported() -> None:
    found = assert_reports({"NPU002"}, CENSUS_MODEL, facts=facts(), path="census/trainer/model.py")
    assert [(f.line, f.status, f.message.split(": do not drop")[0]) for f in found] == [
        (7, "unmigrated", EVALUATED.format(8))]


def test_run_migrates_each_project_by_its_own_uses_with_either_engine_and_on_a_rerun(tmp_path: Path) -> None:
    files = {**FILES, "requirements.txt": "tensorflow==1.15.5\n"}
    trees = {}
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "repo", files)
        (root / "repos.txt").write_text("repo\n")
        for report in ("first", "again"):  # again: on the migrated branch, merged
            cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
                "--report-dir", report, "--workspace", "ws", cwd=root, expect=0)
            found = sorted((row["path"], row["line"], row["status"], row["message"].split(": do not drop")[0])
                           for row in read_csv(root / report / "findings.csv") if row["rule_id"] == "NPU002")
            moved = report == "again"  # the rerun reads the NPU001 import each file gained
            line = str(7 + moved)
            assert found == [("census/trainer/model.py", "7", "unmigrated", EVALUATED.format(8 + moved)),
                             ("penguins/trainer/model.py", line, "compliant" if moved else "migrated",
                              "drop_remainder=True is set" if moved
                              else "added drop_remainder=True (static batch shape for the NPU)")]
            assert show(repo, DEFAULT_BRANCH, "penguins/trainer/model.py").endswith(
                REWRITTEN.encode().split(b"\n", 1)[1])
            trees[engine, report] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
            git(repo, "merge", "-q", "--ff-only", DEFAULT_BRANCH)
        assert trees[engine, "again"] == trees[engine, "first"]
    assert trees["selective", "first"] == trees["full", "first"]


#: A low-level training loop: the evaluation graph reads ``args.eval_files`` (rvl: census's
#: ``tensorflowcore`` task, once refused only for another project's use).
CORE_TASK = '''import tensorflow as tf

import trainer.model as model


def run(args):
    with tf.Graph().as_default():
        features = model.input_fn(args.eval_files, batch_size=args.eval_batch_size, num_epochs=1)
    with tf.Graph().as_default():
        features = model.input_fn(args.train_files, batch_size=args.train_batch_size)
    return features
'''


def test_a_call_given_evaluation_names_is_an_evaluation_use() -> None:
    assert pipeline_use_facts("core/trainer/task.py", CORE_TASK) == {
        "npu002-use:core.trainer|trainer.model.input_fn|infer|core/trainer/task.py:8",
        "npu002-use:core.trainer|trainer.model.input_fn|train|core/trainer/task.py:10",
    }
    mixed = CORE_TASK.replace("args.eval_batch_size", "args.train_batch_size")
    assert pipeline_use_facts("core/trainer/task.py", mixed) == {
        "npu002-use:core.trainer|trainer.model.input_fn|train|core/trainer/task.py:10"}
