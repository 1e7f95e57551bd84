"""NPU070 tf2-strategy-horovod: tf.distribute's MirroredStrategy and Horovod in TF 2.x files
(report only).

On the NPU each TensorFlow process drives one device and processes synchronise through CANN's
collectives (``npu.distribute``); TF Adapter 2.x supports Horovod only in ``tf.compat.v1``
scripts. Each site is reported with the NPU call that replaces it; nothing is rewritten (the
strategy is never replaced by the TF 1.x adapter's ``NPUStrategy``).
"""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import TF2, TF_NEUTRAL

MIRRORED = "tensorflow.distribute.MirroredStrategy"
STRATEGY = ("training runs after porting with npu.distribute: broadcast after model creation, "
            "all_reduce or the Keras wrapper for gradients, shard_and_rebatch_dataset for data "
            "(NPU067-NPU069)")
#: Horovod in a TF 2.x file: the nearest NPU call for each API.
HOROVOD = {
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
#: Horovod's Keras callbacks (``hvd.callbacks.*``, ``hvd.keras.callbacks.*`` of
#: ``horovod.tensorflow``): what the TF 2.x script does instead.
CALLBACKS = {
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
HOROVOD_MODULES = ("horovod.tensorflow", "horovod.tensorflow.keras", "horovod.keras")
KERAS_MODULES = ("horovod.tensorflow.keras", "horovod.keras")
HOROVOD_SITE = ("Horovod in TF 2.x code: TF Adapter 2.x supports it only in tf.compat.v1 scripts; "
                "replace {spelled} by {instead}")
HOROVOD_OTHER = ("Horovod in TF 2.x code: TF Adapter 2.x supports it only in tf.compat.v1 scripts; "
                 "replace {spelled} with npu.distribute (broadcast, all_reduce)")


class StrategyHorovod(Rule):
    id = "NPU070"
    name = "tf2-strategy-horovod"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2, TF_NEUTRAL})  # tf-neutral: only in a TF 2.x repository
    description = "Report tf.distribute.MirroredStrategy and Horovod in TF 2.x files, with the NPU call for each."
    guide_section = "分布式训练脚本适配"
    guide_section_en = "Distributed Training Script Adaptation"
    guide_url = Rule.catalog_url(id, name)
    reports = ("`tf.distribute.MirroredStrategy(...)` in a `tf2` file (training runs with "
               "`npu.distribute` after porting; never replaced by `NPUStrategy`); every "
               "`hvd.*` use of `horovod.tensorflow`/`horovod.tensorflow.keras` with its NPU "
               "replacement (`DistributedGradientTape` -> `all_reduce`, `broadcast_variables` -> "
               "`npu.distribute.broadcast`, `DistributedOptimizer` -> the Keras wrapper, "
               "`rank()`/`size()` -> `RANK_ID`/`RANK_SIZE`, `init()` -> nothing), Horovod's Keras "
               "callbacks too (`BroadcastGlobalVariablesCallback` -> `npu.distribute.broadcast`, "
               "`MetricAverageCallback` -> `all_reduce` of the metrics, the learning-rate callbacks -> "
               "a Keras scheduler scaled by `RANK_SIZE`).")
    example = """
        import horovod.tensorflow as hvd
        import tensorflow as tf

        hvd.init()
        strategy = tf.distribute.MirroredStrategy()


        def step(model, optimizer, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            tape = hvd.DistributedGradientTape(tape)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    modules = ("tensorflow", "horovod")
    calls = (MIRRORED,)
    uses = tuple(f"{module}.{name}" for module in HOROVOD_MODULES for name in HOROVOD) \
        + tuple(f"{module}.callbacks.{name}" for module in KERAS_MODULES for name in CALLBACKS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.name == MIRRORED:
            ctx.report(reference, "unmigrated", STRATEGY)
            return
        name = reference.name.rpartition(".")[2]
        instead = HOROVOD.get(name) or CALLBACKS.get(name)
        message = HOROVOD_SITE.format(spelled=reference.spelled, instead=instead) if instead \
            else HOROVOD_OTHER.format(spelled=reference.spelled)
        ctx.report(reference, "unmigrated", message)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [StrategyHorovod()]
