"""Emulation of TF Adapter 2.x (``npu_device``) for ``npu-codemod verify`` on CPU TensorFlow.

What the ``tf2`` pack writes runs here: ``npu.open().as_default()`` opens nothing (the ops run
on the CPU, as the migrated script's ops would on the NPU), ``NpuLossScaleOptimizer`` is Keras'
``LossScaleOptimizer`` (the NPU class falls back to it where no NPU is), and ``npu.distribute``
works as on a single worker (``all_reduce`` and ``broadcast`` are identities,
``shard_and_rebatch_dataset`` returns its inputs), as the adapter itself does with one device.
"""

from npu_device import compat, distribute, train  # noqa: F401


class _Options:
    """What ``npu.global_options()`` returns: options are set as attributes
    (``npu.global_options().precision_mode = "allow_mix_precision"``)."""


_OPTIONS = _Options()


class _Device:
    """What ``npu.open()`` returns: ``as_default()`` makes it the default device."""

    def __init__(self, device_id=0):
        self.device_id = device_id

    def as_default(self):
        return self


_OPENED = {}


def open(device_id=None, *args, **kwargs):  # noqa: A001 - the adapter's own name
    """``npu.open``: the same device twice is the same instance (``npu_device.py``)."""
    key = 0 if device_id is None else int(device_id)
    return _OPENED.setdefault(key, _Device(key))


def global_options():
    """``npu.global_options()``: options set before ``open`` (kept, no effect on the CPU)."""
    return _OPTIONS


def set_npu_loop_size(loop_size):
    """``npu.set_npu_loop_size``: the iterations one traced call runs (no effect on the CPU)."""
    _OPTIONS.npu_loop_size = int(loop_size)
