"""NPU064 and NPU069 follow TF 2.x datasets across the files of a repository: a pipeline module
whose functions return datasets, re-exported by its package, used for training by one script
and for evaluation only by another (``spec/rules-tf2.md``, issue #31)."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.engine import FILE_RULE_ID
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.packs import repository_facts
from support.rules import messages

PACKAGE_INIT = '''\
"""Input pipelines of the pets segmentation model."""
from pets.data.pipeline import make_dataset, make_pipeline, read_split

__all__ = ["make_dataset", "make_pipeline", "read_split"]
'''

PIPELINE = '''\
"""tf.data pipelines for the Oxford pets: decoding, augmentation, batching."""
import tensorflow as tf
import tensorflow_datasets as tfds

AUTOTUNE = tf.data.AUTOTUNE
IMAGE_SIZE = 128


def normalize(example):
    image = tf.image.resize(example["image"], (IMAGE_SIZE, IMAGE_SIZE))
    mask = tf.image.resize(example["segmentation_mask"], (IMAGE_SIZE, IMAGE_SIZE))
    return tf.cast(image, tf.float32) / 255.0, mask - 1


def augment(image, mask):
    if tf.random.uniform(()) > 0.5:
        image = tf.image.flip_left_right(image)
        mask = tf.image.flip_left_right(mask)
    return image, mask


def read_split(split, data_dir=None):
    """The decoded examples of one split, not batched."""
    return tfds.load("oxford_iiit_pet:3.*.*", split=split, data_dir=data_dir)


def make_dataset(split, batch_size, training):
    ds = read_split(split).map(normalize, num_parallel_calls=AUTOTUNE)
    if training:
        ds = ds.cache().shuffle(1000).map(augment).repeat()
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def make_pipeline(files, batch_size):
    features = {"image": tf.io.FixedLenFeature([], tf.string),
                "segmentation_mask": tf.io.FixedLenFeature([], tf.string)}
    ds = tf.data.TFRecordDataset(files).map(lambda record: tf.io.parse_single_example(record, features))
    return ds.map(normalize).batch(batch_size)
'''

TRAIN = '''\
"""Train the U-Net: python -m pets.train --epochs 20"""
import argparse

import tensorflow as tf

from pets.data import make_dataset, read_split
from pets.model import unet


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=20)
    return parser.parse_args()


def main(args):
    model = unet(output_channels=3)
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    train_ds = make_dataset("train", args.batch_size, training=True)
    val_ds = make_dataset("test", args.batch_size, training=False)
    model.fit(train_ds, epochs=args.epochs, steps_per_epoch=3680 // args.batch_size,
              validation_data=val_ds)
    # a few training images through the trained model, as a sanity check
    replay = read_split("train").take(16).map(lambda example: example["image"]).batch(args.batch_size)
    for images in replay:
        tf.print(tf.reduce_mean(model(tf.cast(images, tf.float32), training=False)))


if __name__ == "__main__":
    main(parse_args())
'''

EVALUATE = '''\
"""Score a saved model on held-out TFRecords: python -m pets.evaluate model/ test-*.tfrecord"""
import sys

import tensorflow as tf

from pets.data.pipeline import make_pipeline


def score(saved_model, files):
    model = tf.keras.models.load_model(saved_model)
    return model.evaluate(make_pipeline(files, 64), return_dict=True)


if __name__ == "__main__":
    print(score(sys.argv[1], sys.argv[2:]))
'''

MODEL = '''\
"""A small U-Net."""
import tensorflow as tf


def unet(output_channels):
    inputs = tf.keras.layers.Input(shape=[128, 128, 3])
    x = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    outputs = tf.keras.layers.Conv2D(output_channels, 1)(x)
    return tf.keras.Model(inputs=inputs, outputs=outputs)
'''

FILES = {"pets/__init__.py": '"""Oxford pets segmentation."""\n', "pets/data/__init__.py": PACKAGE_INIT,
         "pets/data/pipeline.py": PIPELINE, "pets/train.py": TRAIN, "pets/evaluate.py": EVALUATE,
         "pets/model.py": MODEL, "requirements.txt": "tensorflow==2.6.5\ntensorflow-datasets\n"}
FACTS = repository_facts({path: text for path, text in FILES.items() if path.endswith(".py")}) \
    | {"tf-runtime:2"}


def test_a_pipeline_module_s_training_batch_is_rewritten_its_evaluation_only_one_reported() -> None:
    """``make_dataset`` batches ``read_split``'s dataset (a function of the file) for training and
    validation: rewritten. ``make_pipeline`` is used by ``evaluate.py`` only, for ``evaluate``:
    reported, the evaluation would lose its last samples. ``tf.data.AUTOTUNE`` makes the module a
    ``tf2`` file, which without NPU061 gets its note."""
    after = PIPELINE.replace("return ds.batch(batch_size).prefetch(AUTOTUNE)",
                             "return ds.batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)")
    findings = assert_migrates({"NPU064"}, PIPELINE, after, facts=FACTS, path="pets/data/pipeline.py",
                               findings=[(FILE_RULE_ID, 1, 0, "unmigrated"), ("NPU064", 31, 14, "migrated"),
                                         ("NPU064", 38, 29, "unmigrated")])
    assert messages(findings, "NPU064")[1].startswith(
        "evaluation pipeline (evaluate): evaluation would silently drop the last samples")


def test_a_dataset_returned_by_a_function_the_package_re_exports_is_known_in_the_script() -> None:
    """``read_split`` comes from ``pets.data`` (its ``__init__`` re-exports it): its result is a
    dataset, so the replay's batch is one (iterated: not evaluation-only). The script fits
    ``pets.model.unet``'s Keras model: a ``tf2`` file, which without NPU061 gets its note."""
    after = TRAIN.replace(".batch(args.batch_size)\n", ".batch(args.batch_size, drop_remainder=True)\n")
    assert_migrates({"NPU064"}, TRAIN, after, facts=FACTS, path="pets/train.py",
                    findings=[(FILE_RULE_ID, 1, 0, "unmigrated"), ("NPU064", 26, 80, "migrated")])


