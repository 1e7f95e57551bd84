"""NPU064 tf2-drop-remainder: every TF 2.x training dataset gets drop_remainder=True, every
evaluation-only one is reported (``spec/rules-tf2.md``)."""

from __future__ import annotations

from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import CUSTOM_LOOP, KERAS_FIT

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU064"}

SEGMENTATION = '''\
"""U-Net on the Oxford pets with Keras fit; a validation split and a replay of test images."""
import tensorflow as tf

from pets import load_split, normalize

AUTOTUNE = tf.data.experimental.AUTOTUNE


def make_pipelines(batch_size):
    train = load_split("train")
    train_ds = tf.data.Dataset.from_tensor_slices(train).map(normalize, num_parallel_calls=AUTOTUNE)
    train_ds = train_ds.cache().shuffle(1000).batch(batch_size).repeat()
    val_ds = tf.data.Dataset.from_tensor_slices(load_split("test")).map(normalize)
    val_ds = val_ds.batch(batch_size)
    return train_ds, val_ds


def fit(model, batch_size, epochs, steps):
    train_ds, val_ds = make_pipelines(batch_size)
    history = model.fit(train_ds, epochs=epochs, steps_per_epoch=steps, validation_data=val_ds)
    scores = tf.data.Dataset.from_tensor_slices(load_split("test")).map(normalize)
    model.evaluate(scores.batch(batch_size))
    return history


def sample_replay(memory, batch_size):
    return memory.batch(batch_size)


def padded(tokens, batch_size):
    ds = tf.data.Dataset.from_generator(tokens, output_types=tf.int32)
    return ds.padded_batch(batch_size, padded_shapes=[None], drop_remainder=False)
'''


def test_a_keras_fit_dataset_gets_drop_remainder() -> None:
    after = KERAS_FIT.replace("train_ds = train_ds.batch(args.batch_size)",
                              "train_ds = train_ds.batch(args.batch_size, drop_remainder=True)")
    findings = assert_migrates(KERAS_FIT, after, RULES, facts=TF2_RUNTIME)
    assert [s for s in sites(findings) if s[0] == "NPU064"] == [("NPU064", 23, 24, "migrated")]


def test_a_custom_loop_pipeline_gets_drop_remainder() -> None:
    after = CUSTOM_LOOP.replace("return dataset.batch(batch_size).prefetch(",
                                "return dataset.batch(batch_size, drop_remainder=True).prefetch(")
    assert_migrates(CUSTOM_LOOP, after, RULES, facts=TF2_RUNTIME)


def test_training_is_rewritten_evaluation_and_unknown_receivers_are_reported() -> None:
    after = SEGMENTATION.replace(".shuffle(1000).batch(batch_size).repeat()",
                                 ".shuffle(1000).batch(batch_size, drop_remainder=True).repeat()")
    findings = assert_migrates(SEGMENTATION, after, RULES, facts=TF2_RUNTIME)
    ours = [f for f in findings if f.rule_id == "NPU064"]
    assert sites(ours) == [("NPU064", 12, 46, "migrated"), ("NPU064", 14, 20, "unmigrated"),
                           ("NPU064", 22, 26, "unmigrated"), ("NPU064", 27, 18, "unmigrated"),
                           ("NPU064", 32, 14, "unmigrated")]
    messages = [f.message.split(" (guide")[0] for f in ours]
    assert messages[1].startswith("evaluation pipeline (a pipeline named val_ds): evaluation would "
                                  "silently drop the last samples")
    assert messages[2].startswith("evaluation pipeline (evaluate)")
    assert ours[3].level == "note" and messages[3].startswith("if this is a tf.data.Dataset")
    assert messages[4] == ("drop_remainder is given as another value: kept; the NPU compiles a "
                           "dynamic shape for the last batch (now: drop_remainder=False)")


def test_drop_remainder_already_true_is_left_alone() -> None:
    source = ("import tensorflow as tf\n\n\ndef pipeline(files, batch_size):\n"
              "    ds = tf.data.TFRecordDataset(files)\n"
              "    return ds.batch(batch_size, drop_remainder=True)\n")
    findings = assert_unchanged(source, RULES, facts=TF2_RUNTIME)
    assert [(f.rule_id, f.status, f.message) for f in findings if f.rule_id == "NPU064"] == [
        ("NPU064", "migrated", "drop_remainder=True is set")]


def test_tf1_files_keep_npu002() -> None:
    source = ("import tensorflow as tf\n\nsess = tf.Session()\n"
              "ds = tf.data.TFRecordDataset(['a']).batch(32)\n")
    assert assert_unchanged(source, RULES, facts={"tf-runtime:1"}) == []


