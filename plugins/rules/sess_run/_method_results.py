"""Which methods of a repository only run a session they are given (NPU010).

``generated_samples.extend(trainable_model.generate(sess))`` (SeqGAN), where every
``generate`` of the repository is ``def generate(self, sess): return sess.run(self.gen_x)``:
the result is what ``sess.run`` gave, not something that holds the session. Which class the
receiver is an instance of is not worked out, so the repository facts speak of methods by
name, gathered from each file with ``ast``:

- ``npu010-runs-session:<method>#<index>:<parameter>``: a method of a module-level class whose
  parameter named like a session (``sess`` in its name; ``index`` among the positional ones
  after ``self``, -1 for a keyword-only one) is only run (``sess.run(...)``) or given to a
  ``save``/``restore`` call, in a method that is no generator and has no nested function
  using it;
- ``npu010-keeps-session:<method>``: a method of that name has a parameter named like a
  session that it may keep (any other use, a decorator, a generator).

A call ``x.m(sess)`` whose receiver is no import gives a value (not a holder) only when some
method ``m`` only runs the parameter that gets the session and no method ``m`` may keep one.
Not seen: a method of that name whose parameter is named otherwise (``def m(self, s):
self.s = s``), or that is in a file that does not import TensorFlow (the repository facts are
those of TensorFlow files), and that the call reaches instead.
"""

from __future__ import annotations

import ast
from typing import Optional, Union

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import file_imported_names, memo

from ._config_functions import parse

RUNS = "npu010-runs-session:"
KEEPS = "npu010-keeps-session:"
_RUN_METHODS = frozenset({"run"})
_SAVING = frozenset({"save", "restore"})
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def method_result_facts(path: str, text: str) -> set[str]:
    """The facts of one file (see the module docstring); none for an ASCII text that spells no
    ``sess`` in any case (each fact is about a parameter named with it)."""
    if text.isascii() and "sess" not in text.lower():
        return set()
    return all_method_result_facts(path, text)


def all_method_result_facts(path: str, text: str) -> set[str]:
    """:func:`method_result_facts` without its first look at the text."""
    tree = parse(text)
    if tree is None:
        return set()
    facts = set()
    for method in _methods(tree):
        for at, name in _session_parameters(method):
            if method.decorator_list or not _only_runs(method, name):
                facts.add(f"{KEEPS}{method.name}")
            else:
                facts.add(f"{RUNS}{method.name}#{at}:{name}")
    return facts


def _methods(tree: ast.Module) -> list[_Function]:
    return [item for node in tree.body if isinstance(node, ast.ClassDef) for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _session_parameters(method: _Function) -> list[tuple[int, str]]:
    """(index among the positional parameters after ``self``, or -1; name) of the parameters
    named like a session."""
    arguments = method.args
    positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args][1:]]
    named = [*enumerate(positional), *((-1, argument.arg) for argument in arguments.kwonlyargs)]
    return [(at, name) for at, name in named if "sess" in name.lower()]


def _only_runs(method: _Function, name: str) -> bool:
    """Is every use of the parameter ``name`` in ``method`` a ``name.run(...)`` or an argument
    of a ``save``/``restore`` call, in a method that is neither a generator nor a coroutine
    and uses it in no nested function?"""
    if isinstance(method, ast.AsyncFunctionDef):
        return False
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(method):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return all(_run(node, parents) for node in ast.walk(method)
               if isinstance(node, ast.Name) and node.id == name)


def _run(node: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """A load of ``node`` as ``node.run(...)`` or a ``save``/``restore`` argument, outside any
    nested function."""
    parent = parents.get(id(node))
    at: Optional[ast.AST] = parent
    while at is not None:
        if isinstance(at, _NESTED) and parents.get(id(at)) is not None:
            return False  # in a nested function or class (the method itself has no parent)
        at = parents.get(id(at))
    if not isinstance(node.ctx, ast.Load) or parent is None:
        return False
    if isinstance(parent, ast.Attribute) and parent.attr in _RUN_METHODS:
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent
    return isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Attribute) \
        and parent.func.attr in _SAVING


def only_runs(callee: str, argument: Optional[tuple[Optional[str], int]], ctx: FileContext) -> bool:
    """Does the call ``callee`` (a dotted callee of the file of ``ctx``: ``model.generate``),
    a method whose receiver is no import, only run the session it gets as ``argument``
    ((keyword, position), as ``_lifetimes._argument_of`` says), by the repository facts?"""
    receiver, _, method = callee.rpartition(".")
    if argument is None or not receiver or receiver.partition(".")[0] in _imports(ctx):
        return False
    keeps, runs = _facts(ctx)
    if method in keeps:
        return False
    keyword, position = argument
    return any(name == keyword if keyword is not None else at == position
               for at, name in runs.get(method, ()))


def _imports(ctx: FileContext) -> dict[str, str]:
    key = "method_results.imports"
    if key not in memo(ctx):
        memo(ctx)[key] = file_imported_names(ctx)
    found: dict[str, str] = memo(ctx)[key]
    return found


def _facts(ctx: FileContext) -> tuple[set[str], dict[str, set[tuple[int, str]]]]:
    """(methods that may keep a session, method -> parameters it only runs), from the facts."""
    key = "method_results.facts"
    if key not in memo(ctx):
        keeps: set[str] = set()
        runs: dict[str, set[tuple[int, str]]] = {}
        for fact in ctx.facts:
            if fact.startswith(KEEPS):
                keeps.add(fact[len(KEEPS):])
            elif fact.startswith(RUNS):
                method, _, parameter = fact[len(RUNS):].partition("#")
                at, _, name = parameter.partition(":")
                runs.setdefault(method, set()).add((int(at), name))
        memo(ctx)[key] = (keeps, runs)
    found: tuple[set[str], dict[str, set[tuple[int, str]]]] = memo(ctx)[key]
    return found
