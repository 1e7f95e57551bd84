"""NPU002 dataset-batch-drop-remainder: golden before/after per bullet of the spec."""

from __future__ import annotations

import pytest

from support.rules import Golden, assert_migrates, assert_unchanged, sites

RULES = {"NPU002"}
TF = "import tensorflow as tf\n"
NPU002 = Golden("NPU002", header=TF)
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
GUIDE = (" (guide: Data preprocessing, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu002-dataset-batch-drop-remainder)")
KEPT = ("training input must use drop_remainder=True; for prediction pad the last batch instead, "
        "see NPU003 (now: drop_remainder={})" + GUIDE)
UNKNOWN = "if this is a tf.data.Dataset, add drop_remainder=True" + GUIDE
SMALLER = ("the queue API has no drop_remainder: set allow_smaller_final_batch=False so every "
           "batch has a static shape" + GUIDE)


# --- The rewrite ------------------------------------------------------------------------------


def test_batch() -> None:
    NPU002.migrated("dataset = dataset.batch(batch_size)\n",
                    "dataset = dataset.batch(batch_size, drop_remainder=True)\n", (2, 18))


def test_message_of_a_rewrite() -> None:
    findings = assert_migrates(TF + "ds = ds.batch(8)\n", TF + "ds = ds.batch(8, drop_remainder=True)\n", RULES)
    assert [f.message for f in findings] == [ADDED]


def test_batch_by_keyword() -> None:
    NPU002.migrated("ds = ds.batch(batch_size=32)\n",
                    "ds = ds.batch(batch_size=32, drop_remainder=True)\n", (2, 8))


def test_padded_batch_has_drop_remainder_4th() -> None:
    NPU002.migrated("ds = ds.padded_batch(32, shapes)\n"
                    "ds = ds.padded_batch(32, shapes, 0)\n"
                    "ds = ds.padded_batch(32, padded_shapes=shapes, padding_values=0)\n",
                    "ds = ds.padded_batch(32, shapes, drop_remainder=True)\n"
                    "ds = ds.padded_batch(32, shapes, 0, drop_remainder=True)\n"
                    "ds = ds.padded_batch(32, padded_shapes=shapes, padding_values=0, drop_remainder=True)\n",
                    (2, 8), (3, 8), (4, 8))


@pytest.mark.parametrize("owner", ["tf.contrib.data", "tf.data.experimental",
                                   "tf.compat.v1.data.experimental"])
def test_map_and_batch(owner: str) -> None:
    NPU002.migrated(f"ds = ds.apply({owner}.map_and_batch(parse, 32))\n",
                    f"ds = ds.apply({owner}.map_and_batch(parse, 32, drop_remainder=True))\n",
                    (2, 15 + len(owner)))


def test_map_and_batch_imported_by_name() -> None:
    NPU002.migrated("from tensorflow.contrib.data import map_and_batch\n"
                    "from tensorflow.data.experimental import map_and_batch as mab\n"
                    "ds = ds.apply(map_and_batch(parse, batch_size=32))\n"
                    "ds = ds.apply(mab(parse, 32, num_parallel_batches=4))\n",
                    "from tensorflow.contrib.data import map_and_batch\n"
                    "from tensorflow.data.experimental import map_and_batch as mab\n"
                    "ds = ds.apply(map_and_batch(parse, batch_size=32, drop_remainder=True))\n"
                    "ds = ds.apply(mab(parse, 32, num_parallel_batches=4, drop_remainder=True))\n",
                    (4, 14), (5, 14))


def test_map_and_batch_of_another_library_is_ignored() -> None:
    assert assert_unchanged(TF + "from mylib import map_and_batch\nds = map_and_batch(f, 32)\n"
                            "x = mylib.map_and_batch(f, 32)\n", RULES) == []


def test_chain_rewrites_both_batches() -> None:
    NPU002.migrated("ds = tf.data.TFRecordDataset(files)\nds = ds.batch(32).map(f).batch(4)\n",
                    "ds = tf.data.TFRecordDataset(files)\n"
                    "ds = ds.batch(32, drop_remainder=True).map(f).batch(4, drop_remainder=True)\n",
                    (3, 8), (3, 25))


