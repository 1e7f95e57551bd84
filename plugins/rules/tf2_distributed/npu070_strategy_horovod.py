"""NPU070 tf2-strategy-horovod: tf.distribute's multi-device strategies and Horovod in TF 2.x
files (report only).

On the NPU each TensorFlow process drives one device and processes synchronise through CANN's
collectives (``npu.distribute``); TF Adapter 2.x supports Horovod only in ``tf.compat.v1``
scripts. Each site is reported with the NPU call that replaces it; nothing is rewritten (the
strategy is never replaced by the TF 1.x adapter's ``NPUStrategy``). Every strategy that
aggregates across devices by itself (``STRATEGIES_TF2``: MirroredStrategy, MultiWorkerMirrored,
CentralStorage, ParameterServer, TPU) is reported alike, whatever the TF 2.6 list says of it:
NPU067/NPU068 port its training to ``npu.distribute`` as they port MirroredStrategy's, so the
strategy must go (the spec lists only MirroredStrategy here and leaves the others to the list,
which calls MultiWorkerMirroredStrategy harmless: a file using it was ``ready`` with two
aggregations). The words for Horovod and
the strategy are shared with NPU071, which reports the same sites while this pack is off
(``tf2_horovod``).
"""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import (
    HOROVOD_KERAS_MODULES,
    HOROVOD_MODULES,
    HOROVOD_TF2,
    HOROVOD_TF2_CALLBACKS,
    NON_TF,
    STRATEGIES_TF2,
    STRATEGY_TF2,
    TF2,
    TF_NEUTRAL,
    horovod_program,
    horovod_tf2_advice,
)


class StrategyHorovod(Rule):
    id = "NPU070"
    name = "tf2-strategy-horovod"
    pack = "tf2-distributed"
    default_on = False
    #: tf-neutral: only in a TF 2.x repository; non-tf: a Horovod helper module of a TF 2.x
    #: program (``from dist import wrap_tape``), whose aggregation NPU067/NPU068 leave to us
    file_kinds = frozenset({TF2, TF_NEUTRAL, NON_TF})
    description = "Report tf.distribute's multi-device strategies and Horovod in TF 2.x files, with the NPU call for each."
    guide_section = "分布式训练脚本适配"
    guide_section_en = "Distributed Training Script Adaptation"
    guide_url = Rule.catalog_url(id, name)
    reports = ("`tf.distribute.MirroredStrategy(...)` and every other strategy that aggregates "
               "across devices itself (`MultiWorkerMirroredStrategy`, `CentralStorageStrategy`, "
               "`ParameterServerStrategy`, `TPUStrategy`, their `experimental` names) in a `tf2` "
               "file (training runs with `npu.distribute` after porting, then the strategy goes; "
               "never replaced by `NPUStrategy`); every "
               "`hvd.*` use of `horovod.tensorflow`/`horovod.tensorflow.keras` with its NPU "
               "replacement (`DistributedGradientTape` -> `all_reduce`, `broadcast_variables` -> "
               "`npu.distribute.broadcast`, `DistributedOptimizer` -> the Keras wrapper, "
               "`rank()`/`size()` -> `RANK_ID`/`RANK_SIZE`, `init()` -> nothing), Horovod's Keras "
               "callbacks too (`BroadcastGlobalVariablesCallback` -> `npu.distribute.broadcast`, "
               "`MetricAverageCallback` -> `all_reduce` of the metrics, the learning-rate callbacks -> "
               "a Keras scheduler scaled by `RANK_SIZE`); so in a module importing no TensorFlow "
               "that a TF 2.x program reaches (a repository's Horovod helpers).")
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
    calls = STRATEGIES_TF2
    uses = tuple(f"{module}.{name}" for module in HOROVOD_MODULES for name in HOROVOD_TF2) \
        + tuple(f"{module}.callbacks.{name}" for module in HOROVOD_KERAS_MODULES
                for name in HOROVOD_TF2_CALLBACKS)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if ctx.file_kind == NON_TF and not horovod_program(ctx.facts, ctx.path):
            return  # a file importing no TensorFlow is TF 2.x code only as a TF 2.x program's module
        if reference.name in STRATEGIES_TF2:
            ctx.report(reference, "unmigrated", STRATEGY_TF2)
            return
        ctx.report(reference, "unmigrated", horovod_tf2_advice(reference.name, reference.spelled))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [StrategyHorovod()]
