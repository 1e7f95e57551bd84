"""What NPU071 tells a person about a use of an API that Ascend's TF 2.6 list says works once
migrated (``supported-after-migration``, ``trains-after-migration``) and that no rule covered in
a ``tf2`` or ``tf-neutral`` file: the API, and what to do with it in eager TF 2.x code (the TF 1.x
owners of NPU100's table do not run there, so "migrate it as the guide says" would say nothing).

The 41 APIs of the list with those statuses (``shared/data/ascend-tf2.6-api-support.csv``), by
what a person does; ``tf.distribute.MirroredStrategy`` has NPU070's words, and
``tf.compat.v1.data.Dataset`` its TF 2.x owner (NPU064).
"""

from __future__ import annotations

from typing import Optional

_DEVICE = ("{api} names a device, and no GPU exists on the NPU host: remove it and let the NPU "
           "opened by npu.open().as_default() place the ops, or name the CPU for ops that must stay there")
_SOFT_PLACEMENT = ("keep soft placement on for the NPU: call {api}(True), so that ops the NPU has no "
                   "kernel for run on the CPU")
_GPU_MEMORY = "the NPU has no GPU memory settings: remove {api} (npu-codemod's NPU052 does when it runs)"
_XLA = ("XLA does not compile for the NPU: remove {api}, or pass compile_ops=False (npu-codemod's NPU051 "
        "does when it runs)")
_GRAPH_MODE = ("{api} is graph-mode (session) code in an eager TF 2.x file: port the file through "
               "tf.compat.v1 (NPU062's header; the TF 1.x rules then give its sessions the NPU "
               "config) or move it to eager TF 2.x code")
_GRAPPLER = ("{api} sets grappler's graph rewrites for the GPU: the NPU needs remapping and "
             "memory_optimization off, so drop those options if this call turns them on, and check "
             "the others on the NPU")
_ONE_DEVICE = ("{api}: each NPU process trains on the one device npu.open().as_default() opens "
               "(NPU061): drop the strategy and its scope(), or give it no GPU device "
               "(\"/gpu:0\" does not exist on the NPU host)")
_STRATEGY = ("{api}: on the NPU each process drives one device and processes synchronise through "
             "npu.distribute: broadcast the variables after the model is built, all_reduce the "
             "gradients (or the Keras optimizer wrapper) and shard the dataset (NPU067-NPU069) "
             "instead of the strategy")

_COMPAT = "tf.compat.v1."
_ADVICE: dict[str, str] = {
    "tf.DeviceSpec": _DEVICE,
    "tf.compat.v1.DeviceSpec": _DEVICE,
    "tf.compat.v1.device": _DEVICE,
    "tf.config.set_soft_device_placement": _SOFT_PLACEMENT,
    "tf.config.optimizer.set_experimental_options": _GRAPPLER,
    "tf.config.experimental.set_memory_growth": _GPU_MEMORY,
    "tf.config.experimental.set_virtual_device_configuration": _GPU_MEMORY,
    "tf.config.experimental.VirtualDeviceConfiguration": _GPU_MEMORY,
    "tf.xla.experimental.jit_scope": _XLA,
    "tf.distribute.OneDeviceStrategy": _ONE_DEVICE,
    **{f"{_COMPAT}{name}": _GRAPH_MODE for name in (
        "ConfigProto", "GraphOptions", "OptimizerOptions", "Session", "InteractiveSession",
        "train.MonitoredSession", "train.MonitoredTrainingSession")},
    **{f"{_COMPAT}distribute.{name}": _STRATEGY for name in (
        "MirroredStrategy", "experimental.CentralStorageStrategy",
        "experimental.MultiWorkerMirroredStrategy")},
}


def migrated_advice(listed: str, api: str) -> Optional[str]:
    """What to do about a use (spelled ``api``) of the API the TF 2.6 list names ``listed`` in
    eager TF 2.x code, or None for an API with no advice of its own. A ``tf.compat.v1`` spelling
    of a TF 2.x API takes that API's advice; an Estimator is graph-mode code."""
    found = _ADVICE.get(listed)
    if found is None and listed.startswith(_COMPAT):
        rest = listed[len(_COMPAT):]
        found = _ADVICE.get("tf." + rest) or (_GRAPH_MODE if rest.startswith("estimator.") else None)
    return found.format(api=api) if found is not None else None
