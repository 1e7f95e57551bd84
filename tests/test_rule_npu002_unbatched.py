"""NPU002: a batch that the pipeline unbatches again is no batch the model sees.

Packing code batches sequences only to concatenate them and splits the result back into
examples (tensor2tensor's ``pack_dataset``: ``padded_batch(length)`` then ``flat_map`` of a
function returning ``Dataset.from_tensor_slices(packed)``); vectorised preprocessing batches,
maps, then ``unbatch()``es. The model's batch comes later. ``drop_remainder=True`` on such a
batch fixes no shape and silently loses up to ``batch_size - 1`` examples of each pass (of
evaluation too): it is left as it is, as a site that needs nothing.
"""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

RULES = {"NPU002"}
PACKING = '''import tensorflow as tf

from seqlib.ops import pack_ops


def pack_dataset(dataset, keys, length):
    """Packs the sequences of ``dataset`` into examples of ``length`` tokens."""
    dataset = dataset.map(lambda x: {k: x[k][:length] for k in keys})
    dataset = dataset.padded_batch(
        length, padded_shapes={k: [-1] for k in keys})

    def map_fn(x):
        packed, segmentation = pack_ops.pack_sequences(x[keys[0]], length)
        return tf.data.Dataset.from_tensor_slices({"inputs": packed, "segmentation": segmentation})
    dataset = dataset.flat_map(map_fn)
    return dataset
'''
VECTORISED = '''import tensorflow as tf


def tokenized(files, batch_size):
    ds = tf.data.TextLineDataset(files)
    ds = ds.batch(256).map(tokenize_many).unbatch()
    return ds.batch(batch_size)
'''
SPLIT = '''import tensorflow as tf


def windows(files, batch_size):
    ds = tf.data.TFRecordDataset(files)
    ds = ds.batch(64)
    ds = ds.map(parse_many)
    ds = ds.flat_map(lambda x: tf.data.Dataset.from_tensor_slices(x))
    return ds.batch(batch_size)
'''
UNBATCHED = "batched only to be unbatched again ({how}): the model never sees this batch, and " \
            "drop_remainder=True would only lose examples"


def _npu002(findings: list) -> list[tuple[int, str, str]]:
    return [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings if f.rule_id == "NPU002"]


def test_a_packing_batch_split_by_flat_map_is_left_as_it_is() -> None:
    findings = assert_reports(RULES, PACKING)
    assert _npu002(findings) == [
        (9, "migrated", UNBATCHED.format(how="flat_map(map_fn) on line 15 makes one example of each row"))]


@pytest.mark.parametrize("source, first, how, last", [
    (VECTORISED, 6, "unbatch() on line 6", 7),
    (VECTORISED.replace(".unbatch()", ".apply(tf.data.experimental.unbatch())"), 6,
     "apply(tf.data.experimental.unbatch()) on line 6", 7),
    (SPLIT, 6, "flat_map(lambda x: tf.data.Dataset.from_tensor_slices(x)) on line 8 makes one "
     "example of each row", 9),
])
def test_only_the_batch_the_model_sees_gets_drop_remainder(source: str, first: int, how: str,
                                                           last: int) -> None:
    after = source.replace(".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(RULES, source, after)
    assert _npu002(findings) == [
        (first, "migrated", UNBATCHED.format(how=how)),
        (last, "migrated", "added drop_remainder=True (static batch shape for the NPU)")]


def test_a_flat_map_that_makes_datasets_of_other_things_is_no_unbatch() -> None:
    source = SPLIT.replace("tf.data.Dataset.from_tensor_slices(x)", "tf.data.TFRecordDataset(x)")
    after = source.replace(".batch(64)", ".batch(64, drop_remainder=True)").replace(
        ".batch(batch_size)", ".batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(RULES, source, after)
    assert [f.status for f in findings] == ["migrated", "migrated"]
