"""Which functions of a repository start threads on a parameter and do not join them (NPU010).

``batch = inputs.setup_inputs(sess, files)``, where ``setup_inputs`` (another module) calls
``tf.train.start_queue_runners(sess=sess)``: the queue-runner threads run on the session after
the call returns, so a close after the caller's last use kills them ("Exception in
QueueRunner"). For a function of the same file, :mod:`._lifetimes` works this out on the tree;
for one of another file the repository facts say it, gathered from each file with ``ast``:

- ``npu010-threads:<module>.<function>#<index>:<parameter>``: the module-level function hands
  its parameter (``index`` among the positional ones, -1 for a keyword-only one) to
  ``start_queue_runners``/``create_threads`` (as the session, ``sess=`` or first) or to
  ``threading.Thread``/``Timer`` (anywhere in the call), and calls no ``join`` at all.

Not seen: a parameter handed on to another function that starts the threads, or renamed first.
"""

from __future__ import annotations

import ast
from typing import Optional, Union

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import (
    ast_dotted_name as dotted,
)
from npu_codemod.api._toolkit import (
    file_imported_names,
    memo,
    module_parts,
)
from npu_codemod.api._toolkit import (
    nearest_name as nearest_function,
)

from ._session_functions import top_functions

PREFIX = "npu010-threads:"
#: Calls that start queue-runner threads on their session argument (``sess=`` or the first).
_QUEUE_RUNNERS = frozenset({"start_queue_runners", "create_threads"})
_THREADS = frozenset({"Thread", "Timer"})
_WORDS = (*sorted(_QUEUE_RUNNERS), *sorted(_THREADS))
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: (positional index or -1, parameter name) of a parameter given to threads.
Parameter = tuple[int, str]


def thread_function_facts(path: str, text: str) -> set[str]:
    """The ``npu010-threads:`` facts of one file (see the module docstring); none for an ASCII
    text that spells no thread call (``ast`` normalises the names of other texts, NFKC)."""
    if text.isascii() and not any(word in text for word in _WORDS):
        return set()
    return all_thread_function_facts(path, text)


def all_thread_function_facts(path: str, text: str) -> set[str]:
    """:func:`thread_function_facts` without its first look at the text."""
    top = top_functions(path, text)
    if top is None:
        return set()
    module, index, functions = top
    facts = set()
    for node in functions:
        for position, name in sorted(_threaded_parameters(node, index.own_nodes(node))):
            facts.add(f"{PREFIX}{module}.{node.name}#{position}:{name}")
    return facts


def _threaded_parameters(function: _Function, nodes: list[ast.AST]) -> set[Parameter]:
    """The parameters of ``function`` that threads it starts and never joins get."""
    arguments = function.args
    positional = {argument.arg: at for at, argument in enumerate([*arguments.posonlyargs, *arguments.args])}
    names = {**{argument.arg: -1 for argument in arguments.kwonlyargs}, **positional}
    calls = [node for node in nodes if isinstance(node, ast.Call)]
    if any(isinstance(call.func, ast.Attribute) and call.func.attr == "join" for call in calls):
        return set()  # it joins threads: which ones is not worked out, the caller may close
    found = set()
    for call in calls:
        last = (dotted(call.func) or "").rpartition(".")[2]
        if last in _QUEUE_RUNNERS:
            given = [keyword.value for keyword in call.keywords if keyword.arg == "sess"] or call.args[:1]
        elif last in _THREADS:
            given = [*call.args, *(keyword.value for keyword in call.keywords)]
        else:
            continue
        for value in given:
            for name in ast.walk(value):
                if isinstance(name, ast.Name) and name.id in names:
                    found.add((names[name.id], name.id))
    return found


def starts_threads(callee: str, argument: Optional[tuple[Optional[str], int]], ctx: FileContext) -> bool:
    """Does the function of another file that ``callee`` (a dotted callee of the file of
    ``ctx``) names through the file's imports start threads on the parameter that gets
    ``argument`` ((keyword, position) of the call, as ``_lifetimes._argument_of`` says)?"""
    if argument is None:
        return False
    key = "thread_functions.imports"
    if key not in memo(ctx):
        memo(ctx)[key] = (file_imported_names(ctx), _threaded(ctx))
    imports, threaded = memo(ctx)[key]
    head, _, rest = callee.partition(".")
    if not threaded or head not in imports:
        return False
    target = imports[head] + (f".{rest}" if rest else "")
    function = nearest_function(target, module_parts(ctx.path)[:-1], threaded.keys())
    if function is None:
        return False
    keyword, position = argument
    return any(name == keyword if keyword is not None else at == position
               for at, name in threaded[function])


def _threaded(ctx: FileContext) -> dict[str, set[Parameter]]:
    """Module-qualified function -> its parameters threads get, from the repository facts."""
    result: dict[str, set[Parameter]] = {}
    for fact in ctx.facts:
        if fact.startswith(PREFIX):
            function, _, parameter = fact[len(PREFIX):].partition("#")
            at, _, name = parameter.partition(":")
            result.setdefault(function, set()).add((int(at), name))
    return result
