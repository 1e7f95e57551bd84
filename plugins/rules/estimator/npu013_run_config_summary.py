"""NPU013 run-config-summary: an Estimator's ``RunConfig`` writes no per-step summaries.

As Ascend's migration tool does, ``tf.estimator.RunConfig(...)`` / ``tf.contrib.tpu.RunConfig(...)``
without ``save_summary_steps`` gets ``save_summary_steps=0``; an explicit value is kept, and
reported when it is not 0 (nor ``None``, which also turns summaries off).
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Reference,
    Rule,
    find_argument,
    has_unpacking,
    hookimpl,
    is_none,
    set_keyword,
    tokens,
)
from npu_codemod.api._toolkit import (
    ESTIMATOR_MODULES,
    attribute_name,
    is_call_trailer,
    tree_text,
)

SETTING = "save_summary_steps"
#: RunConfig classes -> the 0-based position of ``save_summary_steps`` (None: keyword only,
#: ``tf.contrib.tpu.RunConfig`` takes it through ``**kwargs``).
RUN_CONFIGS: dict[str, Optional[int]] = {
    "tensorflow.estimator.RunConfig": 2,
    "tensorflow.contrib.tpu.RunConfig": None,
    "tensorflow.estimator.tpu.RunConfig": None,
    "tensorflow.contrib.tpu.python.tpu.tpu_config.RunConfig": None,
}
ADDED = f"added {SETTING}=0 (no per-step summaries on the NPU, as Ascend's tool sets)"
OFF = f"{SETTING}={{}} is set: no per-step summaries"
EXPLICIT = (f"per-step summaries: set {SETTING}=0 unless you need them on the NPU "
            f"(now: {SETTING}={{}})")
UNPACKED = (f"{SETTING} may come in the unpacked arguments: pass {SETTING}=0 unless you need "
            "per-step summaries on the NPU")


class RunConfigSummary(Rule):
    id = "NPU013"
    name = "run-config-summary"
    pack = "estimator"
    description = "Give tf.estimator.RunConfig / tf.contrib.tpu.RunConfig save_summary_steps=0."
    guide_section = "Estimator迁移: 运行配置 (save_summary_steps)"
    guide_section_en = "Estimator migration: the run configuration (save_summary_steps)"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`tf.estimator.RunConfig(...)` and `tf.contrib.tpu.RunConfig(...)` (any spelling) "
                "that do not pass `save_summary_steps` (as a keyword, the third positional of "
                "`tf.estimator.RunConfig`, or in a `.replace(...)` right after the call) get "
                "`save_summary_steps=0`, as Ascend's tool sets. `0` and `None` (no summaries "
                "either) are left as they are.")
    reports = ("An explicit `save_summary_steps` other than `0`/`None` (kept: set it to 0 unless "
               "you need per-step summaries on the NPU), and a call whose arguments are "
               "unpacked with `**`.")
    example = """
        import tensorflow as tf

        train_config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=1000)
        eval_config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_summary_steps=100)
    """
    _scope = "linked"
    _tokens = ("RunConfig",)
    calls = tuple(RUN_CONFIGS)
    modules = ESTIMATOR_MODULES  # a file importing only tensorflow_estimator too

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        call = reference.call
        given = find_argument(call, SETTING, RUN_CONFIGS[reference.name])
        value = given.value if given is not None else _replaced(reference)
        if value is not None:
            code = tree_text(value).strip()
            if _off(value):
                ctx.report(reference, "migrated", OFF.format(code))
            else:
                ctx.report(reference, "unmigrated", EXPLICIT.format(code))
        elif has_unpacking(call):
            ctx.report(reference, "unmigrated", UNPACKED)
        else:
            ctx.defer(lambda: set_keyword(call, SETTING, "0"))
            ctx.report(reference, "migrated", ADDED)


def _off(value: Base) -> bool:
    return is_none(value) or (value.type == tokens.NUMBER and value.value == "0")


def _replaced(reference: Reference) -> Optional[Base]:
    """``save_summary_steps`` given to a ``.replace(...)`` right after the call
    (``tf.estimator.RunConfig(...).replace(save_summary_steps=10)``), else None."""
    children = reference.node.children if reference.node.children else []
    index = reference.end + 1
    if index + 1 < len(children) and attribute_name(children[index]) == "replace" \
            and is_call_trailer(children[index + 1]):
        given = find_argument(children[index + 1], SETTING)
        return given.value if given is not None else None
    return None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [RunConfigSummary()]
