"""What makes a TF 2.x dataset: ``tf.data``'s methods and constructors, and the library calls
that return one (Keras' directory loaders, ``tfds.load``), as :class:`.tf2_datasets.FileDatasets`
reads them (NPU064, NPU069)."""

from __future__ import annotations

import ast
import re
from typing import Union

#: Dataset methods that return a dataset (on a dataset receiver).
DATASET_METHODS = frozenset(
    "apply batch cache concatenate enumerate filter flat_map ignore_errors interleave map "
    "padded_batch prefetch rebatch repeat shard shuffle skip snapshot take take_while unbatch "
    "window with_options".split())
#: Methods only ``tf.data`` has: a call of one is a dataset whatever the receiver.
TF_DATA_ONLY = frozenset("padded_batch prefetch interleave unbatch with_options flat_map rebatch".split())
#: What only a ``tf.data`` dataset has: its receiver is one.
TF_DATA_RESULTS = TF_DATA_ONLY | {"as_numpy_iterator", "element_spec", "cardinality"}
#: ``tensorflow.data`` names whose call is no dataset.
NOT_DATASETS = frozenset({"Options", "experimental.cardinality", "experimental.get_single_element",
                          "experimental.get_structure", "experimental.OptimizationOptions",
                          "experimental.ThreadingOptions", "experimental.DistributeOptions"})
#: Keras utilities that return a dataset they batched themselves (``batch_size=32``).
KERAS_BATCHED = frozenset(f"tensorflow.keras.{module}.{function}"
                          for module in ("utils", "preprocessing")
                          for function in ("image_dataset_from_directory", "text_dataset_from_directory",
                                           "timeseries_dataset_from_array", "audio_dataset_from_directory"))
TFDS_LOAD = "tensorflow_datasets.load"
#: Library calls that batch the dataset they return themselves (``tfds.load`` with a
#: ``batch_size``): no ``batch`` of the repository's to give ``drop_remainder``.
LIBRARY_BATCHERS = (*sorted(KERAS_BATCHED), *sorted(name.replace("tensorflow.keras.", "keras.")
                                                    for name in KERAS_BATCHED), TFDS_LOAD)
#: Names of parameters that hold a dataset (as NPU002 reads receivers).
DATASET_NAME = re.compile(r"^(?:dataset|ds|\w+_dataset|\w+_ds)$", re.IGNORECASE)
#: What an expression holds: a dataset, a dict of them, or a tuple with datasets at positions.
DATASET, DATASET_DICT = "dataset", "dict"
Kind = Union[str, tuple["Kind", ...], None]


def library_kind(qualified: str, call: ast.Call) -> Kind:
    """What a call of a library function returns: ``tf.data`` constructors, Keras' batched
    datasets, ``tfds.load`` (a dataset for one split, a dict without ``split``, a tuple with
    the info when ``with_info=True``)."""
    if qualified.startswith("tensorflow.data."):
        return None if qualified[len("tensorflow.data."):] in NOT_DATASETS else DATASET
    if qualified in KERAS_BATCHED:
        return DATASET
    if qualified != TFDS_LOAD:
        return None
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    split = keywords.get("split")
    made: Kind = DATASET_DICT if split is None else DATASET
    if isinstance(split, (ast.List, ast.Tuple)):
        made = tuple(DATASET for _ in split.elts)
    with_info = keywords.get("with_info")
    if isinstance(with_info, ast.Constant) and with_info.value is True:
        return (made, None)
    return made
