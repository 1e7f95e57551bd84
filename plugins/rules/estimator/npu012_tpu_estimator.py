"""NPU012 tpu-estimator: a TPUEstimator runs on the NPU with the TPU switched off.

``use_tpu``, ``eval_on_tpu`` and ``export_to_tpu`` become ``False`` (NPU011 gives it the NPU run
config); ``tf.contrib.tpu.RunConfig``/``TPUConfig`` stay, TPUEstimator accepts them. TPU-only
calls are reported with what to do instead. The repository's TPUEstimator subclasses, and its
own TPUEstimators (vendored forks that subclass ``Estimator``), are switched off where they are
built, as NPU011 wraps their config.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, FrozenSet, Iterable, Optional

from npu_codemod.api import (
    Argument,
    FileContext,
    Node,
    Reference,
    Rule,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    parse_expression,
    set_keyword,
)
from npu_codemod.api._toolkit import (
    ESTIMATOR_MODULES,
    TPU_ESTIMATORS,
    RepositoryClass,
    estimator_subclass_calls,
    estimator_subclass_names,
    is_false,
    tree_text,
)

#: The TPU switches of ``TPUEstimator.__init__`` and their 0-based positions.
SWITCHES = (("use_tpu", 4), ("eval_on_tpu", 9), ("export_to_tpu", 10))
CROSS_SHARD = ("tensorflow.contrib.tpu.CrossShardOptimizer", "tensorflow.tpu.CrossShardOptimizer",
               "tensorflow.python.tpu.tpu_optimizer.CrossShardOptimizer",
               "tensorflow.contrib.tpu.python.tpu.tpu_optimizer.CrossShardOptimizer")
CLUSTER_RESOLVERS = ("tensorflow.contrib.cluster_resolver.TPUClusterResolver",
                     "tensorflow.distribute.cluster_resolver.TPUClusterResolver",
                     "tensorflow.python.distribute.cluster_resolver.TPUClusterResolver",
                     "tensorflow.python.distribute.cluster_resolver.tpu_cluster_resolver."
                     "TPUClusterResolver")
BFLOAT16 = ("tensorflow.tpu.bfloat16_scope", "tensorflow.contrib.tpu.bfloat16_scope",
            "tensorflow.python.tpu.bfloat16.bfloat16_scope")
SPECS = ("tensorflow.contrib.tpu.TPUEstimatorSpec", "tensorflow.estimator.tpu.TPUEstimatorSpec",
         "tensorflow.contrib.tpu.python.tpu.tpu_estimator.TPUEstimatorSpec")
#: ``TPUEstimatorSpec`` arguments that run on the TPU's host, and their positions.
HOST_ARGUMENTS = (("scaffold_fn", 6), ("host_call", 7))

OFF = "the TPU is switched off on the NPU"
ALL_OFF = "use_tpu, eval_on_tpu and export_to_tpu are False"
UNPACKED = "{flag} may come in the unpacked arguments: pass {flag}=False explicitly"
NOT_TAKEN = "{cls}.__init__ takes no {flag}: pass {flag}=False to the TPUEstimator it builds"
CROSS_SHARD_USE = ("TPU-only: remove {spelled} for the NPU and use {optimizer} directly "
                   "(the NPU needs no cross-shard optimizer)")
CLUSTER_USE = ("TPU-only: remove {spelled}(...) for the NPU, and the cluster= it gives the "
               "RunConfig: the NPU needs no TPU cluster")
BFLOAT16_USE = ("{spelled}() is not supported on Ascend: remove it (on the NPU, mixed precision "
                "is NPU007's precision_mode setting)")
HOST_USE = ("{spelled} with {arguments}: check the {arguments} {run} on CPU (without the TPU, "
            "TPUEstimator runs {them} on the host)")


def _passed(given: Optional[Argument]) -> bool:
    return given is not None and not is_none(given.value)


def _host_use(spelled: str, given: list[str]) -> str:
    """The message of a ``TPUEstimatorSpec`` given the host functions ``given``."""
    several = len(given) > 1
    return HOST_USE.format(spelled=spelled, arguments=" and ".join(given), run="run" if several else "runs",
                           them="them" if several else "it")


class TpuEstimator(Rule):
    id = "NPU012"
    name = "tpu-estimator"
    pack = "estimator"
    description = ("Switch the TPU off in every TPUEstimator (use_tpu, eval_on_tpu, "
                   "export_to_tpu=False); report TPU-only calls.")
    guide_section = "Estimator迁移: TPUEstimator"
    guide_section_en = "Estimator migration: TPUEstimator"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.contrib.tpu.TPUEstimator` / `tf.compat.v1.estimator.tpu.TPUEstimator` (and "
                "the repository's subclasses and its own TPUEstimators, vendored forks of "
                "TensorFlow's that subclass `Estimator` (named `TPUEstimator`, or whose "
                "`__init__` takes `use_tpu`/`eval_on_tpu`/`export_to_tpu`), where they are "
                "built) get `use_tpu=False`, "
                "`eval_on_tpu=False` and `export_to_tpu=False`: added when absent, a literal "
                "`True` or a variable replaced (the message names the old value); NPU011 gives "
                "it the NPU run config. `tf.contrib.tpu.RunConfig` and `TPUConfig` stay: "
                "TPUEstimator accepts them.")
    reports = ("TPU-only calls, with what to do instead: `CrossShardOptimizer(opt)` (use `opt` "
               "directly), `TPUClusterResolver(...)`, `tf.tpu.bfloat16_scope()` (not supported on "
               "Ascend), `TPUEstimatorSpec(...)` with `scaffold_fn`/`host_call` (check they run "
               "on CPU); a switch that may come in `**kwargs`, or that a subclass's `__init__` "
               "does not take.")
    example = """
        import tensorflow as tf


        def model_fn(features, labels, mode, params):
            loss = build_loss(features, labels)
            optimizer = tf.train.AdamOptimizer(params["learning_rate"])
            if params["use_tpu"]:
                optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
            train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
            return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


        def main(flags):
            resolver = tf.contrib.cluster_resolver.TPUClusterResolver(flags.tpu_name)
            estimator = tf.contrib.tpu.TPUEstimator(
                model_fn=model_fn, use_tpu=flags.use_tpu, train_batch_size=32,
                params={"learning_rate": 1e-4, "use_tpu": flags.use_tpu})
            estimator.train(input_fn=train_input_fn, max_steps=flags.train_steps)
    """
    # No ``tokens``: a file may build the repository's TPUEstimator subclass without a "TPU".
    _scope = "linked"
    calls = (*TPU_ESTIMATORS, *CROSS_SHARD, *CLUSTER_RESOLVERS, *BFLOAT16, *SPECS)
    modules = ESTIMATOR_MODULES  # a file importing only tensorflow_estimator too

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # the calls' last names, and the subclasses, constructed by their own names
        return (*super()._site_names_for(facts), *estimator_subclass_names(facts))

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        name, call = reference.name, reference.call
        spelled = reference.spelled
        if name in TPU_ESTIMATORS:
            self._switch_off(reference, dict(SWITCHES), None, ctx, ctx.defer)
        elif name in CROSS_SHARD:
            optimizer = find_argument(call, "opt", 0)
            code = f"`{tree_text(optimizer.value).strip()}`" if optimizer else "the optimizer"
            ctx.report(reference, "unmigrated", CROSS_SHARD_USE.format(spelled=spelled, optimizer=code))
        elif name in CLUSTER_RESOLVERS:
            ctx.report(reference, "unmigrated", CLUSTER_USE.format(spelled=spelled))
        elif name in BFLOAT16:
            ctx.report(reference, "unmigrated", BFLOAT16_USE.format(spelled=spelled))
        else:
            given = [argument for argument, position in HOST_ARGUMENTS
                     if _passed(find_argument(call, argument, position))]
            if given:  # one site, one finding, however many host functions it is given
                ctx.report(reference, "unmigrated", _host_use(spelled, given))

    def finish(self, tree: Node, ctx: FileContext) -> None:
        for found in estimator_subclass_calls(ctx):
            cls = found.cls
            if cls.api_base in TPU_ESTIMATORS or is_tpu_fork(cls):
                positions: dict[str, Optional[int]] = dict(SWITCHES) if cls.init is None \
                    else _positions(cls)
                self._switch_off(found.reference, positions, cls, ctx, lambda edit: edit())

    @staticmethod
    def _switch_off(reference: Reference, positions: dict[str, Optional[int]],
                    cls: Optional[RepositoryClass], ctx: FileContext,
                    run: Callable[[Callable[[], None]], None]) -> None:
        """``False`` for each switch in ``positions`` (flag -> its position, None: keyword
        only); a switch missing from ``positions`` is one the subclass ``cls`` does not take."""
        call = reference.call
        added, replaced, off, left = [], [], [], 0
        for flag, _ in SWITCHES:
            given = find_argument(call, flag, positions[flag]) if flag in positions else None
            if flag not in positions or (given is None and has_unpacking(call)):
                message = NOT_TAKEN if flag not in positions else UNPACKED
                ctx.report(reference, "unmigrated", message.format(cls=_short(cls), flag=flag))
                left += 1
            elif given is None:
                added.append(flag)
                run(partial(set_keyword, call, flag, "False"))
            elif not is_false(given.value):
                replaced.append(f"{flag}=False (was {tree_text(given.value).strip()})")
                run(partial(_to_false, given.value))
            else:
                off.append(flag)
        clauses = ([f"set {', '.join(replaced)}"] if replaced else []) + \
            ([f"added {'=False, '.join(added)}=False"] if added else [])
        if clauses:
            ctx.report(reference, "migrated", f"{' and '.join(clauses)}: {OFF}")
        elif not left:
            ctx.report(reference, "migrated", ALL_OFF)
        elif off:  # the switches the class takes are off: the same sites on a second run
            ctx.report(reference, "migrated", f"{' and '.join(off)} {'is' if len(off) == 1 else 'are'} False")


def is_tpu_fork(cls: RepositoryClass) -> bool:
    """Is the repository's Estimator class ``cls`` a TPUEstimator of its own (a vendored fork
    of TensorFlow's, ``class TPUEstimator(estimator_lib.Estimator)``): named so, or with an
    ``__init__`` that takes a TPU switch, itself or a repository class it derives from?"""
    flags = {flag for flag, _ in SWITCHES}
    return any(name.rpartition(".")[2].lower() == "tpuestimator" or not flags.isdisjoint(init or ())
               for name, init in cls.lineage)


def _positions(cls: RepositoryClass) -> dict[str, Optional[int]]:
    """Where the subclass ``cls``'s ``__init__`` takes each switch (left out: it takes none)."""
    found = {}
    for flag, _ in SWITCHES:
        parameter = cls.parameter(flag)
        if parameter is not None:
            found[flag] = parameter[0]
    return found


def _to_false(value: Node) -> None:
    new = parse_expression("False")
    new.prefix = value.prefix
    value.replace(new)


def _short(cls: Optional[RepositoryClass]) -> str:
    return cls.name.rpartition(".")[2] if cls is not None else "TPUEstimator"


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [TpuEstimator()]
