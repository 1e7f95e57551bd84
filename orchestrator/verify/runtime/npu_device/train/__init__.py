"""``npu.train``."""

from npu_device.train import optimizer  # noqa: F401
