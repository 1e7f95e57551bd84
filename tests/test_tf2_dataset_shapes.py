"""NPU064 on the ways real TF 2.x scripts build their datasets: returned by a function as a
tuple, ``tfds.load`` in its forms, distributed by a strategy, iterated by a custom loop,
``fit(x=...)``, ``padded_batch``, later ``prefetch``/``repeat``/``map``, an explicit
``drop_remainder=False``, one dataset for training and evaluation, Keras utilities that batch
themselves (``spec/rules-tf2.md``, issue #31)."""

from __future__ import annotations

from npu_codemod import testing

from support.rules import assert_migrates, assert_unchanged, messages, sites

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU064"}

DISTRIBUTED_LOOP = '''\
"""Train ResNet-18 on CIFAR-10 with tf.distribute and a custom training loop (TF 2.x)."""
import argparse

import tensorflow as tf
import tensorflow_datasets as tfds

from resnet import resnet18

AUTOTUNE = tf.data.AUTOTUNE


def preprocess(image, label):
    return tf.cast(image, tf.float32) / 255.0, label


def load(batch_size):
    (train, test), info = tfds.load("cifar10", split=["train", "test"], as_supervised=True,
                                    with_info=True)
    train = train.map(preprocess, num_parallel_calls=AUTOTUNE).shuffle(10000)
    train = train.batch(batch_size).prefetch(AUTOTUNE)
    test = test.map(preprocess).batch(batch_size)
    return train, test, info.splits["train"].num_examples


def main(args):
    strategy = tf.distribute.MirroredStrategy()
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    train, test, examples = load(global_batch)
    with strategy.scope():
        model = resnet18(num_classes=10)
        optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def step(images, labels):
        with tf.GradientTape() as tape:
            per_example = loss_fn(labels, model(images, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(images, labels):
        losses = strategy.run(step, args=(images, labels))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    dist_train = strategy.experimental_distribute_dataset(train)
    for epoch in range(args.epochs):
        for images, labels in dist_train:
            loss = distributed_step(images, labels)
        tf.print("epoch", epoch, "loss", loss, "of", examples, "examples")
    for images, labels in test:
        accuracy.update_state(labels, model(images, training=False))
    tf.print("accuracy", accuracy.result())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=30)
    main(parser.parse_args())
'''

TEXT_FIT = '''\
"""Sentiment on IMDB reviews and a character model, with Keras fit (TF 2.x)."""
import tensorflow as tf
import tensorflow_datasets as tfds

BATCH_SIZE = 64
BUFFER_SIZE = 10000
SEQ_LENGTH = 100


def reviews(encoder):
    dataset, info = tfds.load("imdb_reviews", with_info=True, as_supervised=True)
    train = dataset["train"].map(lambda text, label: (encoder(text), label))
    train = train.shuffle(BUFFER_SIZE).padded_batch(BATCH_SIZE, padded_shapes=([None], []))
    return train, info


def characters(ids):
    chunks = tf.data.Dataset.from_tensor_slices(ids).batch(SEQ_LENGTH + 1, drop_remainder=False)
    pairs = chunks.map(lambda chunk: (chunk[:-1], chunk[1:]))
    return pairs.shuffle(BUFFER_SIZE).batch(BATCH_SIZE).repeat()


def fit_both(classifier, char_model, encoder, ids, images_dir):
    train, info = reviews(encoder)
    classifier.fit(x=train, epochs=10)
    char_model.fit(characters(ids), epochs=30, steps_per_epoch=info.splits["train"].num_examples // BATCH_SIZE)
    holdout = tf.data.Dataset.from_tensor_slices(ids[-10000:]).map(lambda ids: (ids[:-1], ids[1:])).batch(BATCH_SIZE)
    char_model.fit(holdout, epochs=1)
    char_model.evaluate(holdout)
    photos = tf.keras.utils.image_dataset_from_directory(images_dir, image_size=(180, 180))
    return classifier.fit(photos.prefetch(tf.data.AUTOTUNE), epochs=3)
'''


def test_a_distributed_custom_loop_trains_on_the_tfds_split_and_evaluates_the_other() -> None:
    """``load`` returns (train, test, n): the first is distributed and iterated by the training
    loop, so its batch gets the flag; the second is named ``test`` and only iterated for the
    accuracy: reported."""
    after = DISTRIBUTED_LOOP.replace("train = train.batch(batch_size).prefetch(AUTOTUNE)",
                                     "train = train.batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)")
    findings = [f for f in assert_migrates(DISTRIBUTED_LOOP, after, RULES, facts=TF2_RUNTIME)
                if f.rule_id == "NPU064"]
    assert sites(findings) == [("NPU064", 20, 18, "migrated"), ("NPU064", 21, 32, "unmigrated")]
    assert messages(findings, "NPU064")[1].startswith("evaluation pipeline (a pipeline named test)")