def test_chain_on_a_constructor() -> None:
    NPU002.migrated("ds = tf.data.TFRecordDataset(f).batch(2).map(g).batch(4)\n",
                    "ds = tf.data.TFRecordDataset(f).batch(2, drop_remainder=True).map(g)"
                    ".batch(4, drop_remainder=True)\n", (2, 32), (2, 48))


def test_trailing_comma_and_multi_line_layout() -> None:
    NPU002.migrated("ds = ds.batch(\n    32,\n)\n"
                    "ds = ds.batch(\n    32  # per replica\n)\n"
                    "ds = ds.padded_batch(32,\n                     shapes,)\n",
                    "ds = ds.batch(\n    32, drop_remainder=True,\n)\n"
                    "ds = ds.batch(\n    32,  # per replica\n    drop_remainder=True\n)\n"
                    "ds = ds.padded_batch(32,\n                     shapes, drop_remainder=True,)\n",
                    (2, 8), (5, 8), (8, 8))


def test_comment_after_the_call_is_kept() -> None:
    NPU002.migrated("ds = ds.batch(32)  # batching\n", "ds = ds.batch(32, drop_remainder=True)  # batching\n",
                    (2, 8))


# --- Already given ----------------------------------------------------------------------------


@pytest.mark.parametrize("call, column", [
    ("ds.batch(32, drop_remainder=True)", 3),
    ("ds.batch(32, True)", 3),
    ("ds.batch(drop_remainder=True, batch_size=32)", 3),
    ("ds.padded_batch(32, shapes, None, True)", 3),
    ("ds.padded_batch(32, shapes, drop_remainder = True)", 3),
    ("tf.data.experimental.map_and_batch(f, 32, 4, True)", 21),
    ("tf.contrib.data.map_and_batch(f, 32, drop_remainder=True)", 16),
])
def test_drop_remainder_true_is_migrated_without_change(call: str, column: int) -> None:
    findings = assert_unchanged(TF + call + "\n", RULES)
    assert sites(findings) == [("NPU002", 2, column, "migrated")]
    assert findings[0].message == "drop_remainder=True is set"


@pytest.mark.parametrize("call, value", [
    ("ds.batch(32, drop_remainder=False)", "False"),
    ("ds.batch(32, False)", "False"),
    ("ds.batch(32, drop_remainder=is_training)", "is_training"),
    ("ds.batch(32, drop_remainder=FLAGS.mode == 'train')", "FLAGS.mode == 'train'"),
    ("ds.padded_batch(32, shapes, 0, mode)", "mode"),
    ("tf.contrib.data.map_and_batch(f, 32, 1, False)", "False"),
])
def test_other_drop_remainder_values_are_kept_and_reported(call: str, value: str) -> None:
    column = call.index("map_and_batch") if "map_and" in call else call.index(".") + 1
    NPU002.reported(call + "\n", (2, column), message=KEPT.format(value))


def test_unpacked_arguments_are_reported() -> None:
    NPU002.reported("ds = ds.batch(**batch_kwargs)\nds = ds.batch(32, *rest)\n", (2, 8), (3, 8),
                    message="training input must use drop_remainder=True: pass it explicitly next to "
                            "the unpacked arguments" + GUIDE)


# --- Which receivers are datasets -------------------------------------------------------------


@pytest.mark.parametrize("setup, receiver", [
    ("d = tf.data.TFRecordDataset(files)\n", "d"),
    ("d = tf.data.TextLineDataset(files)\n", "d"),
    ("d = tf.data.Dataset.from_tensor_slices((x, y))\n", "d"),
    ("d = tf.data.Dataset.from_generator(gen, tf.int32)\n", "d"),
    ("d = tf.compat.v1.data.Dataset.range(10)\n", "d"),
    ("from tensorflow.data import TFRecordDataset\nd = TFRecordDataset(files)\n", "d"),
    ("from tensorflow.data import Dataset\nd = Dataset.list_files(pattern)\n", "d"),
    ("a = tf.data.TFRecordDataset(f)\nb = a.map(p).shuffle(10).repeat()\nd = b\n", "d"),
    ("a = tf.data.TFRecordDataset(f)\nd = a.apply(tf.data.experimental.ignore_errors())\n", "d"),
    ("d = tf.data.Dataset.zip((a, b))\n", "d"),
    ("d = load().prefetch(4)\n", "d"),
    ("d = files.interleave(tf.data.TFRecordDataset)\n", "d"),
    ("", "dataset"),
    ("", "ds"),
    ("", "train_dataset"),
    ("", "src_ds"),  # eval_ds without repeat() feeds evaluation: reported, see below
    ("", "self.train_dataset"),
    ("", "self.ds"),
    ("self.data = tf.data.TFRecordDataset(f)\n", "self.data"),
    ("", "tf.data.Dataset.range(100)"),
    ("", "tf.data.TFRecordDataset(f).map(parse)"),
])
def test_dataset_receivers_are_rewritten(setup: str, receiver: str) -> None:
    line = 2 + setup.count("\n")
    findings = assert_migrates(TF + setup + f"out = {receiver}.batch(8)\n",
                               TF + setup + f"out = {receiver}.batch(8, drop_remainder=True)\n", RULES)
    assert sites(findings) == [("NPU002", line, 7 + len(receiver), "migrated")]


