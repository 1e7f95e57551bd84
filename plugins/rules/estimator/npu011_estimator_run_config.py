"""NPU011 estimator-run-config: every Estimator runs with ``npu_run_config_init(...)``.

TensorFlow's Estimator classes are offered by name (``calls``); the repository's subclasses of
them, defined in this file or another one, come from the ``class:`` facts this module's
analysis hook gathers and are migrated in ``finish``. A subclass is wrapped where it is built,
never in its own ``super().__init__(...)`` (that is no call of an Estimator class by name).
``tf.keras.estimator.model_to_estimator(...)`` builds an Estimator too: its ``config`` is an
Estimator's config, and left alone the Keras model would train off the NPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, FrozenSet, Iterable, Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Reference,
    Rule,
    Status,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    parse_expression,
    set_keyword,
    symbols,
    tokens,
)
from npu_codemod.api import arguments as call_arguments
from npu_codemod.api._toolkit import (
    ESTIMATOR_CLASSES,
    ESTIMATOR_MAKERS,
    ESTIMATOR_MODULES,
    NPU_INIT_IMPORT,
    TPU_ESTIMATORS,
    assigned_values,
    class_facts,
    estimator_subclass_calls,
    estimator_subclass_names,
    is_call_trailer,
    prefix_name,
    wrap_expression,
)

from ._contrib_estimators import CONTRIB_ESTIMATORS, DEPRECATED, LEARN_CONFIG, core_run_config

NPU_RUN_CONFIG = "npu_run_config_init"
PREMADE = frozenset(ESTIMATOR_CLASSES) - {"tensorflow.estimator.Estimator", *TPU_ESTIMATORS}
WRAPPED = "wrapped config in npu_run_config_init(run_config=...)"
ADDED = "added config=npu_run_config_init()"
NONE = "replaced config=None with npu_run_config_init()"
DONE = "config is npu_run_config_init(...)"
BOUND = "config={} is npu_run_config_init(...)"
UNPACKED = ("config may come in the unpacked arguments: pass "
            "config=npu_run_config_init(run_config=<the run config>) explicitly")
POSITIONAL = ("config may be passed positionally: pass it as "
              "config=npu_run_config_init(run_config=<the run config>)")
NO_CONFIG = ("{cls}.__init__ takes no config: pass config through to the Estimator so it can take "
             "npu_run_config_init()")


@dataclass(frozen=True)
class Plan:
    """What NPU011 does at one construction: the finding, and the edit (None: nothing)."""

    status: Status
    message: str
    edit: Optional[Callable[[], None]] = None


def config_plan(call: Node, position: Optional[int], premade: Optional[int] = None) -> Plan:
    """The plan for the ``(...)`` trailer of one construction whose ``config`` is the
    ``position``-th parameter (None: keyword only). ``premade``: the position of ``config`` of
    a premade estimator, whose v1 and v2 signatures differ: a call with that many positional
    arguments is reported, not guessed at."""
    config = find_argument(call, "config", position)
    if config is None:
        if has_unpacking(call):
            return Plan("unmigrated", UNPACKED)
        if premade is not None and _positionals(call) >= premade:
            return Plan("unmigrated", POSITIONAL)
        return Plan("migrated", ADDED, lambda: set_keyword(call, "config", f"{NPU_RUN_CONFIG}()"))
    value = config.value
    if is_npu_run_config(value):
        return Plan("migrated", DONE)
    if value.type == tokens.NAME and _bound_to_npu_run_config(value):
        return Plan("migrated", BOUND.format(value.value))
    if is_none(value):
        return Plan("migrated", NONE, lambda: _replace(value, f"{NPU_RUN_CONFIG}()"))
    return Plan("migrated", WRAPPED, lambda: wrap_expression(value, f"{NPU_RUN_CONFIG}(run_config={{}})"))


def _contrib_plan(reference: Reference, ctx: FileContext) -> Plan:
    """The plan for a contrib estimator: as a premade one when it is built on tf.estimator or
    its config is shown to be a tf.estimator.RunConfig; else reported (see
    :mod:`._contrib_estimators`). Its message says the class is deprecated."""
    known = CONTRIB_ESTIMATORS[reference.name]
    config = find_argument(reference.call, "config", known.position if not known.core else None)
    if known.core or (config is not None and (is_npu_run_config(config.value)
                                              or core_run_config(config.value, ctx))):
        plan = config_plan(reference.call, None, known.position) if config is None or known.core \
            else config_plan(reference.call, known.position)
    else:
        return Plan("unmigrated", LEARN_CONFIG.format(spelled=reference.spelled))
    return Plan(plan.status, plan.message + DEPRECATED.format(spelled=reference.spelled), plan.edit)


def _replace(value: Base, code: str) -> None:
    new = parse_expression(code)
    new.prefix = value.prefix
    value.replace(new)


def is_npu_run_config(value: Base) -> bool:
    """Is ``value`` a call of ``npu_run_config_init`` (any module prefix)?"""
    if value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return False
    callee = prefix_name(value, len(value.children) - 1) or ""
    return callee.rpartition(".")[2] == NPU_RUN_CONFIG


def _bound_to_npu_run_config(name: Base) -> bool:
    values = assigned_values(name, name.value) or []
    return bool(values) and all(is_npu_run_config(value) for value in values)


def _positionals(call: Node) -> int:
    return sum(1 for argument in call_arguments(call) if argument.keyword is None and not argument.star)


class EstimatorRunConfig(Rule):
    id = "NPU011"
    name = "estimator-run-config"
    pack = "estimator"
    description = ("Run every Estimator, premade estimator, TPUEstimator and repository subclass "
                   "of them with config=npu_run_config_init(...).")
    guide_section = "Estimator迁移: 运行配置 (npu_run_config_init)"
    guide_section_en = "Estimator migration: the run configuration (npu_run_config_init)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("Every construction of `tf.estimator.Estimator`, a premade estimator "
                "(`DNNClassifier`, `LinearRegressor`, `DNNLinearCombinedClassifier`, "
                "`BaselineEstimator`, `BoostedTreesClassifier`, ...), the contrib estimators built "
                "on `tf.estimator` (`tf.contrib.estimator.*`, the `Core*` estimators of "
                "`tf.contrib.boosted_trees`) and any other contrib estimator whose config is "
                "shown to be a `tf.estimator.RunConfig`, `tf.contrib.tpu.TPUEstimator` "
                "/ `tf.compat.v1.estimator.tpu.TPUEstimator`, or a class of the repository that "
                "subclasses one of them (in any file: a repository-wide fact; also spelled "
                "through the packages whose `__init__` re-exports it, `mylib.estimator.GANEstimator`), "
                "runs with the NPU run config, and so does the Estimator "
                "`tf.keras.estimator.model_to_estimator(...)` builds: its `config` (keyword, or "
                "the third positional of `Estimator` and `TPUEstimator`, the fifth of "
                "`model_to_estimator`) becomes `npu_run_config_init(run_config=<config>)`, a missing "
                "one `config=npu_run_config_init()`. A subclass is wrapped where it is built, "
                "never in its own `super().__init__(...)`. A config that already is "
                "`npu_run_config_init(...)`, or a name the scope binds only to it, is left as it "
                "is: a config is never wrapped twice.")
    reports = ("A `tf.contrib.learn` estimator (and the boosted-trees ones built on it) whose "
               "config is not shown to be a `tf.estimator.RunConfig`: it takes a "
               "`tf.contrib.learn.RunConfig`, so port it to `tf.estimator`; "
               "a construction whose config may be in `*args`/`**kwargs`; a premade estimator "
               "given so many positional arguments that `config` may be one (its position "
               "differs between the v1 and v2 signatures); a subclass whose `__init__` takes "
               "no `config` (nor `**kwargs`): pass it through to the Estimator.")
    example = """
        import tensorflow as tf

        from model import model_fn, serving_input_fn


        def main(flags):
            run_config = tf.estimator.RunConfig(model_dir=flags.model_dir, save_summary_steps=0)
            estimator = tf.estimator.Estimator(model_fn, config=run_config, params=vars(flags))
            baseline = tf.estimator.LinearClassifier(feature_columns=flags.columns)
            estimator.train(input_fn=lambda: train_input_fn(flags), max_steps=flags.steps)
            return tf.estimator.Estimator(model_fn, **flags.estimator_args)
    """
    _scope = "linked"
    calls = (*ESTIMATOR_CLASSES, *ESTIMATOR_MAKERS, *CONTRIB_ESTIMATORS)
    modules = ESTIMATOR_MODULES  # a file importing only tensorflow_estimator too

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # the calls' last names, and the subclasses, constructed by their own names
        return (*super()._site_names_for(facts), *estimator_subclass_names(facts))

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        name = reference.name
        if name in CONTRIB_ESTIMATORS:
            self._apply(reference, _contrib_plan(reference, ctx), ctx, ctx.defer)
            return
        if name in ESTIMATOR_MAKERS:
            self._apply(reference, config_plan(reference.call, ESTIMATOR_MAKERS[name]), ctx, ctx.defer)
            return
        premade = ESTIMATOR_CLASSES[name] if name in PREMADE else None
        position = None if premade is not None else ESTIMATOR_CLASSES[name]
        self._apply(reference, config_plan(reference.call, position, premade), ctx, ctx.defer)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        for found in estimator_subclass_calls(ctx):
            cls, call = found.cls, found.reference.call
            if cls.init is None:
                premade = ESTIMATOR_CLASSES[cls.api_base] if cls.api_base in PREMADE else None
                plan = config_plan(call, None if premade is not None else ESTIMATOR_CLASSES[cls.api_base], premade)
            else:
                parameter = cls.parameter("config")
                plan = Plan("unmigrated", NO_CONFIG.format(cls=cls.name.rpartition(".")[2])) \
                    if parameter is None else config_plan(call, parameter[0])
            self._apply(found.reference, plan, ctx, lambda edit: edit())

    @staticmethod
    def _apply(reference: Reference, plan: Plan, ctx: FileContext,
               run: Callable[[Callable[[], None]], None]) -> None:
        if plan.edit is not None:
            run(plan.edit)
            ctx.add_import(NPU_INIT_IMPORT)  # binds npu_run_config_init
        ctx.report(reference, plan.status, plan.message)


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    """The repository's classes and their bases: Estimator subclasses in other files."""
    return class_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [EstimatorRunConfig()]
