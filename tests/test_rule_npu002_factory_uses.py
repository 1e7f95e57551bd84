"""NPU002 for an ``input_fn`` factory of a library module (review P7): another file of the
repository keeps what the factory returns in a variable (``test_input = make_input_fn(...)``)
and passes it to ``estimator.train`` and ``estimator.evaluate``. The spec: "a pipeline shared
by training and evaluation is reported, not rewritten"; "a finite repeat(n) ends in a partial
batch". The evaluation batch would otherwise be dropped: 40 records with a batch of 2**14 give
no batch at all.

When nothing in the repository uses the factory (its callers are outside, the library's users),
its ``repeat(num_epochs)`` with ``num_epochs=1`` by default reads the data once, as evaluation
does: it is not taken for training either.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._pipeline_uses import pipeline_use_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show

INPUTS = '''"""Input functions of the click-through estimators."""
import tensorflow as tf


def make_input_fn(filenames, batch_size=256, num_epochs=1, shuffle_factor=0):
    def input_fn():
        dataset = tf.data.TFRecordDataset(filenames)
        if shuffle_factor > 0:
            dataset = dataset.shuffle(batch_size * shuffle_factor)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        return dataset.prefetch(1)
    return input_fn
'''
REWRITTEN = INPUTS.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
#: The names say what each input is for.
NAMED = '''import tensorflow as tf

from lib.inputs import make_input_fn


def model_fn(features, labels, mode):
    raise NotImplementedError


if __name__ == "__main__":
    train_input = make_input_fn("train.tfrecords", batch_size=256, shuffle_factor=10)
    test_input = make_input_fn("test.tfrecords", batch_size=2 ** 14)
    estimator = tf.estimator.Estimator(model_fn)
    estimator.train(train_input)
    print(estimator.evaluate(test_input))
'''
#: The names say nothing: the calls they are passed to do.
PASSED = '''import tensorflow as tf

from lib import inputs


def main(model_fn):
    first = inputs.make_input_fn(["a.tfrecords"], 64, num_epochs=5)
    second = inputs.make_input_fn(["b.tfrecords"], 64)
    estimator = tf.estimator.Estimator(model_fn)
    estimator.train(input_fn=first)
    return estimator.evaluate(input_fn=second)
'''
#: Through the package's re-export, the factory called in the argument.
REEXPORTED = '''import tensorflow as tf

from lib import make_input_fn


def main(estimator):
    estimator.train(make_input_fn("train.tfrecords", num_epochs=3))
    return estimator.evaluate(input_fn=make_input_fn("test.tfrecords"))
'''
TRAIN_ONLY = '''import tensorflow as tf

from lib.inputs import make_input_fn


def main(estimator):
    train_input = make_input_fn("train.tfrecords", num_epochs=10)
    estimator.train(train_input)
'''
LIBRARY = {"lib/__init__.py": "", "lib/inputs.py": INPUTS}
PACKAGE = {"lib/__init__.py": "from .inputs import make_input_fn\n", "lib/inputs.py": INPUTS}
REPORTED = ("inference/eval pipeline ({}, repeat(num_epochs) before this batch is not shown to repeat "
            "for ever): do not drop the remainder; pad the final batch to batch_size with dummy "
            "examples and drop their outputs (NPU003)")
SHARED = "make_input_fn() is used for inference (by another module of the repository: {}) and for training"
ONE_PASS = ("nothing in the repository says whether make_input_fn() feeds training or evaluation, and "
            "its num_epochs=1 by default reads the data once, as evaluation does")


def npu002_findings(files: dict[str, str], after: str = INPUTS) -> list[tuple[int, str, str]]:
    """NPU002's findings in lib/inputs.py with the facts of all ``files`` (both engines); the
    file must become ``after`` (and stay so on a second run)."""
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU002"})))
    facts = loaded_rules.repository_facts((path, text.encode("utf-8")) for path, text in files.items()).facts
    if after == INPUTS:
        findings = assert_reports({"NPU002"}, INPUTS, facts=facts, path="lib/inputs.py")
    else:
        findings = assert_migrates({"NPU002"}, INPUTS, after, facts=facts, path="lib/inputs.py")
    return [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings]


def test_the_facts_follow_what_the_factory_returns_to_the_call_it_is_passed_to() -> None:
    assert pipeline_use_facts("examples/named.py", NAMED) == {
        "npu002-use:examples|lib.inputs.make_input_fn|train|examples/named.py:11",
        "npu002-use:examples|lib.inputs.make_input_fn|infer|examples/named.py:12",
    }
    assert pipeline_use_facts("examples/passed.py", PASSED) == {
        "npu002-use:examples|lib.inputs.make_input_fn|train|examples/passed.py:10",
        "npu002-use:examples|lib.inputs.make_input_fn|infer|examples/passed.py:11",
    }


@pytest.mark.parametrize(("script", "where"), [
    (NAMED, "examples/run.py line 12"),
    (PASSED, "examples/run.py line 11"),
], ids=["named", "passed"])
def test_a_factory_another_file_trains_and_evaluates_with_is_reported(script: str, where: str) -> None:
    assert npu002_findings({**LIBRARY, "examples/run.py": script}) == [
        (10, "unmigrated", REPORTED.format(SHARED.format(where)))]


def test_a_factory_imported_through_the_package_re_export_is_reported() -> None:
    assert npu002_findings({**PACKAGE, "examples/run.py": REEXPORTED}) == [
        (10, "unmigrated", REPORTED.format(SHARED.format("examples/run.py line 8")))]


def test_a_factory_the_repository_only_trains_with_is_rewritten() -> None:
    assert npu002_findings({**LIBRARY, "examples/train.py": TRAIN_ONLY}, after=REWRITTEN) == [
        (10, "migrated", "added drop_remainder=True (static batch shape for the NPU)")]


def test_a_factory_nothing_in_the_repository_uses_is_not_taken_for_training() -> None:
    assert npu002_findings(LIBRARY) == [(10, "unmigrated", REPORTED.format(ONE_PASS))]


@pytest.mark.parametrize("default", ["None", "-1", "10"])
def test_a_factory_that_does_not_read_once_by_default_is_rewritten(default: str) -> None:
    before = INPUTS.replace("num_epochs=1,", f"num_epochs={default},")
    after = before.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    findings = assert_migrates({"NPU002"}, before, after, path="lib/inputs.py")
    assert [(f.line, f.status) for f in findings] == [(10, "migrated")]


def test_run_reports_the_shared_factory_with_either_engine_and_again_on_the_migrated_branch(
        tmp_path: Path) -> None:
    files = {**LIBRARY, "examples/run.py": NAMED, "requirements.txt": "tensorflow==1.15.5\n"}
    trees = {}
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "repo", files)
        (root / "repos.txt").write_text("repo\n")
        for report in ("first", "again"):  # again: on the migrated branch, merged
            cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
                "--report-dir", report, "--workspace", "ws", cwd=root, expect=0)
            found = [(row["path"], row["line"], row["status"], row["message"].split(" (guide")[0])
                     for row in read_csv(root / report / "findings.csv") if row["rule_id"] == "NPU002"]
            # the script gains the NPU001 import: its lines move down one
            where = f"examples/run.py line {12 + (report == 'again')}"
            assert found == [("lib/inputs.py", "10", "unmigrated", REPORTED.format(SHARED.format(where)))]
            assert b".batch(batch_size)\n" in show(repo, DEFAULT_BRANCH, "lib/inputs.py")
            trees[engine, report] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
            git(repo, "merge", "-q", "--ff-only", DEFAULT_BRANCH)
        assert trees[engine, "again"] == trees[engine, "first"]
    assert trees["selective", "first"] == trees["full", "first"]


def test_in_the_same_file_the_factorys_result_is_followed_to_evaluate_too() -> None:
    source = INPUTS + "\n\n" + PASSED.split("\n\n\n", 1)[1].replace("inputs.make_input_fn", "make_input_fn")
    findings = assert_reports({"NPU002"}, source, path="lib/inputs.py")
    assert [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings] == [
        (10, "unmigrated", REPORTED.format(
            "input_fn() is used for inference (make_input_fn() is used for inference (passed to "
            "estimator.evaluate() on line 20) and for training, line 12)"))]