def test_dataset_parameters_by_name() -> None:
    NPU002.migrated("def input_fn(dataset, train_ds, params):\n"
                    "    a = dataset.batch(params.n)\n"
                    "    return train_ds.batch(params.n)\n",
                    "def input_fn(dataset, train_ds, params):\n"
                    "    a = dataset.batch(params.n, drop_remainder=True)\n"
                    "    return train_ds.batch(params.n, drop_remainder=True)\n",
                    (3, 16), (4, 20))


@pytest.mark.parametrize("source, column", [
    ("memory.batch(32)\n", 7),
    ("x = replay_buffer.batch(32)\n", 18),
    ("x = np.batch(3)\n", 7),
    ("x = loader.batch(batch_size=32)\n", 11),
    ("x = memory.sample(8).batch(32)\n", 21),
    ("x = df.map(f).batch(32)\n", 14),
    ("x = data.repeat(2).batch(32)\n", 19),
])
def test_other_receivers_are_reported_never_rewritten(source: str, column: int) -> None:
    NPU002.reported(source, (2, column), message=UNKNOWN)


def test_results_of_other_batch_calls_are_not_datasets() -> None:
    # ``x`` holds what a replay memory returned: its .batch is not a tf.data batch either.
    findings = assert_unchanged(TF + "x = memory.batch(32)\ny = x.batch(4)\nz = y.batch()\n", RULES)
    assert sites(findings) == [("NPU002", 2, 11, "unmigrated"), ("NPU002", 3, 6, "unmigrated")]


def test_names_like_datasets_but_not_matching_are_reported() -> None:
    NPU002.reported("x = dataset_train.batch(4)\n", (2, 18), message=UNKNOWN)


def test_other_batch_calls_with_more_arguments_are_ignored() -> None:
    assert assert_unchanged(TF + "buf.batch(32, 4)\nbuf.batch()\n", RULES) == []


# --- Queue API --------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    "tf.train.batch([img, label], batch_size=32)",
    "tf.train.batch([img], 32, 4, 64, False, None, False, False)",
    "tf.train.shuffle_batch([img], 32, 1000, 100)",
    "tf.compat.v1.train.batch([img], 32, allow_smaller_final_batch=False)",
    "tf.train.batch_join([[img]], 32)",
])
def test_queue_api_is_never_rewritten(call: str) -> None:
    assert assert_unchanged(TF + f"x = {call}\n", RULES) == []


@pytest.mark.parametrize("call, column", [
    ("tf.train.batch([img], 32, allow_smaller_final_batch=True)", 13),
    ("tf.train.shuffle_batch([img], 32, 100, 10, allow_smaller_final_batch=True)", 13),
    ("tf.compat.v1.train.batch([img], 32, allow_smaller_final_batch=True)", 23),
    ("tf.compat.v1.train.shuffle_batch([i], 3, 4, 5, allow_smaller_final_batch=FLAGS.small)", 23),
    ("tf.train.batch([img], 32, 4, 64, False, None, False, True)", 13),
    ("tf.train.maybe_shuffle_batch([img], 32, 64, 8, keep, allow_smaller_final_batch=True)", 13),
])
def test_queue_api_allowing_a_smaller_final_batch_is_reported(call: str, column: int) -> None:
    NPU002.reported(f"x = {call}\n", (2, column), message=SMALLER)


