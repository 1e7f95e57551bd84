"""NPU042 keras-clear-session: ``K.clear_session()`` becomes the NPU's ``npu_clear_session()``."""

from __future__ import annotations

from npu_codemod.api import FileContext, Reference, Rule, hookimpl, replace_callee, tokens
from npu_codemod.api._toolkit import NPU_INIT_IMPORT, prefix_name

CLEAR = "tensorflow.keras.backend.clear_session"
NEW = "npu_clear_session"
NPU = f"npu_bridge.npu_init.{NEW}"
PACK = "keras"
#: The section of Ascend's TensorFlow 1.15 migration guide on Keras scripts, and in English.
GUIDE = ("Keras迁移", "Migrating Keras scripts")


class KerasClearSession(Rule):
    id = "NPU042"
    name = "keras-clear-session"
    description = "Replace K.clear_session() with npu_clear_session()."
    pack = PACK
    guide_section, guide_section_en = GUIDE
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`K.clear_session()` / `tf.keras.backend.clear_session()` (any spelling of "
                "TensorFlow's Keras backend; also not called, `atexit.register(K.clear_session)`) "
                f"becomes `{NEW}()`, which also closes the NPU session.")
    example = """
        import tensorflow as tf
        from tensorflow.keras import backend as K

        for fold in range(5):
            model = build_model()
            model.fit(x[fold], y[fold])
            K.clear_session()
    """
    _scope = "linked"
    _tokens = ("clear_session",)
    uses = (CLEAR, NPU)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        node = reference.node
        spelled = node.value if node.type == tokens.NAME else prefix_name(node, reference.end)
        called = "()" if reference.call is not None else ""
        if reference.name == NPU:
            ctx.report(reference, "migrated", f"uses {NEW}{called}")
            return
        ctx.defer(lambda: replace_callee(reference, NEW))
        ctx.add_import(NPU_INIT_IMPORT)
        ctx.report(reference, "migrated", f"replaced {spelled}{called} with {NEW}{called}")


@hookimpl
def npu_codemod_rules() -> list:
    return [KerasClearSession()]
