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

# Each text says what the list's note (its column 4, "说明", left out of the shipped CSV; quoted here
# in English with its row, ``[L26 rN]`` as in ``spec/rules-tf2.md``) asks for, and marks what is
# ours: the guide's facts ([G03]: ops pinned to no device run on the NPU ``npu.open().as_default()``
# opens) and the project's spec where it departs from the note.

#: [L26 r3117] ``tf.DeviceSpec``, trains-after-migration: "run the model on the CPU:
#: tf.DeviceSpec.from_string('/job:localhost/replica:0/task:0/device:CPU:0')".
_DEVICE_SPEC = ("{api}: Ascend's TF 2.6 list has training work once the device it names is the host CPU "
                "(tf.DeviceSpec.from_string('/job:localhost/replica:0/task:0/device:CPU:0')); ops placed "
                "on no device run on the NPU that npu.open().as_default() opens")
#: [L26 r445] ``tf.compat.v1.device``, supported-after-migration: "run the model on the CPU:
#: tf.device('/cpu:0')" (``tf.device`` itself: ``npu071_api_support.DEVICE_ADVICE``, [L26 r3116]).
_COMPAT_DEVICE = ("{api}: Ascend's TF 2.6 list has it work once it pins the ops to the host CPU "
                  "({api}('/cpu:0')); ops placed on no device run on the NPU that npu.open().as_default() opens")
#: [L26 r446] ``tf.compat.v1.DeviceSpec``, supported-after-migration: "set allow_soft_placement to
#: true, log_device_placement to false" (the note of ``tf.compat.v1.ConfigProto``, [L26 r299]).
_COMPAT_DEVICE_SPEC = ("{api}: Ascend's TF 2.6 list has it work with soft placement on and device "
                       "placement logging off (allow_soft_placement=True, log_device_placement=False)")
#: [L26 r2999, r292] ``set_soft_device_placement``, trains-after-migration: "set the argument enabled
#: to True"; why, ours: TensorFlow's soft placement puts an op with no NPU kernel on the CPU.
_SOFT_PLACEMENT = ("keep soft placement on for the NPU: call {api}(True), so that ops the NPU has no "
                   "kernel for run on the CPU")
#: [L26 r2973, r2975, r2978] ``set_memory_growth``/``set_virtual_device_configuration``: "make the
#: API return None"; ``VirtualDeviceConfiguration``: "set memory_limit to None" (NPU052).
_GPU_MEMORY = "the NPU has no GPU memory settings: remove {api} (npu-codemod's NPU052 does when it runs)"
#: [L26 r6635, r2945] ``jit_scope``, trains-after-migration: "set the argument compile_ops to False" (NPU051).
_XLA = ("XLA does not compile for the NPU: remove {api}, or pass compile_ops=False (npu-codemod's NPU051 "
        "does when it runs)")
#: [L26 r299, r834, r2214, r952, r2452, r2836, r2838]: the TF 1.x tool's session-config rewrites
#: (``npu_config_proto``, ``global_jit_level`` OFF), which the TF 1.x rules make in a compat.v1 file.
_GRAPH_MODE = ("{api} is graph-mode (session) code in an eager TF 2.x file: port the file through "
               "tf.compat.v1 (NPU062's header; the TF 1.x rules then give its sessions the NPU "
               "config) or move it to eager TF 2.x code")
#: [L26 r2994, r287] ``set_experimental_options``, trains-after-migration: "1. keep
#: rewrite_options.disable_model_pruning off (its default), do not turn it on; 2. keep on (their
#: default), do not turn off: function_optimization, constant_folding, shape_optimization,
#: arithmetic_optimization, loop_optimization, dependency_optimization, layout_optimizer,
#: memory_optimization". (The TF 1.x guide's session config turns memory_optimization off: not here.)
_GRAPPLER = ("{api}: Ascend's TF 2.6 list has training work with grappler's defaults: keep "
             "disable_model_pruning off and function_optimization, constant_folding, shape_optimization, "
             "arithmetic_optimization, loop_optimization, dependency_optimization, layout_optimizer and "
             "memory_optimization on; remove each of those this call sets otherwise")
#: [L26 r3163] ``tf.distribute.OneDeviceStrategy``, trains-after-migration, note "none": training
#: works once the script is migrated (NPU061's init), no change of its own.
_ONE_DEVICE = ("{api}: Ascend's TF 2.6 list has training work with it once the script opens the NPU "
               "(npu.open().as_default(), NPU061) and asks for no change of its own; check on the NPU "
               "that the device it names does not take the ops off the NPU")
#: [L26 r3160] ``tf.distribute.MirroredStrategy``'s note (NPU070's words), for the compat.v1
#: strategies too, whose notes [L26 r471, r476, r488] say "change to npu_strategy.NPUStrategy", the
#: TF 1.x adapter's: ours, per the spec (NPU070: never NPUStrategy in eager TF 2.x code).
_STRATEGY = ("{api}: on the NPU each process drives one device and processes synchronise through "
             "npu.distribute: broadcast the variables after the model is built, all_reduce the "
             "gradients (or the Keras optimizer wrapper) and shard the dataset (NPU067-NPU069) "
             "instead of the strategy")

_COMPAT = "tf.compat.v1."
_ADVICE: dict[str, str] = {
    "tf.DeviceSpec": _DEVICE_SPEC,
    "tf.compat.v1.DeviceSpec": _COMPAT_DEVICE_SPEC,
    "tf.compat.v1.device": _COMPAT_DEVICE,
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