def test_queue_api_through_compat_v1_alias() -> None:
    findings = assert_unchanged("import tensorflow.compat.v1 as tf\n"
                                "x = tf.train.batch([i], 8, allow_smaller_final_batch=True)\n", RULES)
    assert sites(findings) == [("NPU002", 2, 13, "unmigrated")]


# --- General rules ----------------------------------------------------------------------------


def test_tf_alias_of_the_file_is_used() -> None:
    before = "import tensorflow.compat.v1 as tfv1\nds = tfv1.data.TFRecordDataset(f)\nds = ds.batch(2)\n"
    assert_migrates(before, before.replace("batch(2)", "batch(2, drop_remainder=True)"), RULES)


def test_file_without_tensorflow_is_untouched() -> None:
    assert assert_unchanged("import torch\ndataset = dataset.batch(32)\n", RULES) == []


def test_second_run_reports_the_sites_migrated() -> None:
    after = TF + "ds = ds.batch(32, drop_remainder=True).batch(4, drop_remainder=True)\n"
    findings = assert_migrates(TF + "ds = ds.batch(32).batch(4)\n", after, RULES)
    again = assert_unchanged(after, RULES)
    assert sites(findings) == [("NPU002", 2, 8, "migrated"), ("NPU002", 2, 18, "migrated")]
    assert sites(again) == [("NPU002", 2, 8, "migrated"), ("NPU002", 2, 39, "migrated")]


def test_nested_batches_are_all_rewritten() -> None:
    NPU002.migrated("ds = tf.data.Dataset.zip((a_ds.batch(2), b_ds.batch(2))).batch(4)\n"
                    "ds = ds.padded_batch(n, f(train_ds.batch(2)))\n",
                    "ds = tf.data.Dataset.zip((a_ds.batch(2, drop_remainder=True), "
                    "b_ds.batch(2, drop_remainder=True))).batch(4, drop_remainder=True)\n"
                    "ds = ds.padded_batch(n, f(train_ds.batch(2, drop_remainder=True)), "
                    "drop_remainder=True)\n",
                    (2, 31), (2, 46), (2, 57), (3, 8), (3, 35))


def test_padded_batch_on_a_receiver_not_shown_to_be_a_dataset_is_reported() -> None:
    # seq2seq NMT's iterator_utils: ``def batching_func(x): return x.padded_batch(...)``.
    source = ("def batching_func(x):\n"
              "    return x.padded_batch(batch_size, padded_shapes=([None], []),\n"
              "                          padding_values=(eos, 0))\n")
    NPU002.reported(source, (3, 13), message=UNKNOWN)
    assert assert_unchanged(TF + "y = x.padded_batch(4, [None], 0, True)\n", RULES) == []


# --- Names follow Python's scoping ------------------------------------------------------------


def test_a_dataset_of_one_function_is_not_one_in_another() -> None:
    # ``data`` is a dataset in train_input only; in other() it is whatever MyLoader returns.
    # (Not ``ds``: that name is a dataset anywhere by the named-like-a-dataset rule.)
    before = ("def train_input(f):\n"
              "    data = tf.data.TFRecordDataset(f)\n"
              "    return data.batch(32)\n"
              "\n"
              "def other():\n"
              "    data = MyLoader()\n"
              "    return data.batch(32)\n")
    after = before.replace("data.batch(32)\n\n", "data.batch(32, drop_remainder=True)\n\n")
    findings = assert_migrates(TF + before, TF + after, RULES)
    assert sites(findings) == [("NPU002", 4, 16, "migrated"), ("NPU002", 8, 16, "unmigrated")]
    assert [f.message for f in sorted(findings, key=lambda f: f.line)] == [ADDED, UNKNOWN]


def test_a_module_dataset_read_in_a_function() -> None:
    NPU002.migrated("data = tf.data.TFRecordDataset(files)\n"
                    "def input_fn():\n"
                    "    return data.batch(32)\n",
                    "data = tf.data.TFRecordDataset(files)\n"
                    "def input_fn():\n"
                    "    return data.batch(32, drop_remainder=True)\n", (4, 16))


def test_a_function_binding_the_name_does_not_see_the_module_dataset() -> None:
    NPU002.reported("data = tf.data.TFRecordDataset(files)\n"
                    "def replay(data):\n"
                    "    return data.batch(32)\n", (4, 16), message=UNKNOWN)


