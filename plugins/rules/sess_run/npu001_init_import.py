"""NPU001 npu-init-import: every file another rule rewrote imports ``npu_bridge.npu_init``."""

from __future__ import annotations

from npu_codemod.api import FileContext, Node, Rule, hookimpl
from npu_codemod.api._toolkit import NPU_INIT_IMPORT, TF1, find_import, header_index, position

__all__ = ["NPU_INIT_IMPORT", "InitImport"]


class InitImport(Rule):
    id = "NPU001"
    name = "npu-init-import"
    pack = "sess-run"
    file_kinds = frozenset({TF1})  # TF 2.x-compat files: NPU062's header
    description = "Add 'from npu_bridge.npu_init import *' to every file another rule rewrote."
    guide_section = "头文件增加"
    guide_section_en = "Adding the header file"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("Adds `from npu_bridge.npu_init import *` once to every file another rule "
                "rewrote: after the shebang and encoding lines, the module docstring and the "
                "`from __future__` imports, before the first other import (after `import "
                "tensorflow.compat.v1 as tf` the star import would rebind `tf`). A file no other "
                "rule rewrote is not touched; one that already has the import is left alone.")
    example = """
        import tensorflow as tf


        def classifier(features, keep_prob):
            hidden = tf.layers.dense(features, 256, activation=tf.nn.relu)
            return tf.nn.dropout(hidden, keep_prob)
    """
    example_with = ("NPU004",)
    _scope = "site"
    after = ("*",)  # it depends on whether the other rules changed the file
    counts_sites = False  # the import line follows the other rules' sites: it is none itself

    def finish(self, tree: Node, ctx: FileContext) -> None:
        existing = find_import(tree, NPU_INIT_IMPORT)
        if existing is not None:
            ctx.report(existing, "migrated", "npu_bridge.npu_init is imported")
            return
        if not ctx.changed:
            return
        index = header_index(tree)
        line, column = position(tree.children[index]) if index < len(tree.children) else (1, 0)
        ctx.add_import(NPU_INIT_IMPORT)  # the engine places it, before the file's own imports
        ctx.report_at(line, column, "migrated", f"added '{NPU_INIT_IMPORT}'")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [InitImport()]
