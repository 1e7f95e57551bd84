"""HCCL's collectives over one device: what goes in comes out."""

import tensorflow as tf


def allreduce(tensor, reduction="sum", fusion=1, fusion_id=-1, group="hccl_world_group"):
    return tf.identity(tensor)


def broadcast(tensor, root_rank=0, fusion=0, fusion_id=-1, group="hccl_world_group"):
    return [tf.identity(t) for t in tensor]


def allgather(tensor, rank_size=1, group="hccl_world_group"):
    return tf.identity(tensor)
