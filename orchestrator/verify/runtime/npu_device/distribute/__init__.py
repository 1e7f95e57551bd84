"""``npu.distribute`` on one worker: what the adapter's collectives do with one device
(``hccl.py``: identities, inputs returned as they are)."""

import tensorflow as tf


def all_reduce(values, reduction="mean", fusion=1, fusion_id=-1, group="hccl_world_group"):
    """One worker: the values themselves."""
    return values


def broadcast(values, root_rank=0, fusion=2, fusion_id=0, group="hccl_world_group"):
    """One worker: nothing to send."""
    return None


def npu_distributed_keras_optimizer_wrapper(optimizer, reduce_reduction="mean", fusion=1,
                                            fusion_id=-1, group="hccl_world_group"):
    """The optimizer (a name resolved as Keras does, ``hccl.py:104-107``)."""
    return tf.keras.optimizers.get(optimizer) if isinstance(optimizer, str) else optimizer


def shard_and_rebatch_dataset(dataset, global_bs):
    """One worker: the dataset and the global batch size, unchanged."""
    return dataset, global_bs