COUNTED_AND_STREAMED = '''\
"""Dataset helpers: a size counted batch by batch, and a text stream mapped in batches."""
import tensorflow as tf


def get_dataset_size(dataset, batch_size=5000):
    """Number of elements of a finite dataset."""
    dataset = dataset.batch(batch_size)

    def _count(count, element):
        return count + tf.cast(tf.shape(element)[0], count.dtype)

    return dataset.reduce(tf.constant(0, dtype=tf.int64), _count)


def process_stream(lines, out, map_func, batch_size=512):
    dataset = tf.data.Dataset.from_generator(lambda: lines, output_types=tf.string)
    dataset = dataset.batch(batch_size)
    for batch in dataset.map(map_func):
        out.write(batch)
'''


def test_a_pipeline_whose_batches_are_reduced_or_a_stream_s_keeps_its_last_batch() -> None:
    """Dropping the last batch would count a 1,000-element dataset as 0 and cut a stream's
    last lines: reported, never rewritten."""
    findings = assert_unchanged(COUNTED_AND_STREAMED, RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status, f.message.split(": drop_remainder")[0]) for f in findings] == [
        (7, "unmigrated", "pipeline that must see every sample (its batches are reduced "
                          "(.reduce(...)), so none may be dropped)"),
        (17, "unmigrated", "pipeline that must see every sample (a pipeline named process_stream)")]
    assert all("drop_remainder=True would silently drop its last samples" in f.message for f in findings)


CALLBACK_AND_MINING = '''\
"""Face recognition training: a verification callback and offline triplet mining."""
import numpy as np
import tensorflow as tf


class eval_callback(tf.keras.callbacks.Callback):
    def __init__(self, basic_model, images, issame, batch_size=128):
        super().__init__()
        ds = tf.data.Dataset.from_tensor_slices(images)
        self.ds = ds.batch(batch_size)
        self.basic_model, self.issame = basic_model, issame

    def on_epoch_end(self, epoch, logs=None):
        embs = np.concatenate([self.basic_model(batch) for batch in self.ds])
        print(np.mean((embs[::2] * embs[1::2]).sum(-1) > 0.5) == self.issame)


class TripletMiner:
    def __init__(self, model, images, classes, batch_size=64):
        self.model, self.images, self.classes, self.batch_size = model, images, classes, batch_size

    def hard_pairs(self):
        ds = tf.data.Dataset.from_tensor_slices(self.images)
        ds = ds.map(lambda image: image * 2.0).batch(self.batch_size)
        embs = tf.concat([self.model(batch) for batch in ds], axis=0)
        return embs, tf.convert_to_tensor(self.classes)
'''


def test_a_callback_s_pipeline_and_one_whose_batch_results_are_kept_keep_their_last_batch() -> None:
    """An evaluation callback pairs its embeddings with its labels, a mining pass its
    embeddings with the classes: a dropped last batch breaks both (fit dies at the first
    epoch's end). Reported, never rewritten."""
    findings = assert_unchanged(CALLBACK_AND_MINING, RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status, f.message.split(": evaluation")[0].split(": drop_remainder")[0])
            for f in findings] == [
        (10, "unmigrated", "evaluation pipeline (made in eval_callback, a Keras callback or "
                           "evaluation class)"),
        (24, "unmigrated", "pipeline that must see every sample (each batch's result is kept (a "
                           "list or loop collects them), so none may be dropped)")]


MINING_LOOP = '''\
"""Offline triplet mining: embeddings of every image, gathered batch by batch."""
import tensorflow as tf


def mine(model, images, labels, batch_size=48):
    ds = tf.data.Dataset.from_tensor_slices(images).batch(batch_size)
    embs = tf.zeros([0, 4])
    for batch in ds:
        embs = tf.concat([embs, model(batch)], axis=0)
    return tf.matmul(embs, embs, transpose_b=True), tf.convert_to_tensor(labels)


def train(model, optimizer, images, labels, batch_size=48):
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch_size)
    losses = []
    for x, y in ds:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(loss)
    return losses
'''


