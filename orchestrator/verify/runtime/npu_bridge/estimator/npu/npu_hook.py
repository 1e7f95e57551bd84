"""The bridge's hooks and callbacks, as one device needs them."""

import tensorflow as tf


class NPUBroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    """Broadcasting from rank 0 to one device changes nothing."""

    def __init__(self, root_rank=None, index=None):
        self.root_rank, self.index = root_rank, index


NPUCheckpointSaverHook = tf.train.CheckpointSaverHook


class NPUOutputTensorHook(tf.train.SessionRunHook):
    def __init__(self, tensors, dependencies=None, output_fn=None, output_every_n_steps=0):
        self.tensors, self.output_fn = tensors, output_fn


def NPUBroadcastGlobalVariablesCallback(root_rank=0):  # noqa: N802  (a class in the real bridge)
    return tf.keras.callbacks.Callback()
