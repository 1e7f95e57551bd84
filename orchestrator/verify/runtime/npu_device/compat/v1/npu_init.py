"""``from npu_device.compat.v1.npu_init import *``: the names of ``npu_bridge.npu_init`` (the
adapter ships that module converted to ``tensorflow.compat.v1``)."""

from npu_bridge.npu_init import *  # noqa: F401,F403