def test_keras_fit_datasets_in_every_shape() -> None:
    """``padded_batch`` of a tfds split dict passed as ``fit(x=...)``; a window batch that says
    ``drop_remainder=False`` (kept, reported); a batch followed by ``repeat`` and returned into
    ``fit``; one dataset for ``fit`` and ``evaluate`` (training: rewritten); a Keras utility
    that batches itself (reported)."""
    after = TEXT_FIT.replace(
        "padded_batch(BATCH_SIZE, padded_shapes=([None], []))",
        "padded_batch(BATCH_SIZE, padded_shapes=([None], []), drop_remainder=True)").replace(
        "return pairs.shuffle(BUFFER_SIZE).batch(BATCH_SIZE).repeat()",
        "return pairs.shuffle(BUFFER_SIZE).batch(BATCH_SIZE, drop_remainder=True).repeat()").replace(
        "ids[1:])).batch(BATCH_SIZE)", "ids[1:])).batch(BATCH_SIZE, drop_remainder=True)")
    findings = [f for f in assert_migrates(TEXT_FIT, after, RULES, facts=TF2_RUNTIME)
                if f.rule_id == "NPU064"]
    assert sites(findings) == [("NPU064", 13, 39, "migrated"), ("NPU064", 18, 53, "unmigrated"),
                               ("NPU064", 20, 38, "migrated"), ("NPU064", 27, 100, "migrated"),
                               ("NPU064", 30, 13, "unmigrated")]
    said = messages(findings, "NPU064")
    assert said[1].startswith("drop_remainder is given as another value: kept")
    assert said[4].startswith("tf.keras.utils.image_dataset_from_directory batches the dataset itself, "
                              "without drop_remainder")