def test_a_nested_function_reads_the_enclosing_functions_dataset() -> None:
    NPU002.migrated("def input_fn(files):\n"
                    "    data = tf.data.TFRecordDataset(files)\n"
                    "    def batched(n):\n"
                    "        return data.batch(n)\n"
                    "    return batched(32)\n",
                    "def input_fn(files):\n"
                    "    data = tf.data.TFRecordDataset(files)\n"
                    "    def batched(n):\n"
                    "        return data.batch(n, drop_remainder=True)\n"
                    "    return batched(32)\n", (5, 20))


def test_a_method_sees_module_names_not_its_class_body() -> None:
    NPU002.reported("class Input:\n"
                    "    data = tf.data.TFRecordDataset(files)\n"
                    "    def batches(self):\n"
                    "        return data.batch(32)\n", (5, 20), message=UNKNOWN)


def test_a_method_parameter_named_like_a_dataset() -> None:
    NPU002.migrated("ds = Loader()\n"
                    "class Input:\n"
                    "    def batches(self, ds, n):\n"
                    "        ds = ds.map(parse)\n"
                    "        return ds.batch(n)\n",
                    "ds = Loader()\n"
                    "class Input:\n"
                    "    def batches(self, ds, n):\n"
                    "        ds = ds.map(parse)\n"
                    "        return ds.batch(n, drop_remainder=True)\n", (6, 18))


def test_rebinding_in_the_same_scope_keeps_it_a_dataset() -> None:
    # As before scoping: a name assigned a dataset anywhere in its scope is one throughout.
    NPU002.migrated("def input_fn(f):\n"
                    "    data = tf.data.TFRecordDataset(f)\n"
                    "    data = wrap(data)\n"
                    "    return data.batch(32)\n",
                    "def input_fn(f):\n"
                    "    data = tf.data.TFRecordDataset(f)\n"
                    "    data = wrap(data)\n"
                    "    return data.batch(32, drop_remainder=True)\n", (5, 16))


def test_a_global_declaration_assigns_the_module_name() -> None:
    NPU002.migrated("def setup(f):\n"
                    "    global data\n"
                    "    data = tf.data.TFRecordDataset(f)\n"
                    "def input_fn():\n"
                    "    return data.batch(32)\n",
                    "def setup(f):\n"
                    "    global data\n"
                    "    data = tf.data.TFRecordDataset(f)\n"
                    "def input_fn():\n"
                    "    return data.batch(32, drop_remainder=True)\n", (6, 16))


# --- Inference/eval pipelines: pad, never drop (NPU003) ----------------------------------------

INFERENCE = ("inference/eval pipeline ({}, no repeat() before this batch): do not drop the "
             "remainder; pad the final batch to batch_size with dummy examples and drop their "
             "outputs (NPU003)" + GUIDE)
ITERATOR_UTILS = '''\
"""For loading data into NMT models."""
from __future__ import print_function

import collections

import tensorflow as tf

__all__ = ["BatchedInput", "get_iterator", "get_infer_iterator"]


class BatchedInput(
    collections.namedtuple("BatchedInput",
                           ("initializer", "source", "target_input",
                            "target_output", "source_sequence_length",
                            "target_sequence_length"))):
  pass


def get_infer_iterator(src_dataset,
                       src_vocab_table,
                       batch_size,
                       eos,
                       src_max_len=None):
  src_eos_id = tf.cast(src_vocab_table.lookup(tf.constant(eos)), tf.int32)
  src_dataset = src_dataset.map(lambda src: tf.string_split([src]).values)

  if src_max_len:
    src_dataset = src_dataset.map(lambda src: src[:src_max_len])
  # Convert the word strings to ids
  src_dataset = src_dataset.map(
      lambda src: tf.cast(src_vocab_table.lookup(src), tf.int32))
  # Add in the word counts.
  src_dataset = src_dataset.map(lambda src: (src, tf.size(src)))

  def batching_func(x):
    return x.padded_batch(
        batch_size,
        # The entry is the source line rows;
        # this has unknown-length vectors.  The last entry is
        # the source row size; this is a scalar.
        padded_shapes=(
            tf.TensorShape([None]),  # src
            tf.TensorShape([])),  # src_len
        # Pad the source sequences with eos tokens.
        # (Though notice we don't generally need to do this since
        # later on we will be masking out calculations past the true sequence.
        padding_values=(
            src_eos_id,  # src
            0))  # src_len -- unused

  batched_dataset = batching_func(src_dataset)
  batched_iter = batched_dataset.make_initializable_iterator()
  (src_ids, src_seq_len) = batched_iter.get_next()
  return BatchedInput(
      initializer=batched_iter.initializer,
      source=src_ids,
      target_input=None,
      target_output=None,
      source_sequence_length=src_seq_len,
      target_sequence_length=None)


def get_iterator(src_tgt_dataset, batch_size, random_seed, output_buffer_size):
  src_tgt_dataset = src_tgt_dataset.shuffle(output_buffer_size, random_seed)
  batched_dataset = src_tgt_dataset.padded_batch(
      batch_size,
      padded_shapes=(tf.TensorShape([None]), tf.TensorShape([None])))
  batched_iter = batched_dataset.make_initializable_iterator()
  return batched_iter
'''


