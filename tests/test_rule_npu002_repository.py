"""NPU002 across the files of one repository (issue 25, item 4): a pipeline built by a function
of one file that other files use for prediction or evaluation is never given
``drop_remainder=True``; one they use only for training is.

The facts come from the real analysis hook over all the files (``LoadedRules.repository_facts``), as ``run``
and ``check`` gather them; each file is then rewritten through ``npu_codemod.testing``, which
also checks that a second run changes nothing.
"""

from __future__ import annotations

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._pipeline_uses import pipeline_use_facts
from npu_codemod.testing import assert_migrates

INFERENCE = ("inference/eval pipeline ({}, no repeat() before this batch): do not drop the "
             "remainder; pad the final batch to batch_size with dummy examples and drop their "
             "outputs (NPU003)")

PIPELINES = '''"""Input pipelines of the sentence classifier."""
import tensorflow as tf

from classifier.data import vocabulary


def _parse(line):
    fields = tf.decode_csv(line, record_defaults=[[""], [0]], field_delim="\\t")
    return vocabulary.lookup(fields[0]), fields[1]


def text_pipeline(filenames, batch_size):
    """Sentences and labels from tab-separated files, in file order."""
    dataset = tf.data.TextLineDataset(filenames).map(_parse, num_parallel_calls=4)
    return dataset.padded_batch(batch_size, padded_shapes=([None], []))


def record_pipeline(filenames, batch_size):
    """Examples from TFRecord files, shuffled and repeated for as long as training runs."""
    dataset = tf.data.TFRecordDataset(filenames).map(vocabulary.parse_example)
    dataset = dataset.shuffle(10000).repeat()
    return dataset.padded_batch(batch_size, padded_shapes=([None], []))


def sharded_pipeline(pattern, batch_size):
    dataset = tf.data.Dataset.list_files(pattern).interleave(tf.data.TFRecordDataset, cycle_length=4)
    return dataset.map(vocabulary.parse_example).batch(batch_size)
'''
MAIN = '''"""Train the classifier, then label a file of sentences with it."""
import functools

import tensorflow as tf

from classifier import model
from classifier.data import pipelines

flags = tf.app.flags
flags.DEFINE_string("train_files", None, "TFRecord files to train on")
flags.DEFINE_string("predict_file", None, "sentences to label")
FLAGS = flags.FLAGS


def main(_):
    estimator = tf.estimator.Estimator(model.model_fn, model_dir="/tmp/classifier")
    estimator.train(input_fn=functools.partial(pipelines.record_pipeline, FLAGS.train_files, 64),
                    max_steps=10000)
    estimator.train(input_fn=lambda: pipelines.sharded_pipeline(FLAGS.train_files, 64), max_steps=100)
    labels = estimator.predict(input_fn=lambda: pipelines.text_pipeline([FLAGS.predict_file], 64))
    for sentence_labels in labels:
        print(sentence_labels["class"])


if __name__ == "__main__":
    tf.app.run()
'''
FILES = {"classifier/__init__.py": "", "classifier/data/__init__.py": "",
         "classifier/data/pipelines.py": PIPELINES, "classifier/main.py": MAIN}


def test_the_facts_say_what_each_imported_function_is_used_for() -> None:
    assert pipeline_use_facts("classifier/main.py", MAIN) == {
        "npu002-use:classifier|classifier.data.pipelines.record_pipeline|train|classifier/main.py:17",
        "npu002-use:classifier|classifier.data.pipelines.sharded_pipeline|train|classifier/main.py:19",
        "npu002-use:classifier|classifier.data.pipelines.text_pipeline|infer|classifier/main.py:20",
    }


def test_a_pipeline_another_file_predicts_with_keeps_its_last_batch() -> None:
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU002"})))
    facts = loaded_rules.repository_facts((path, text.encode("utf-8")) for path, text in FILES.items()).facts
    after = PIPELINES.replace(
        "    dataset = dataset.shuffle(10000).repeat()\n    return dataset.padded_batch(batch_size, "
        "padded_shapes=([None], []))\n",
        "    dataset = dataset.shuffle(10000).repeat()\n    return dataset.padded_batch(batch_size, "
        "padded_shapes=([None], []), drop_remainder=True)\n",
    ).replace(".batch(batch_size)\n", ".batch(batch_size, drop_remainder=True)\n")
    findings = assert_migrates({"NPU002"}, PIPELINES, after, facts=facts,
                               path="classifier/data/pipelines.py")
    assert [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings] == [
        (15, "unmigrated", INFERENCE.format(
            "text_pipeline() is used for inference (by another module of the repository: "
            "classifier/main.py line 20)")),
        (22, "migrated", "added drop_remainder=True (static batch shape for the NPU)"),
        (27, "migrated", "added drop_remainder=True (static batch shape for the NPU)"),
    ]
