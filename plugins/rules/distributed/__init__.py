"""The ``distributed`` pack (NPU021-NPU027, opt-in): Horovod and ``tf.distribute`` training moved
to the NPU's collective communication. Off unless ``--rules`` names it: the migration changes
how the job is launched (one process per NPU, with a rank table instead of ``horovodrun``)."""
