"""The ``tf2-distributed`` rule pack (opt-in, like ``distributed``: it changes how training
aggregates): TF 2.x distributed training onto TF Adapter 2.x's collectives
(``npu.distribute``; ``spec/rules-tf2.md``).

- ``npu067_broadcast_variables``: NPU067, initial variables broadcast once a model has them;
- ``npu068_gradient_allreduce``: NPU068, ``all_reduce`` of a custom loop's gradients, the Keras
  optimizer wrapper for ``compile`` and ``minimize``;
- ``npu069_dataset_shard``: NPU069, training datasets not sharded per worker (reported);
- ``npu070_strategy_horovod``: NPU070, ``tf.distribute`` strategies and Horovod in TF 2.x
  files reported with the NPU call that replaces each;
- ``_device``: the file's name for ``npu_device``.
"""
