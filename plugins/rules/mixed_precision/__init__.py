"""The ``mixed-precision`` rule pack: loss scaling and automatic mixed precision on the NPU.

- ``npu031_loss_scale_optimizer``: NPU031, ``MixedPrecisionLossScaleOptimizer`` (and TF 1.x's
  contrib ``LossScaleOptimizer``) becomes ``NPULossScaleOptimizer`` (``is_distributed=True`` in a distributed repository, whose fact
  its analysis hook gathers);
- ``npu032_loss_scale_manager``: NPU032, ``FixedLossScale``/``DynamicLossScale`` (and contrib's
  managers) become the NPU's loss-scale managers;
- ``npu033_auto_mixed_precision``: NPU033, the graph rewrite and Keras policies reported;
- ``_loss_scales``: what NPU031 and NPU032 decide together (which loss scale is whose, and
  what each does when the other is disabled).
"""
