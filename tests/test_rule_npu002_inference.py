"""NPU002 never drops the last batch of an inference pipeline (issue 25, item 4).

A pipeline built in a function named for decoding or export, in a function whose uses are
all for inference (``estimator.predict(input_fn=...)``, a call in ``decode_from_file``), or one
whose inputs are counted (``len(sentences)``) against its results, gets NPU003's padding
advice, never ``drop_remainder=True``: the last partial batch would be lost and indexing the
results by input position would fail.
"""

from __future__ import annotations

from support.rules import assert_migrates, run_rules

RULES = {"NPU002"}
GUIDE = (" (guide: Data preprocessing, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md"
         "#npu002-dataset-batch-drop-remainder)")
INFERENCE = ("inference/eval pipeline ({}, no repeat() before this batch): do not drop the "
             "remainder; pad the final batch to batch_size with dummy examples and drop their "
             "outputs (NPU003)")
ADDED = "added drop_remainder=True (static batch shape for the NPU)"

DECODING = '''# coding=utf-8
"""Decoding utilities: translate a file of sentences with a trained Estimator."""
from __future__ import absolute_import, division, print_function

import os

import numpy as np
import tensorflow as tf

from seqlib.data import text_encoder
from seqlib.utils import registry


def _get_sorted_inputs(filename, delimiter="\\n"):
    """Lines of ``filename`` sorted by length (longest first), and where each came from."""
    with tf.gfile.Open(filename) as handle:
        inputs = [line.strip() for line in handle.read().split(delimiter)]
    if not inputs[-1]:
        inputs.pop()
    order = sorted(range(len(inputs)), key=lambda i: len(inputs[i].split()), reverse=True)
    sorted_keys = {}
    sorted_inputs = []
    for position, index in enumerate(order):
        sorted_inputs.append(inputs[index])
        sorted_keys[index] = position
    return sorted_inputs, sorted_keys


def _encode(sentences, vocabulary, max_length):
    ids = [vocabulary.encode(sentence)[:max_length] + [text_encoder.EOS_ID] for sentence in sentences]
    width = max(len(x) for x in ids)
    return np.array([x + [0] * (width - len(x)) for x in ids], dtype=np.int32)


def decode_from_file(estimator, filename, hparams, output_filename):
    """Translate every line of ``filename``, in its original order, into ``output_filename``."""
    vocabulary = registry.vocabulary(hparams)
    sorted_inputs, sorted_keys = _get_sorted_inputs(filename)
    encoded = _encode(sorted_inputs, vocabulary, hparams.max_length)

    def input_fn(params):
        dataset = tf.data.Dataset.from_tensor_slices({"inputs": encoded})
        dataset = dataset.batch(params["batch_size"])
        return dataset.prefetch(1)

    decodes = []
    for result in estimator.predict(input_fn):
        decodes.append(vocabulary.decode(result["outputs"]))
    with tf.gfile.Open(output_filename, "w") as output:
        for index in range(len(sorted_inputs)):
            output.write(decodes[sorted_keys[index]] + "\\n")


def serving_input_fn(hparams):
    """Sentences fed one request at a time."""
    sentences = tf.placeholder(tf.string, [None], name="sentences")
    dataset = tf.data.Dataset.from_tensor_slices(sentences).map(registry.encoder(hparams))
    dataset = dataset.padded_batch(hparams.batch_size, padded_shapes=[None])
    features = tf.data.make_one_shot_iterator(dataset).get_next()
    return tf.estimator.export.ServingInputReceiver({"inputs": features}, {"sentences": sentences})


def score_input_fn(filename, batch_size):
    """Reference translations, scored in file order."""
    dataset = tf.data.TextLineDataset(filename).map(text_encoder.split_pair)
    return dataset.batch(batch_size)


def score_file(estimator, filename, batch_size):
    scores = list(estimator.evaluate(input_fn=lambda: score_input_fn(filename, batch_size)))
    print("BLEU", np.mean(scores))


def translate(estimator, sentences, vocabulary, batch_size=32):
    """Translations of ``sentences``, in their order."""
    encoded = _encode(sentences, vocabulary, 256)
    dataset = tf.data.Dataset.from_tensor_slices(encoded).batch(batch_size)
    outputs = [vocabulary.decode(x["outputs"]) for x in estimator.predict(lambda: dataset)]
    assert len(outputs) == len(sentences)
    return outputs


def train_input_fn(filenames, batch_size):
    dataset = tf.data.TFRecordDataset(filenames).map(text_encoder.parse_pair)
    dataset = dataset.shuffle(10000).repeat()
    return dataset.padded_batch(batch_size, padded_shapes=([None], [None]))


def input_pipeline(filenames, batch_size):
    """Unrepeated epochs of training pairs; the loop in train_epochs repeats them."""
    dataset = tf.data.TFRecordDataset(filenames).map(text_encoder.parse_pair)
    return dataset.batch(batch_size)


def train_epochs(estimator, filenames, batch_size, epochs):
    for epoch in range(epochs):
        estimator.train(input_fn=lambda: input_pipeline(filenames, batch_size))
        print("epoch %d of %d files done" % (epoch, len(filenames)))
'''


