"""Which ``x.train(...)``/``x.fit(...)`` calls are calls of the repository's own functions.

``train_lib.train(hparams)`` spells the method NPU027 looks for, but ``train_lib`` is a module
of the repository and ``train`` a function defined there: no Estimator's method. NPU027 acts
where that function trains its Estimator (inside it), and reports nothing at the call.

Each file says which module-level functions of such a name it defines, as
``own-function:<module>.<name>`` facts (``<module>`` dotted from the repository root), gathered
with ``ast`` before any rewrite; a call resolves its receiver through the file's imports to a
module-qualified name, looked up among them as the repository's other cross-file facts are.
"""

from __future__ import annotations

import ast

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import file_imported_names, module_ast, module_parts, nearest_name

FACT = "own-function:"
#: The method names NPU027 looks at: only functions of these names are recorded.
METHODS = ("train", "fit", "fit_generator")


def own_function_facts(path: str, text: str) -> frozenset[str]:
    """The ``own-function:`` facts of one file (a file defining none is not parsed)."""
    if not any(f"def {method}" in text for method in METHODS):
        return frozenset()
    tree = module_ast(text)
    if tree is None:
        return frozenset()
    module = ".".join(module_parts(path))
    return frozenset(f"{FACT}{module}.{node.name}" for node in tree.body
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name in METHODS)


def is_own_function(receiver: str, method: str, ctx: FileContext) -> bool:
    """Is ``<receiver>.<method>`` (``train_lib.train``; ``receiver`` a dotted name) a function
    of the repository: ``receiver`` a module the file imports, defining ``method``?"""
    head, _, rest = receiver.partition(".")
    imported = file_imported_names(ctx).get(head)
    if imported is None:
        return False
    known = {fact[len(FACT):] for fact in ctx.facts | own_function_facts(ctx.path, ctx.original)
             if fact.startswith(FACT)}
    target = ".".join(part for part in (imported, rest, method) if part)
    return nearest_name(target, module_parts(ctx.path)[:-1], known) is not None