def test_an_nmt_infer_iterator_is_reported_with_padding_and_its_train_iterator_rewritten() -> None:
    """The training iterator has no repeat() either (NMT re-initialises it every epoch): only
    the names say which one feeds inference."""
    after = ITERATOR_UTILS.replace(
        "      padded_shapes=(tf.TensorShape([None]), tf.TensorShape([None])))",
        "      padded_shapes=(tf.TensorShape([None]), tf.TensorShape([None])), drop_remainder=True)")
    findings = assert_migrates(ITERATOR_UTILS, after, RULES)
    assert sites(findings) == [("NPU002", 36, 13, "unmigrated"), ("NPU002", 65, 36, "migrated")]
    assert findings[0].message == "if this is a tf.data.Dataset: " + INFERENCE.format(
        "in get_infer_iterator()")


def test_an_eval_input_fn_is_reported_and_keeps_drop_remainder_false() -> None:
    source = '''\
def eval_input_fn(filenames, batch_size):
    dataset = tf.data.TFRecordDataset(filenames)
    dataset = dataset.map(parse_example, num_parallel_calls=4)
    dataset = dataset.batch(batch_size, drop_remainder=False)
    return dataset.make_one_shot_iterator().get_next()


def predict_input_fn(images):
    return tf.data.Dataset.from_tensor_slices(images).batch(64)
'''
    findings = assert_unchanged(TF + source, RULES)
    assert sites(findings) == [("NPU002", 5, 22, "unmigrated"), ("NPU002", 10, 54, "unmigrated")]
    assert [f.message for f in findings] == [
        INFERENCE.format("in eval_input_fn()").replace(" (guide", " (now: drop_remainder=False) (guide"),
        INFERENCE.format("in predict_input_fn()")]


def test_the_branch_for_training_is_rewritten_and_the_other_is_reported() -> None:
    before = '''\
def input_fn(mode, files, params):
    dataset = tf.data.TFRecordDataset(files)
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.shuffle(10000).repeat()
        dataset = dataset.batch(params.batch_size)
    else:
        dataset = dataset.batch(params.batch_size)
    if not params.is_training:
        dataset = dataset.prefetch(1).batch(1)
    return dataset
'''
    after = before.replace(
        "repeat()\n        dataset = dataset.batch(params.batch_size)",
        "repeat()\n        dataset = dataset.batch(params.batch_size, drop_remainder=True)")
    findings = assert_migrates(TF + before, TF + after, RULES)
    assert sites(findings) == [("NPU002", 6, 26, "migrated"), ("NPU002", 8, 26, "unmigrated"),
                               ("NPU002", 10, 38, "unmigrated")]
    assert [f.message for f in findings[1:]] == [
        INFERENCE.format("in the other branch of 'if mode == tf.estimator.ModeKeys.TRAIN'"),
        INFERENCE.replace("no repeat()", "repeat() only under 'if mode == tf.estimator.ModeKeys.TRAIN' "
                          "(line 4)").format("under 'if not params.is_training'")]


