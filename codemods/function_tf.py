"""Files that import TensorFlow only inside functions: which process opens the NPU.

A cluster launcher (TensorFlowOnSpark's ``TFCluster.run(sc, main_fun, ...)``, Ray, a
``multiprocessing`` pool) ships a function to other processes, and a script written for it
imports TensorFlow inside that function only: the script's module top runs in the launching
process (a Spark driver), which never trains and may have no TensorFlow. The NPU device must be
opened where TensorFlow is imported and the training runs, so NPU061 puts its init at the top
of that function, not at the module's (``spec/rules-tf2.md`` NPU061: "at the very beginning of
the script, before other packages are imported", read for the process that trains).
"""

from __future__ import annotations

import ast
import re
from typing import Optional, Union

from fissix import pytree
from fissix.pygram import python_symbols as syms

from .edits import insert_before
from .nodes import block_statements, compound_body, is_docstring
from .tf_programs import TRAINING_TEXT

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: ``<name>.open(...).as_default()`` on one line: an NPU init someone already put somewhere.
OPEN_DEFAULT = re.compile(r"^\s*(\w+)\.open\([^()]*\)\.as_default\(\s*\)\s*$", re.MULTILINE)


def is_tf_module(name: Optional[str]) -> bool:
    """Is the module ``name`` TensorFlow or one of its submodules?"""
    return name is not None and (name == "tensorflow" or name.startswith("tensorflow."))


def _tf_import(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(is_tf_module(alias.name) for alias in node.names)
    return isinstance(node, ast.ImportFrom) and not node.level and is_tf_module(node.module)


def tf_import_functions(tree: ast.Module) -> Optional[list[tuple[Function, ast.stmt]]]:
    """When every TensorFlow import of the module is inside a function: the outermost
    functions that hold one, each with its first such import, in file order; else (a
    module-level import, in any block, or none at all) None."""
    found: dict[int, tuple[Function, ast.stmt]] = {}
    module_level = False

    def walk(node: ast.AST, outer: Optional[Function]) -> None:
        nonlocal module_level
        for child in ast.iter_child_nodes(node):
            if _tf_import(child):
                if outer is None:
                    module_level = True
                else:
                    found.setdefault(id(outer), (outer, child))  # type: ignore[arg-type]
            inner = outer
            if outer is None and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child
            walk(child, inner)

    walk(tree, None)
    if module_level or not found:
        return None
    return sorted(found.values(), key=lambda pair: pair[0].lineno)


def device_function(tree: ast.Module, text: str) -> Optional[Function]:
    """The function that clearly is the process's training code, for a module whose
    TensorFlow imports are all inside functions: the only function holding them, defined at
    the module's top level, with a multi-line body, and training (``TRAINING_TEXT`` in its
    source). None when it is not that clear (two such functions, a method, a nested or a
    non-training one): NPU061 then reports instead of guessing."""
    functions = tf_import_functions(tree)
    if functions is None or len(functions) != 1:
        return None
    function = functions[0][0]
    if function not in tree.body or function.body[0].lineno == function.lineno:
        return None
    source = ast.get_source_segment(text, function) or ""
    return function if TRAINING_TEXT.found(source) else None


def opened_in(function: Function, text: str) -> Optional[int]:
    """The line of a ``<name>.open(...).as_default()`` statement inside ``function`` (an init
    already placed there), else None."""
    lines = text.splitlines()
    end = function.end_lineno or function.lineno
    for number in range(function.lineno, end + 1):
        if OPEN_DEFAULT.match(lines[number - 1]):
            return number
    return None


def function_names(functions: list[tuple[Function, ast.stmt]]) -> str:
    """``worker_fn()``, ``a(), b()``: the functions for a message."""
    return ", ".join(f"{function.name}()" for function, _ in functions)


def top_function(node: pytree.Base) -> Optional[pytree.Node]:
    """The module-level ``def`` (``funcdef``, under its decorators or ``async``) that holds
    ``node``, or None (module-level code, a class)."""
    statement: Optional[pytree.Base] = node
    while statement is not None and statement.parent is not None and statement.parent.type != syms.file_input:
        statement = statement.parent
    while statement is not None and statement.type in (syms.decorated, syms.async_stmt, syms.async_funcdef):
        statement = statement.children[-1]
    return statement if isinstance(statement, pytree.Node) and statement.type == syms.funcdef else None


def bind_in_function(function: pytree.Node, statement: str, newline: str) -> Optional[pytree.Base]:
    """Put the import ``statement`` first in the body of ``function`` (a ``funcdef``, after its
    docstring) unless the body's leading imports hold it already; return that statement (None:
    a one-line body, left alone)."""
    body = compound_body(function)
    if body.type != syms.suite:
        return None
    statements = block_statements(body)
    start = 1 if len(statements) > 1 and is_docstring(statements[0]) else 0
    for existing in statements[start:]:
        if str(existing).strip() == statement:
            return existing
        if existing.type != syms.simple_stmt or existing.children[0].type not in (syms.import_name, syms.import_from):
            break
    return insert_before(statements[start], statement + "\n", newline)[0]
