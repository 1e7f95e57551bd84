"""NPU001 npu-init-import: every file another rule rewrote imports ``npu_bridge.npu_init``."""

from __future__ import annotations

from npu_codemod.api import FileContext, Node, Rule, hookimpl
from npu_codemod.api._toolkit import (
    NPU_INIT_IMPORT,
    TF1,
    find_import,
    header_index,
    localize_imports,
    npu_init_imports,
    position,
    tf_imported_in_functions_only,
)

__all__ = ["NPU_INIT_IMPORT", "InitImport"]


#: Why the import goes into a function, in a file that imports TensorFlow only in functions.
IN_FUNCTIONS = (" (TensorFlow is imported only inside functions here: the module's top also runs "
                "in processes that do not train, such as a Spark driver)")
#: The finding when the import stays at the module's top of such a file.
DRIVER_NOTE = ("TensorFlow is imported only inside functions here, but {why}: "
               f"'{NPU_INIT_IMPORT}' at the module's top runs in every process that imports this "
               "file (a Spark or Ray driver, a launcher, a TF 2.x code path) and needs npu_bridge "
               "there; if such a process has none, move it into the function that trains, after "
               "its TensorFlow import, as 'from npu_bridge.npu_init import <the names it uses>'")


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
                "rule rewrote is not touched; one that already has the import is left alone. A "
                "file that imports TensorFlow only inside functions (a TensorFlowOnSpark `main_fun`, "
                "a Ray or `multiprocessing` worker, a library that keeps TensorFlow optional) gets "
                "the imports inside the function that holds the rewritten code instead, right after "
                "that function's first TensorFlow import, naming what it uses (`from "
                "npu_bridge.npu_init import npu_run_config_init, npu_hooks_append`; `import "
                "npu_bridge.npu_init` when it uses no name: the import loads the adapter): the "
                "module's top also runs where nothing trains (a Spark driver, a TF 2.x code path), "
                "which may have no npu_bridge. A function nested in it reads the names as a "
                "closure; a TensorFlow import under `if`/`try` at module level is module level. "
                "Where that cannot be exact (a rewritten site in a function without its own plain "
                "TensorFlow import, such as one using a `global tf` another function imports; a "
                "TensorFlow import under `if`/`try` inside the function; a name the file binds "
                "itself), the import goes to the module's top as elsewhere and an `unmigrated` "
                "finding says to move it into the function that trains if a process that imports "
                "the module has no npu_bridge.")
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
            if tf_imported_in_functions_only(ctx):
                ctx.report(existing, "unmigrated", DRIVER_NOTE.format(why="it is imported at the module's top"))
            return
        if not ctx.changed:
            for statement, function in npu_init_imports(tree):
                ctx.report(statement, "migrated", f"npu_bridge.npu_init is imported in {function}()")
            return
        index = header_index(tree)
        line, column = position(tree.children[index]) if index < len(tree.children) else (1, 0)
        ctx.add_import(NPU_INIT_IMPORT)  # the engine places it, before the file's own imports
        localized = localize_imports(tree, ctx)  # when the file imports TF in functions only
        if NPU_INIT_IMPORT in ctx.imports:
            ctx.report_at(line, column, "migrated", f"added '{NPU_INIT_IMPORT}'")
            if localized.problem:
                ctx.report_at(line, column, "unmigrated", DRIVER_NOTE.format(why=localized.problem))
        for placed in localized.placed:
            ctx.report_at(placed.line, placed.column, "migrated", f"added '{'; '.join(placed.statements)}' "
                          f"in {placed.function}() after its TensorFlow import{IN_FUNCTIONS}")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [InitImport()]
