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
- ``npu010-thread-methods:<module>.<Class>.<method>#<index>:<parameter>``: the same for a method
  of a module-level class (``index`` among the positional parameters after ``self``), where a
  parameter the method stores on ``self`` counts too when it starts threads (they may read it
  there). ``reader.start_threads(sess)`` (wavenet's ``AudioReader``, whose threads run
  ``sess.run(self.enqueue)`` and are never joined) is such a call: which class ``reader`` is
  an instance of is not worked out, so any method of the repository with that name and
  parameter counts (a wrong match leaves a session open and reported, never closed early).

- ``npu010-thread-classes:<module>.<Class>``: a module-level class that subclasses
  ``Thread`` (``class DataFeeder(threading.Thread)``): an instance given the session may run
  it on its own thread once started, so ``feeder = DataFeeder(sess)`` is a thread call. A method
  of such a class that stores a parameter on ``self`` and calls ``self.start()`` gives it to
  the thread (keithito/tacotron's ``feeder.start_in_session(sess)``).

Not seen: a parameter handed on to another function that starts the threads, or renamed first.
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Optional, Union

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
METHODS = "npu010-thread-methods:"
CLASSES = "npu010-thread-classes:"
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
    threads = thread_classes(index.tree)
    facts = {f"{CLASSES}{module}.{name}" for name in threads}
    for node in functions:
        for position, name in sorted(_threaded_parameters(node, index.own_nodes(node), threads)):
            facts.add(f"{PREFIX}{module}.{node.name}#{position}:{name}")
    for owner, method in _methods(index.tree):
        nodes = index.own_nodes(method)
        for position, name in sorted(_threaded_parameters(method, nodes, threads, owner)):
            facts.add(f"{METHODS}{module}.{owner}.{method.name}#{position}:{name}")
    return facts


def thread_classes(tree: ast.AST) -> set[str]:
    """The module-level classes of ``tree`` with a base named ``Thread`` (``threading.Thread``,
    ``Thread`` imported from it)."""
    body = tree.body if isinstance(tree, ast.Module) else []
    return {node.name for node in body if isinstance(node, ast.ClassDef)
            and any((dotted(base) or "").rpartition(".")[2] == "Thread" for base in node.bases)}


def _methods(tree: ast.AST) -> list[tuple[str, _Function]]:
    """(class name, method) of the undecorated methods of the module's top-level classes."""
    body = tree.body if isinstance(tree, ast.Module) else []
    return [(node.name, item) for node in body if isinstance(node, ast.ClassDef) for item in node.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.decorator_list]


def _threaded_parameters(function: _Function, nodes: list[ast.AST], threads: AbstractSet[str],
                         owner: Optional[str] = None) -> set[Parameter]:
    """The parameters of ``function`` that threads it starts and never joins get (``threads``:
    the module's ``Thread`` subclasses, whose calls make threads; ``owner``: the class of a
    method, whose first parameter is ``self`` and whose parameters stored on it count, and
    whose ``self.start()`` starts a thread when it is one of ``threads``)."""
    bound, thread = owner is not None, owner in threads
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args]
    own = every[0].arg if bound and every else None
    positional = {argument.arg: at for at, argument in enumerate(every[1:] if own else every)}
    names = {**{argument.arg: -1 for argument in arguments.kwonlyargs}, **positional}
    calls = [node for node in nodes if isinstance(node, ast.Call)]
    if any(_joins(call) for call in calls):
        return set()  # it joins threads: which ones is not worked out, the caller may close
    found = _given_threads(calls, names, threads)
    if own is not None and any(_thread_kind(call, threads) or (thread and _starts_itself(call, own)) for call in calls):
        found |= _stored_on(own, nodes, names)
    return found


def _starts_itself(call: ast.Call, own: str) -> bool:
    """``self.start()`` (``own``: the method's first parameter)."""
    return dotted(call.func) == f"{own}.start"


