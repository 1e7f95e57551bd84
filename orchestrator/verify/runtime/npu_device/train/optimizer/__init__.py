"""``npu.train.optimizer``: the NPU loss-scale optimizers."""

from npu_device.train.optimizer.npu_loss_scale_optimizer import (  # noqa: F401
    NpuExperimentalLossScaleOptimizer,
    NpuLossScaleOptimizer,
)
