"""NPU002: a call that passes its caller's ``mode`` on builds for whatever mode that is.

tensor2tensor's ``Problem.input_fn(self, mode, ...)`` calls ``data_reader.input_fn(dataset,
..., self.skip_random_fraction_when_training, ..., mode, ...)`` for training, evaluation and
prediction alike. A flag argument named for what to do *when training* is no evidence that the
call builds the training input: read so, it made the shared pipeline (``repeat()`` only when
training, one ``batch`` for every mode) a training pipeline, and ``drop_remainder=True`` lost
the last partial batch of every evaluation and prediction.
"""

from __future__ import annotations

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._pipeline_uses import pipeline_use_facts
from npu_codemod.testing import assert_migrates, assert_reports

READER = '''"""Input pipelines shared by every problem."""
import tensorflow as tf


def input_fn(dataset, skip_random_fraction_when_training, batch_size, mode,
             force_repeat=False, prevent_repeat=False):
    is_training = mode == tf.estimator.ModeKeys.TRAIN
    if (force_repeat or is_training) and not prevent_repeat:
        dataset = dataset.repeat()
    if is_training and skip_random_fraction_when_training:
        dataset = dataset.skip(7)
    dataset = dataset.map(tf.io.parse_single_example)
    return dataset.batch(batch_size)
'''
PROBLEM = '''"""The base class of the problems."""
import tensorflow as tf

from seqlib.utils import data_reader


class Problem(object):
    skip_random_fraction_when_training = True

    def input_fn(self, mode, batch_size, force_repeat=False):
        return data_reader.input_fn(
            tf.data.TFRecordDataset(self.files(mode)),
            self.skip_random_fraction_when_training,
            batch_size,
            mode,
            force_repeat=force_repeat)
'''
TRAINING = '''"""Train on the training split."""
import tensorflow as tf

from seqlib.utils import data_reader


def train(estimator, dataset, batch_size):
    estimator.train(lambda: data_reader.input_fn(dataset, True, batch_size, tf.estimator.ModeKeys.TRAIN))
'''
FILES = {"seqlib/__init__.py": "", "seqlib/utils/__init__.py": "", "seqlib/utils/data_reader.py": READER,
         "seqlib/data/problem.py": PROBLEM}


def _facts(files: dict[str, str]) -> frozenset[str]:
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU002"})))
    return loaded_rules.repository_facts((path, text.encode("utf-8")) for path, text in files.items()).facts


def test_a_call_passing_its_callers_mode_says_nothing_of_training() -> None:
    assert pipeline_use_facts("seqlib/data/problem.py", PROBLEM) == set()


def test_the_pipeline_it_shares_with_evaluation_keeps_its_last_batch() -> None:
    findings = assert_reports({"NPU002"}, READER, facts=_facts(FILES), path="seqlib/utils/data_reader.py")
    assert [(f.line, f.status, f.message.split(": do not drop")[0]) for f in findings] == [
        (13, "unmigrated", "inference/eval pipeline (shared by training and evaluation: it repeats only "
         "under 'if (force_repeat or is_training) and not prevent_repeat' (line 8))")]


def test_a_call_for_a_literal_training_mode_still_says_training() -> None:
    facts = _facts({**FILES, "seqlib/train.py": TRAINING})
    after = READER.replace("batch(batch_size)", "batch(batch_size, drop_remainder=True)")
    findings = assert_migrates({"NPU002"}, READER, after, facts=facts, path="seqlib/utils/data_reader.py")
    assert [(f.line, f.status) for f in findings] == [(13, "migrated")]


def test_a_call_passing_a_mode_and_naming_evaluation_still_says_evaluation() -> None:
    evaluation = PROBLEM.replace("self.skip_random_fraction_when_training", "self.eval_files")
    assert pipeline_use_facts("seqlib/data/problem.py", evaluation) == {
        "npu002-use:seqlib.data|seqlib.utils.data_reader.input_fn|infer|seqlib/data/problem.py:11"}