def _joins(call: ast.Call) -> bool:
    """``t.join()``, ``coord.join(threads)``: a ``join`` that is not a string's or a path's
    (``", ".join(names)``, ``os.path.join(root, name)``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "join":
        return False
    return not isinstance(func.value, ast.Constant) and not (dotted(func.value) or "").endswith("path")


def _stored_on(own: str, nodes: list[ast.AST], names: dict[str, int]) -> set[Parameter]:
    """The parameters (of ``names``) assigned to an attribute of ``own`` (``self.sess = sess``)."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names \
                and any(isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == own for target in node.targets):
            found.add((names[node.value.id], node.value.id))
    return found


def _thread_kind(call: ast.Call, threads: AbstractSet[str] = frozenset()) -> str:
    """"queue" for a call starting queue runners, "thread" for a thread (``threads``: the
    module's Thread subclasses, by name), else ""."""
    last = (dotted(call.func) or "").rpartition(".")[2]
    return "queue" if last in _QUEUE_RUNNERS else "thread" if last in _THREADS or last in threads else ""


def _given_threads(calls: list[ast.Call], names: dict[str, int], threads: AbstractSet[str]) -> set[Parameter]:
    """The parameters (of ``names``) the thread calls among ``calls`` are given."""
    found = set()
    for call in calls:
        kind = _thread_kind(call, threads)
        if kind == "queue":
            given = [keyword.value for keyword in call.keywords if keyword.arg == "sess"] or call.args[:1]
        elif kind == "thread":
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
    ``ctx``) names through the file's imports, or a method of the repository that it may call
    (``reader.start_threads``: a receiver that is no import), start threads on the parameter
    that gets ``argument`` ((keyword, position) of the call, as ``_lifetimes._argument_of``
    says)?"""
    if argument is None:
        return False
    key = "thread_functions.imports"
    if key not in memo(ctx):
        classes = {fact[len(CLASSES):] for fact in ctx.facts if fact.startswith(CLASSES)}
        memo(ctx)[key] = (file_imported_names(ctx), _threaded(ctx, PREFIX), _by_method(_threaded(ctx, METHODS)),
                          classes)
    imports, threaded, methods, classes = memo(ctx)[key]
    head, _, rest = callee.partition(".")
    if head not in imports:
        receiver, _, method = callee.rpartition(".")
        return bool(receiver) and _given(methods.get(method, set()), argument)
    target = imports[head] + (f".{rest}" if rest else "")
    if classes and nearest_function(target, module_parts(ctx.path)[:-1], classes) is not None:
        return True  # an instance of a Thread subclass of another file: its thread may run it
    if not threaded:
        return False
    function = nearest_function(target, module_parts(ctx.path)[:-1], threaded.keys())
    return function is not None and _given(threaded[function], argument)


def _given(parameters: set[Parameter], argument: tuple[Optional[str], int]) -> bool:
    """Is ``argument`` ((keyword, position) of a call) one of ``parameters``?"""
    keyword, position = argument
    return any(name == keyword if keyword is not None else at == position for at, name in parameters)


def _threaded(ctx: FileContext, prefix: str) -> dict[str, set[Parameter]]:
    """Module-qualified function (or method) -> its parameters threads get, from the
    repository facts with ``prefix``."""
    result: dict[str, set[Parameter]] = {}
    for fact in ctx.facts:
        if fact.startswith(prefix):
            function, _, parameter = fact[len(prefix):].partition("#")
            at, _, name = parameter.partition(":")
            result.setdefault(function, set()).add((int(at), name))
    return result


def _by_method(methods: dict[str, set[Parameter]]) -> dict[str, set[Parameter]]:
    """Method name -> the parameters threads get in any method of that name."""
    result: dict[str, set[Parameter]] = {}
    for method, parameters in methods.items():
        result.setdefault(method.rpartition(".")[2], set()).update(parameters)
    return result