def test_a_run_over_the_repository_rewrites_the_training_batches_once(tmp_path: Path) -> None:
    """The command line on the real repository: the pipeline module and the replay get the
    flag, the evaluation-only pipeline is reported, and a second run changes nothing."""
    make_repo(tmp_path / "pets", FILES)
    (tmp_path / "repos.txt").write_text("pets\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--rules", "NPU064",
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert record["files_changed"] == ["pets/data/pipeline.py", "pets/train.py"]
    pipeline = show(tmp_path / "pets", "npu-codemod/sess-run-to-npu", "pets/data/pipeline.py").decode()
    assert "return ds.batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)" in pipeline
    assert "return ds.map(normalize).batch(batch_size)\n" in pipeline
    assert sorted((f["path"], f["line"], f["status"]) for f in record["findings"] if f["rule_id"] == "NPU064") == [
        ("pets/data/pipeline.py", 31, "migrated"), ("pets/data/pipeline.py", 38, "unmigrated"),
        ("pets/train.py", 26, "migrated")]
    cli("run", "--repos", "repos.txt", "--report-dir", "again", "--jobs", "1", "--rules", "NPU064",
        cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "again")["status"] == "unchanged"


def test_the_evaluation_script_has_no_batch_of_its_own() -> None:
    assert_reports({"NPU064"}, EVALUATE, facts=FACTS, path="pets/evaluate.py", findings=[])


def test_npu069_reports_the_training_batch_of_the_pipeline_module_and_not_the_evaluation_one() -> None:
    findings = assert_reports({"NPU069"}, PIPELINE, facts=FACTS, path="pets/data/pipeline.py",
                              findings=[(FILE_RULE_ID, 1, 0, "unmigrated"), ("NPU069", 31, 14, "unmigrated")])
    assert messages(findings, "NPU069")[0].startswith(
        "shard per NPU worker before batching: ds, batch_size = npu.distribute.shard_and_rebatch_dataset("
        "ds, batch_size)")


WINDOWS = '''\
"""Sliding windows over a univariate series."""
import tensorflow as tf


def windows(series, size, batch_size):
    ds = tf.data.Dataset.from_tensor_slices(series).window(size + 1, shift=1, drop_remainder=True)
    ds = ds.flat_map(lambda window: window.batch(size + 1)).map(lambda w: (w[:-1], w[-1:]))
    return ds.shuffle(1000).batch(batch_size).prefetch(1)
'''

FORECAST = '''\
"""Train the forecaster: python forecast.py series.csv"""
import sys

import numpy as np

from series.trainer import Trainer
from series.windows import windows

if __name__ == "__main__":
    trainer = Trainer(steps=10000)
    trainer.run(windows(np.loadtxt(sys.argv[1]), 30, 32))
'''

WINDOWS_TEST = '''\
"""The windows are (30, 1) pairs."""
import numpy as np
import tensorflow as tf

from series.windows import windows


def test_windows_feed_a_dense_model():
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(1)])
    model.compile(loss="mse")
    assert model.evaluate(windows(np.arange(100.0), 30, 8)) >= 0
'''


def test_what_a_test_file_does_with_a_pipeline_says_nothing_of_its_use() -> None:
    """The script trains through its own ``Trainer`` (not seen); the test evaluates: the
    pipeline is not evaluation-only, it gets the flag."""
    facts = repository_facts({"series/__init__.py": "", "series/windows.py": WINDOWS, "forecast.py": FORECAST,
                              "tests/test_windows.py": WINDOWS_TEST}) | {"tf-runtime:2"}
    after = WINDOWS.replace(".batch(batch_size).prefetch(1)", ".batch(batch_size, drop_remainder=True).prefetch(1)")
    findings = assert_migrates({"NPU064"}, WINDOWS, after, facts=facts, path="series/windows.py")
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU064"] == [(7, "unmigrated"), (8, "migrated")]