def test_decoding_pipelines_get_padding_advice_training_ones_the_keyword() -> None:
    after = DECODING.replace(
        "    return dataset.padded_batch(batch_size, padded_shapes=([None], [None]))\n",
        "    return dataset.padded_batch(batch_size, padded_shapes=([None], [None]), drop_remainder=True)\n",
    ).replace("    return dataset.batch(batch_size)\n\n\ndef train_epochs",
              "    return dataset.batch(batch_size, drop_remainder=True)\n\n\ndef train_epochs")
    findings = assert_migrates(DECODING, after, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (43, "unmigrated", INFERENCE.format("in decode_from_file()") + GUIDE),
        (58, "unmigrated", INFERENCE.format("in serving_input_fn()") + GUIDE),
        (66, "unmigrated", INFERENCE.format(
            "score_input_fn() is used for inference (passed to estimator.evaluate() on line 70)") + GUIDE),
        (77, "unmigrated", INFERENCE.format(
            "its input sentences is counted (len(sentences) on line 79), so its results must "
            "match the inputs one to one") + GUIDE),
        (86, "migrated", ADDED),
        (92, "migrated", ADDED),
    ]


def test_a_pipeline_shared_by_training_and_evaluation_keeps_its_last_batch() -> None:
    source = DECODING + ('\n\ndef evaluate_epochs(estimator, filenames, batch_size):\n'
                         '    return estimator.evaluate(input_fn=lambda: input_pipeline(filenames, batch_size))\n')
    _, findings = run_rules(source, RULES)
    assert [(f.status, f.message) for f in findings if f.line == 92] == [
        ("unmigrated", INFERENCE.format("input_pipeline() is used for inference (passed to "
                                        "estimator.evaluate() on line 102) and for training") + GUIDE),
    ]


READER = '''"""Input pipelines shared by the Estimator's modes."""
import multiprocessing

import tensorflow as tf

from seqlib.data import problems

ModeKeys = tf.estimator.ModeKeys


def _cast_ints(features):
    return {key: tf.to_int32(value) if value.dtype == tf.int64 else value
            for key, value in features.items()}


def input_fn(dataset, mode, hparams, force_repeat=False):
    """The batches of ``dataset`` for ``mode``: repeated and shuffled when training."""
    is_training = mode == ModeKeys.TRAIN
    num_threads = multiprocessing.cpu_count() if is_training else 1
    dataset = dataset.map(_cast_ints, num_parallel_calls=num_threads)
    if force_repeat or is_training:
        dataset = dataset.shuffle(hparams.shuffle_buffer_size)
        dataset = dataset.repeat()
    dataset = dataset.batch(hparams.batch_size)
    return dataset.prefetch(2)


def interpolate(problem_name, hparams, data_dir):
    """Frames of the first examples of the test split, one pair per batch."""
    problem = problems.problem(problem_name)
    frames = problem.dataset(ModeKeys.PREDICT, shuffle_files=False, data_dir=data_dir)
    frames = frames.batch(hparams.batch_size)
    return frames.make_one_shot_iterator().get_next()


def warm_start_batch(problem_name, hparams, data_dir):
    init_dataset = problems.problem(problem_name).dataset(ModeKeys.TRAIN, data_dir=data_dir)
    init_dataset = init_dataset.batch(hparams.init_batch_size)
    return init_dataset.make_one_shot_iterator().get_next()


def make_dataset(images, labels, batch_size, training):
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    if training:
        dataset = dataset.shuffle(10000).repeat()
    return dataset.batch(batch_size)


def fit(images, labels):
    features, targets = make_dataset(images, labels, 100, training=True).make_one_shot_iterator().get_next()
    return features, targets


def record_dataset(files, batch_size):
    dataset = tf.data.TFRecordDataset(files).map(problems.parse_example)
    return dataset.batch(batch_size)


def fit_keras(model, train_files, validation_files, epochs):
    model.fit(record_dataset(train_files, 32), epochs=epochs,
              validation_data=record_dataset(validation_files, 32))
'''


def test_a_pipeline_repeated_only_when_training_or_made_for_prediction_is_not_dropped() -> None:
    after = READER.replace("    init_dataset = init_dataset.batch(hparams.init_batch_size)\n",
                           "    init_dataset = init_dataset.batch(hparams.init_batch_size, drop_remainder=True)\n"
                           ).replace("    return dataset.batch(batch_size)\n",
                                     "    return dataset.batch(batch_size, drop_remainder=True)\n", 1)
    findings = assert_migrates(READER, after, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (24, "unmigrated", INFERENCE.replace(", no repeat() before this batch", "").format(
            "shared by training and evaluation: it repeats only under 'if force_repeat or "
            "is_training' (line 21)") + GUIDE),
        (32, "unmigrated", "if this is a tf.data.Dataset: "
                           + INFERENCE.format("made for ModeKeys.PREDICT") + GUIDE),
        (38, "migrated", ADDED),
        (46, "migrated", ADDED),  # make_dataset: every call passes training=True
        (56, "unmigrated", INFERENCE.format(
            "record_dataset() is used for inference (passed as validation_data= on line 61)") + GUIDE),
    ]
    shared = READER.replace("make_dataset(images, labels, 100, training=True)",
                            "make_dataset(images, labels, 100, training=len(labels) > 1000)")
    _, findings = run_rules(shared, RULES)
    assert [f.status for f in findings if f.line == 46] == ["unmigrated"]