def test_a_loop_that_keeps_each_batch_s_result_keeps_the_last_batch_a_training_loop_does_not() -> None:
    """The mining loop pairs every embedding with its label: reported. The training loop keeps
    its losses too, but trains (GradientTape, apply_gradients): drop_remainder=True."""
    new = MINING_LOOP.replace("(images, labels)).batch(batch_size)", "(images, labels)).batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(MINING_LOOP, new, RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings if f.rule_id == "NPU064"] == [(6, "unmigrated"), (14, "migrated")]


LOADER_ATTRIBUTE = '''\
"""Image loaders for a trainer: one yields every image for export, one feeds fit."""
import tensorflow as tf


class Loader:
    def __init__(self, files, batch_size):
        ds = tf.data.Dataset.from_tensor_slices(files)
        self.ds = ds.batch(batch_size)

    def images(self):
        for imm in self.ds:
            yield imm


class Trainer:
    def __init__(self, files):
        self.train_ds = tf.data.Dataset.from_tensor_slices(files).batch(32)

    def run(self):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("adam", "mse")
        model.fit(self.train_ds, epochs=2)
'''


def test_a_pipeline_kept_in_an_attribute_is_followed_to_its_uses() -> None:
    """``self.ds = ds.batch(n)`` yielded batch by batch in another method must keep its last
    images; ``self.train_ds`` reaches ``fit`` through its attribute and is rewritten."""
    after = LOADER_ATTRIBUTE.replace(".batch(32)", ".batch(32, drop_remainder=True)")
    findings = assert_migrates(LOADER_ATTRIBUTE, after, RULES, facts=TF2_RUNTIME)
    ours = [f for f in findings if f.rule_id == "NPU064"]
    assert [(f.line, f.status) for f in ours] == [(8, "unmigrated"), (17, "migrated")]
    assert ours[0].message.startswith("pipeline that must see every sample (each batch's result is kept")


PER_CLASS = '''\
"""One pipeline per class, sampled evenly for fit."""
import tensorflow as tf


def per_class(ds, size):
    groups = ds.group_by_window(
        key_func=lambda x, y: tf.cast(y, tf.int64),
        reduce_func=lambda key, ds: ds.batch(size),
        window_size=size,
    )
    return [tf.data.Dataset.from_tensor_slices(group).repeat() for group in groups]


def balanced(ds, classes):
    parts = per_class(ds, ds.cardinality().numpy())
    choice = tf.data.Dataset.range(classes).repeat()
    return tf.data.Dataset.choose_from_datasets(parts, choice).batch(4)
'''


def test_a_group_s_batch_in_group_by_window_is_reported_not_rewritten() -> None:
    """``reduce_func=lambda key, ds: ds.batch(size)`` batches one class group whole (its
    ``ds`` is the group, not ``per_class``'s): drop_remainder=True would drop every group, so
    it is reported; the training batch is rewritten and only it is to be sharded."""
    after = PER_CLASS.replace(".batch(4)", ".batch(4, drop_remainder=True)")
    findings = assert_migrates(PER_CLASS, after, RULES | {"NPU069"}, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU064", 8, 39, "unmigrated"), ("NPU064", 17, 63, "migrated"),
                               ("NPU069", 17, 63, "unmigrated")]
    assert findings[0].message.startswith("batch of one window or group (reduce_func of group_by_window), "
                                          "not a training batch")


SLIDING = '''\
"""Sliding windows of a series, for fit."""
import tensorflow as tf


def to_batch(window):
    return window.batch(5)


def windows(series, batch_size):
    ds = tf.data.Dataset.from_tensor_slices(series)
    ds = ds.window(5, shift=1, drop_remainder=True).flat_map(lambda w: w.batch(5))
    steps = tf.data.Dataset.from_tensor_slices(series).window(5, shift=1)
    steps = steps.flat_map(to_batch)
    return ds.batch(batch_size), steps.batch(batch_size)
'''


def test_a_window_s_batch_in_flat_map_is_reported_not_rewritten() -> None:
    """A lambda or a function given to ``flat_map`` over ``window(...)`` batches one window."""
    after = SLIDING.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(SLIDING, after, RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status) for f in findings] == [(6, "unmigrated"), (11, "unmigrated"),
                                                      (14, "migrated"), (14, "migrated")]
    assert all("flat_map over window(...)" in f.message for f in findings[:2])


def test_a_lambda_or_def_parameter_is_not_the_enclosing_scope_s_dataset() -> None:
    """A parameter is a variable of its own function or lambda, whatever an enclosing
    function calls by that name."""
    import ast

    from npu_codemod.codemods.tf2_datasets import file_datasets

    text = ("import tensorflow as tf\n\n\ndef f(files, size):\n"
            "    pairs = tf.data.TFRecordDataset(files)\n"
            "    by_row = lambda pairs: pairs.batch(size)\n\n"
            "    def rows(pairs, *rest):\n        return pairs.batch(size), rest\n"
            "    return pairs.batch(size)\n")
    datasets = file_datasets(text, "m.py")
    assert datasets is not None
    reads = [node for node in ast.walk(datasets.tree)
             if isinstance(node, ast.Name) and node.id in {"pairs", "rest"} and isinstance(node.ctx, ast.Load)]
    assert sorted((node.lineno, datasets.is_dataset(node)) for node in reads) == [
        (6, False), (9, False), (9, False), (10, True)]