def test_a_keras_utility_asked_for_no_batches_is_left_to_the_batch_that_follows() -> None:
    source = ('import tensorflow as tf\n\n\ndef photos(model, images_dir):\n'
              '    ds = tf.keras.utils.image_dataset_from_directory(images_dir, batch_size=None)\n'
              '    model.fit(ds.batch(32, drop_remainder=True), epochs=3)\n')
    findings = [f for f in assert_unchanged(source, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert sites(findings) == [("NPU064", 6, 17, "migrated")]


FLOWERS = '''\
"""Flowers with Keras preprocessing layers, as the TF 2.x data augmentation tutorial writes it."""
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
BATCH_SIZE = 32
resize_and_rescale = tf.keras.Sequential([tf.keras.layers.Resizing(180, 180), tf.keras.layers.Rescaling(1. / 255)])
data_augmentation = tf.keras.Sequential([tf.keras.layers.RandomFlip("horizontal_and_vertical")])


def prepare(ds, shuffle=False, augment=False):
    ds = ds.map(lambda x, y: (resize_and_rescale(x), y), num_parallel_calls=AUTOTUNE)
    if shuffle:
        ds = ds.shuffle(1000)
    ds = ds.batch(BATCH_SIZE)
    if augment:
        ds = ds.map(lambda x, y: (data_augmentation(x, training=True), y), num_parallel_calls=AUTOTUNE)
    return ds.prefetch(buffer_size=AUTOTUNE)


def train(model, data_dir, epochs):
    splits = dict(validation_split=0.2, seed=123, image_size=(180, 180), batch_size=None)
    train_ds = tf.keras.utils.image_dataset_from_directory(data_dir, subset="training", **splits)
    val_ds = tf.keras.utils.image_dataset_from_directory(data_dir, subset="validation", **splits)
    train_ds = prepare(train_ds, shuffle=True, augment=True)
    val_ds = prepare(val_ds)
    return model.fit(train_ds, validation_data=val_ds, epochs=epochs)
'''


def test_a_function_every_call_of_which_passes_a_dataset_batches_one() -> None:
    """``prepare(ds, ...)`` is called with datasets only (Keras' loader, unbatched): its
    parameter is one, and its batch serves training and validation: rewritten. The loader's
    arguments are unpacked: whether it batches cannot be read, so it is not reported."""
    after = FLOWERS.replace("ds = ds.batch(BATCH_SIZE)", "ds = ds.batch(BATCH_SIZE, drop_remainder=True)")
    findings = [f for f in assert_migrates(FLOWERS, after, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert sites(findings) == [("NPU064", 14, 12, "migrated")]


INPUT_PIPELINE = '''\
"""Input pipeline helpers for the ImageNet trainer (called by train.py and eval.py)."""
import tensorflow as tf


class Preprocessor:
    def __init__(self, image_size):
        self.image_size = image_size

    def batched(self, dataset, batch_size, training):
        dataset = dataset.map(self.decode, num_parallel_calls=tf.data.AUTOTUNE)
        if training:
            dataset = dataset.shuffle(10000).repeat()
        return dataset.batch(batch_size)

    def decode(self, record):
        image = tf.io.decode_jpeg(record["image"], channels=3)
        return tf.image.resize(image, (self.image_size, self.image_size)), record["label"]


def pad_to_batch(ds, batch_size):
    return ds.padded_batch(batch_size, padded_shapes=([None], []), drop_remainder=True)


def batch_replay(memory, batch_size):
    return memory.batch(batch_size)
'''


def test_a_parameter_named_like_a_dataset_is_one_as_npu002_reads_it() -> None:
    """``dataset`` and ``ds`` parameters (a method's too) are datasets; ``memory`` is not: its
    one-argument batch gets the note."""
    after = INPUT_PIPELINE.replace("return dataset.batch(batch_size)",
                                   "return dataset.batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(INPUT_PIPELINE, after, RULES, facts=TF2_RUNTIME)
    assert sites([f for f in findings if f.rule_id == "NPU064"]) == [
        ("NPU064", 13, 23, "migrated"), ("NPU064", 21, 14, "migrated"), ("NPU064", 25, 18, "unmigrated")]


SPLITS = '''\
"""ImageNet-style datasets from TFDS, and a retrieval evaluation over a candidates dataset."""
import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds


def init_dataset(data_name, batch_size, image_size):
    dataset, info = tfds.load(data_name, with_info=True)
    resize = lambda example: (tf.image.resize(example["image"], (image_size, image_size)), example["label"])
    train_dataset = dataset["train"].shuffle(10000).map(resize).batch(batch_size)
    test_dataset = dataset.get("validation", dataset.get("test", None))
    if test_dataset is not None:
        test_dataset = test_dataset.map(resize).batch(batch_size)
    return train_dataset, test_dataset, info.splits["train"].num_examples


def evaluate(query_model, candidate_model, queries, candidates, k=10):
    ids = np.concatenate(list(candidates.batch(1000).map(lambda x: x["id"]).as_numpy_iterator()))
    scores = tf.linalg.matmul(query_model(queries), candidate_model(ids), transpose_b=True)
    return tf.math.top_k(scores, k=k)
'''


def test_a_tfds_dict_by_key_or_get_and_a_batch_only_tf_data_goes_on_from() -> None:
    """``dataset["train"]`` and ``dataset.get("validation", ...)`` of a ``tfds.load`` without a
    split are datasets; ``candidates`` is not shown to be one, but what its batch goes on to
    (``.as_numpy_iterator()``) only ``tf.data`` has: it is, made for evaluation."""
    after = SPLITS.replace(".map(resize).batch(batch_size)\n    test_dataset",
                           ".map(resize).batch(batch_size, drop_remainder=True)\n    test_dataset")
    findings = [f for f in assert_migrates(SPLITS, after, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert sites(findings) == [("NPU064", 10, 64, "migrated"), ("NPU064", 13, 48, "unmigrated"),
                               ("NPU064", 18, 41, "unmigrated")]
    said = messages(findings, "NPU064")
    assert said[1].startswith("evaluation pipeline (a pipeline named test_dataset)")
    assert said[2].startswith("evaluation pipeline (a pipeline named evaluate)")


def test_a_nested_input_function_reads_the_dataset_of_the_function_around_it() -> None:
    before = ('import tensorflow as tf\n\n\ndef main(model, files, batch_size):\n'
              '    records = tf.data.TFRecordDataset(files)\n\n'
              '    def input_fn():\n        return records.shuffle(100).batch(batch_size)\n\n'
              '    model.fit(input_fn(), epochs=3)\n')
    after = before.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    assert_migrates(before, after, RULES, facts=TF2_RUNTIME)


MAP_AND_BATCH = '''\
"""An ImageNet input function of the TF 2.x Model Garden era, with the fused map_and_batch."""
import tensorflow as tf
from tensorflow.data.experimental import map_and_batch

from imagenet.preprocessing import parse_record


def train_input_fn(files, batch_size, model, epochs):
    ds = tf.data.TFRecordDataset(files).shuffle(10000).repeat()
    ds = ds.apply(tf.data.experimental.map_and_batch(parse_record, batch_size, num_parallel_calls=8))
    model.fit(ds.prefetch(tf.data.AUTOTUNE), epochs=epochs, steps_per_epoch=1281167 // batch_size)
    val = tf.data.TFRecordDataset(files).apply(map_and_batch(parse_record, batch_size))
    return model.evaluate(val)
'''


def test_map_and_batch_is_a_batch_too() -> None:
    after = MAP_AND_BATCH.replace("batch_size, num_parallel_calls=8)",
                                  "batch_size, num_parallel_calls=8, drop_remainder=True)")
    findings = [f for f in assert_migrates(MAP_AND_BATCH, after, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert [(f.line, f.status) for f in findings] == [(10, "migrated"), (12, "unmigrated")]
    assert messages(findings, "NPU064")[1].startswith("evaluation pipeline (a pipeline named val)")


MODEL_TEST = '''\
"""Tests of the DCGAN training loop (run with --include-tests)."""
import tensorflow as tf

from dcgan import dcgan


class DcganTest(tf.test.TestCase):

    def test_one_epoch(self):
        train_dataset = tf.data.Dataset.from_tensor_slices(tf.zeros([64, 28, 28, 1])).batch(32)
        dcgan.Dcgan(epochs=1).train(train_dataset)
'''


def test_a_test_file_s_test_functions_do_not_name_evaluation() -> None:
    """``test_one_epoch`` trains: in a test file, ``test`` names the test, not an evaluation."""
    after = MODEL_TEST.replace(".batch(32)", ".batch(32, drop_remainder=True)")
    testing.assert_migrates(RULES, MODEL_TEST, after, facts=TF2_RUNTIME, path="dcgan/dcgan_test.py")


LOADER_CLASS = '''\
"""A data loader class, as many TF 2.x repositories write one."""
import tensorflow as tf


class DataLoader:
    def __init__(self, files, batch_size):
        self.records = tf.data.TFRecordDataset(files).map(self.parse, num_parallel_calls=tf.data.AUTOTUNE)
        self.batch_size = batch_size

    def parse(self, record):
        example = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([8], tf.float32)})
        return example["x"], tf.reduce_sum(example["x"])

    def training(self):
        return self.records.shuffle(1000).repeat().batch(self.batch_size)

    def replay(self):
        return self.memory.batch(self.batch_size)

    def attach(self, store):
        self.dataset = store.open("records")

    def from_store(self):
        return self.dataset.batch(self.batch_size)
'''


def test_an_attribute_the_file_assigns_a_dataset_is_one() -> None:
    """``self.records`` is assigned a ``tf.data`` chain in ``__init__``: its batch in another
    method batches a dataset; ``self.memory`` is not shown to be one, nor ``self.dataset``,
    named like one but assigned something else."""
    after = LOADER_CLASS.replace(".repeat().batch(self.batch_size)", ".repeat().batch(self.batch_size, drop_remainder=True)")
    findings = [f for f in assert_migrates(LOADER_CLASS, after, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert [(f.line, f.status) for f in findings] == [(15, "migrated"), (18, "unmigrated"), (24, "unmigrated")]


HUGGING_FACE_FIT = '''\
"""Fine-tune BERT on SST-2 with Keras, as the Hugging Face TF examples do."""
import tensorflow as tf
from datasets import load_dataset
from transformers import AutoTokenizer, TFAutoModelForSequenceClassification


def main(checkpoint="bert-base-cased", epochs=3):
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    raw = load_dataset("glue", "sst2").map(lambda batch: tokenizer(batch["sentence"], truncation=True), batched=True)
    model = TFAutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2)
    tf_train = model.prepare_tf_dataset(raw["train"], batch_size=16, shuffle=True, tokenizer=tokenizer)
    tf_validation = raw["validation"].to_tf_dataset(columns=["input_ids", "attention_mask"], label_cols=["label"],
                                                    batch_size=16, shuffle=False)
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-5))
    return model.fit(tf_train, validation_data=tf_validation, epochs=epochs)
'''


def test_hugging_face_pipelines_batched_by_their_library_are_reported() -> None:
    findings = [f for f in assert_unchanged(HUGGING_FACE_FIT, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU064"]
    assert [(f.line, f.status) for f in findings] == [(11, "unmigrated"), (12, "unmigrated")]
    said = messages(findings, "NPU064")
    assert said[0].startswith("prepare_tf_dataset(...) batches the tf.data pipeline itself: for training, "
                              "pass drop_remainder=True")
    assert said[1].startswith("evaluation pipeline (a pipeline named tf_validation)")