TRANSCRIBING = '''\
"""Feeding: split a long recording into segments and batch them for the acoustic model."""
import tensorflow as tf


def split_audio_file(segments, batch_size):
    dataset = tf.data.Dataset.from_generator(lambda: segments, output_types=tf.float32)
    return dataset.padded_batch(batch_size, padded_shapes=[None])


def count_examples(dataset, batch_size=1000):
    dataset = dataset.batch(batch_size)
    return dataset.reduce(tf.constant(0, tf.int64), lambda n, b: n + tf.cast(tf.shape(b)[0], tf.int64))


def transcribe_file(path, model):
    batches = split_audio_file(load(path), 16)
    return [model(batch) for batch in batches]
'''


def test_a_transcription_or_a_count_of_batches_keeps_its_last_batch() -> None:
    """A transcription loses its last segments, a count its last elements: both reported."""
    _, findings = run_rules(TRANSCRIBING, RULES)
    assert [(f.line, f.status) for f in findings] == [(7, "unmigrated"), (11, "unmigrated")]
    assert "split_audio_file() is used for inference" in findings[0].message
    assert "its batches are reduced (dataset.reduce(...) on line 12)" in findings[1].message


INPUTS = '''\
import tensorflow as tf


class Data:
    def __init__(self, images, labels, batch_size):
        self._images, self._labels, self._bs = images, labels, batch_size

    def train_fn(self):
        ds = tf.data.Dataset.from_tensor_slices((self._images, self._labels))
        return ds.shuffle(64).repeat().batch(self._bs)

    def eval_fn(self, count=1):
        ds = tf.data.Dataset.from_tensor_slices((self._images, self._labels))
        ds = ds.repeat(count=count)
        return ds.batch(self._bs)

    def test_fn(self, count=1):
        ds = tf.data.Dataset.from_tensor_slices(self._images)
        ds = ds.repeat(count)
        return ds.batch(self._bs)
'''


def test_eval_and_test_input_functions_repeated_a_finite_number_of_times_keep_their_last_batch() -> None:
    """UNet_Medical's data loader: estimator.evaluate/predict with ``repeat(count)``, count 1 by
    default, must see all 30 images, not the 24 of three full batches of 8."""
    after = INPUTS.replace("repeat().batch(self._bs)", "repeat().batch(self._bs, drop_remainder=True)")
    findings = assert_migrates(INPUTS, after, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (10, "migrated", ADDED),
        (15, "unmigrated", INFERENCE.replace("no repeat()", "repeat(count=count)").format("in eval_fn()")
         .replace("before this batch)", "before this batch is not shown to repeat for ever)") + GUIDE),
        (20, "unmigrated", INFERENCE.replace("no repeat()", "repeat(count)").format("in test_fn()")
         .replace("before this batch)", "before this batch is not shown to repeat for ever)") + GUIDE)]


#: NVIDIA/OpenSeq2Seq's ``open_seq2seq/data/text2text/text2text.py``: one data layer serves
#: training (``repeat: True`` in the config) and evaluation and inference (``repeat: False``),
#: whose translations must cover every sentence.
SEQ2SEQ_LAYER = '''import tensorflow as tf


class ParallelTextDataLayer(DataLayer):
    def build_graph(self):
        _src_tgt_dataset = tf.data.Dataset.zip((self._sources, self._targets)).cache()
        if self.params['shuffle']:
            _src_tgt_dataset = _src_tgt_dataset.shuffle(buffer_size=self._shuffle_buffer_size)
        if self.params['repeat']:
            _src_tgt_dataset = _src_tgt_dataset.repeat()
        self.batched_dataset = _src_tgt_dataset.padded_batch(
            self._batch_size,
            padded_shapes=((tf.TensorShape([None]), tf.TensorShape([])),
                           (tf.TensorShape([None]), tf.TensorShape([])))).prefetch(buffer_size=4)
        self._iterator = self.batched_dataset.make_initializable_iterator()
'''


def test_a_pipeline_repeated_only_under_a_repeat_flag_is_not_dropped() -> None:
    """With the flag off (evaluation, inference) the data is read once: dropping the remainder
    lost the last sentences' translations."""
    _, findings = run_rules(SEQ2SEQ_LAYER, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (11, "unmigrated", INFERENCE.replace(", no repeat() before this batch", "").format(
            "shared by training and evaluation: it repeats only under 'if self.params['repeat']' "
            "(line 9), so with that flag off it is read once, as evaluation and inference read it")
         + GUIDE)]