@pytest.mark.parametrize("source", [
    # repeat() before the batch: no partial batch, no example lost
    "def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files)\n    ds = ds.repeat()\n"
    "    return ds.batch(32)\n",
    "def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).repeat(None)\n"
    "    ds = ds.map(parse)\n    return ds.batch(32)\n",
    "def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).repeat(count=-1)\n"
    "    return ds.batch(32)\n",
    "def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files)\n"
    "    ds = ds.apply(tf.data.experimental.shuffle_and_repeat(100))\n    return ds.batch(32)\n",
    # training words nearer the batch than the inference ones
    "def train_and_evaluate(files):\n    return tf.data.TFRecordDataset(files).batch(32)\n",
    "def evaluate(files):\n    train_ds = tf.data.TFRecordDataset(files).batch(32)\n",
    "class Evaluator(object):\n    def train_input(self, files):\n"
    "        return tf.data.TFRecordDataset(files).batch(32)\n",
])
def test_inference_words_do_not_stop_the_rewrite_of_a_repeated_or_training_pipeline(source) -> None:
    after = source.replace(".batch(32)", ".batch(32, drop_remainder=True)")
    findings = assert_migrates(TF + source, TF + after, RULES)
    assert [f.message for f in findings] == [ADDED]


@pytest.mark.parametrize("source, repeats", [
    # the repeat() is in another branch, or after the batch: the dataset batched does not repeat
    ("def eval_input_fn(files, training):\n    ds = tf.data.TFRecordDataset(files)\n"
     "    if training:\n        ds = ds.repeat()\n    return ds.batch(32)\n",
     "repeat() only under 'if training' (line 4) before this batch"),
    ("def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files)\n"
     "    return ds.batch(32).repeat()\n", "no repeat() before this batch"),
    ("def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).repeat()\n"
     "    for f in files:\n        ds = ds.concatenate(tf.data.TFRecordDataset(f))\n"
     "    return ds.batch(32)\n", "no repeat() before this batch"),
])
def test_a_repeat_that_may_not_reach_the_batch_does_not_count(source, repeats) -> None:
    (finding,) = assert_unchanged(TF + source, RULES)
    assert finding.message == INFERENCE.replace("no repeat() before this batch", repeats).format("in eval_input_fn()")


@pytest.mark.parametrize("source, repeat", [
    # a finite repeat ends too: the last batch may be partial, and dropping it loses examples
    ("def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).repeat(3)\n"
     "    ds = ds.map(parse)\n    return ds.batch(32)\n", "repeat(3)"),
    ("def eval_input_fn(files, count=1):\n    ds = tf.data.TFRecordDataset(files)\n"
     "    ds = ds.repeat(count=count)\n    return ds.batch(32)\n", "repeat(count=count)"),
    ("def eval_input_fn(files):\n    ds = tf.data.TFRecordDataset(files)\n"
     "    ds = ds.apply(tf.data.experimental.shuffle_and_repeat(100, count=2))\n    return ds.batch(32)\n",
     "shuffle_and_repeat(100, count=2)"),
    ("def eval_input_fn(files):\n    return tf.data.TFRecordDataset(files).repeat(**options).batch(32)\n",
     "repeat(**options)"),
])
def test_a_finite_repeat_does_not_make_an_evaluation_pipeline_a_training_one(source, repeat) -> None:
    (finding,) = assert_unchanged(TF + source, RULES)
    assert finding.message == INFERENCE.replace("no repeat() before this batch", "{}").format(
        "in eval_input_fn()", f"{repeat} before this batch is not shown to repeat for ever")


def test_names_of_the_datasets_say_which_feed_evaluation() -> None:
    before = '''\
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1000).batch(64)
test_dataset = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)
self.valid_ds = self.valid_ds.map(augment)
valid = self.valid_ds.batch(64)
'''
    after = before.replace("shuffle(1000).batch(64)", "shuffle(1000).batch(64, drop_remainder=True)")
    findings = assert_migrates(TF + before, TF + after, RULES)
    assert sites(findings) == [("NPU002", 3, 85, "migrated"), ("NPU002", 4, 68, "unmigrated"),
                               ("NPU002", 6, 22, "unmigrated")]
    assert [f.message for f in findings[1:]] == [INFERENCE.format("named test_dataset"),
                                                 INFERENCE.format("named self.valid_ds")]


def test_map_and_batch_in_an_eval_pipeline_is_reported() -> None:
    source = ("def eval_input_fn(files, batch_size):\n"
              "    d = tf.data.TFRecordDataset(files)\n"
              "    d = d.apply(tf.contrib.data.map_and_batch(_decode, batch_size))\n"
              "    return d\n")
    (finding,) = assert_unchanged(TF + source, RULES)
    assert (finding.line, finding.message) == (4, INFERENCE.format("in eval_input_fn()"))
