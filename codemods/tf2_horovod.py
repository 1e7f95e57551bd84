"""Horovod and MirroredStrategy in TF 2.x code: what replaces each on the NPU (``spec/rules-tf2.md``,
NPU070).

TF Adapter 2.x supports Horovod only in ``tf.compat.v1`` scripts; in eager TF 2.x code each
``hvd.*`` use is replaced by hand with ``npu.distribute`` or the environment the adapter reads.
Two rules say so with the same words: NPU070 (the opt-in ``tf2-distributed`` pack) and, while
that pack is off, the always-on audit NPU071, so that a TF 2.x file's Horovod uses are never
left unreported and a repository still using them is never ``ready``; likewise for
``tf.distribute.MirroredStrategy(...)``.
"""

from __future__ import annotations

from .horovod_holders import HOROVOD_MODULES

#: The rule that reports Horovod in TF 2.x code, and the pack that holds it.
HOROVOD_TF2_RULE = "NPU070"
HOROVOD_TF2_OPT_IN = ("npu-codemod's tf2-distributed pack (`--rules default,tf2-distributed`) "
                      "reports the rest of the distributed port (NPU067-NPU070)")
#: Horovod in a TF 2.x file: the nearest NPU call for each API (the last part of its name).
HOROVOD_TF2 = {
    "DistributedGradientTape": "npu.distribute.all_reduce(grads, \"mean\") on the gradients (NPU068)",
    "broadcast_variables": "npu.distribute.broadcast(variables, root_rank=...)",
    "DistributedOptimizer": "npu.distribute.npu_distributed_keras_optimizer_wrapper(optimizer)",
    "rank": "the RANK_ID environment variable the adapter reads at npu.open()",
    "local_rank": "the RANK_ID environment variable the adapter reads at npu.open()",
    "size": "the RANK_SIZE environment variable the adapter reads at npu.open()",
    "local_size": "the RANK_SIZE environment variable the adapter reads at npu.open()",
    "init": "nothing: npu.open() reads the rank table and rank id when RANK_SIZE > 1",
    "allreduce": "npu.distribute.all_reduce(...)",
    "broadcast": "npu.distribute.broadcast(...)",
}
#: Horovod's Keras callbacks (``hvd.callbacks.*`` of ``horovod.tensorflow.keras`` and
#: ``horovod.keras``): what the TF 2.x script does instead.
HOROVOD_TF2_CALLBACKS = {
    "BroadcastGlobalVariablesCallback": "npu.distribute.broadcast(model.trainable_variables) once the "
                                        "model is built (NPU067)",
    "MetricAverageCallback": "npu.distribute.all_reduce(value, \"mean\") of each metric in a callback "
                             "of your own (each worker logs its own metrics otherwise)",
    "LearningRateWarmupCallback": "a warm-up in tf.keras.callbacks.LearningRateScheduler, the rate "
                                  "scaled by the RANK_SIZE environment variable",
    "LearningRateScheduleCallback": "tf.keras.callbacks.LearningRateScheduler, the rate scaled by the "
                                    "RANK_SIZE environment variable",
    "BestModelCheckpoint": "tf.keras.callbacks.ModelCheckpoint(save_best_only=True) on the worker "
                           "whose RANK_ID is 0",
}
HOROVOD_KERAS_MODULES = ("horovod.tensorflow.keras", "horovod.keras")
#: The ``tf.distribute`` strategy NPU070 reports in TF 2.x code, and what it says about a call
#: (NPU071 says the same while NPU070's pack is off: TF 2.6 lists it ``trains-after-migration``,
#: a site no finding named would leave the repository short of ``ready`` for no stated reason).
MIRRORED_TF2 = "tensorflow.distribute.MirroredStrategy"
#: Every ``tf.distribute`` strategy that spreads training over several devices or processes and
#: aggregates by its own collectives: NPU070 reports each one as MirroredStrategy, whatever the
#: TF 2.6 list says of it (``MultiWorkerMirroredStrategy`` is ``unsupported-harmless`` there,
#: its ``experimental`` alias ``supported``), since NPU067/NPU068 port the same training to
#: ``npu.distribute`` and the two aggregations must not both run. ``OneDeviceStrategy`` is not
#: one (one device, no collective): its status comes from the list (NPU071).
STRATEGIES_TF2 = (MIRRORED_TF2,) + tuple(f"tensorflow.distribute.{name}" for name in (
    "MultiWorkerMirroredStrategy", "experimental.MultiWorkerMirroredStrategy",
    "experimental.CentralStorageStrategy", "experimental.ParameterServerStrategy",
    "TPUStrategy", "experimental.TPUStrategy"))
STRATEGY_TF2 = ("training runs after porting with npu.distribute: broadcast after model creation, "
                "all_reduce or the Keras wrapper for gradients, shard_and_rebatch_dataset for data "
                "(NPU067-NPU069); then remove the strategy and its scope(): each NPU process drives "
                "one device, and the strategy's own aggregation would run on top of npu.distribute's")
#: Horovod in a ``tf2-compat`` file while the ``distributed`` pack is off (TF Adapter 2.x runs
#: Horovod there: the pack's rules port it, as in TF 1.x code).
COMPAT_SITE = ("Horovod in tf.compat.v1 code ({spelled}): TF Adapter 2.x supports it there; "
               "npu-codemod migrates it with `--rules default,distributed`")
SITE = ("Horovod in TF 2.x code: TF Adapter 2.x supports it only in tf.compat.v1 scripts; "
        "replace {spelled} by {instead}")
OTHER = ("Horovod in TF 2.x code: TF Adapter 2.x supports it only in tf.compat.v1 scripts; "
         "replace {spelled} with npu.distribute (broadcast, all_reduce)")


def is_horovod_tf2_name(name: str) -> bool:
    """Is the qualified ``name`` Horovod for TensorFlow (a module of it, or a name in one)?"""
    return any(name == module or name.startswith(module + ".") for module in HOROVOD_MODULES)


def horovod_tf2_advice(name: str, spelled: str) -> str:
    """What to do about a use of the Horovod API ``name`` (qualified) spelled ``spelled`` in
    TF 2.x code: the NPU call that replaces it, or ``npu.distribute`` for the rest."""
    last = name.rpartition(".")[2]
    instead = HOROVOD_TF2.get(last) or HOROVOD_TF2_CALLBACKS.get(last)
    return SITE.format(spelled=spelled, instead=instead) if instead else OTHER.format(spelled=spelled)
