"""Which functions of a repository return a session, and which other files call them (NPU010).

A session that a function returns belongs to its callers: NPU010 closes it where it is called
(or reports it there), and the function itself needs no finding. Callers in the function's own
file are found in its tree; callers in other files through repository facts, gathered from
each file with ``ast`` before any rewrite, as :mod:`._config_functions` does for NPU007:

- ``npu010-session:<module>.<function>``, with ``#<index>`` when the session is item
  ``index`` of the tuple it returns: each ``return`` of that module-level function gives a
  session it makes (``return tf.Session(...)``, ``sess = tf.Session(...); return sess, graph``);
- ``npu010-called:<dotted name>``: a file calls the imported function of that name (as
  imported: ``utils.sessions.make_session``), named like a session maker (``sess`` in its
  name, or every call of a repository would be a fact): the file that defines it then knows
  that callers elsewhere own its sessions.

Not seen: a caller that is not Python 3 (no ``ast``), or that reaches the function other than
by calling the imported name (``getattr``, a function passed around).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import FrozenSet, Iterable, Optional, Union

from npu_codemod.api._toolkit import ModuleIndex, module_index, own_nodes

from ._config_functions import dotted, module_parts, nearest_function, parse

PREFIX = "npu010-session:"
CALLED = "npu010-called:"
#: The session constructors by their last name (NPU010's ``SESSIONS``).
_SESSIONS = frozenset({"Session", "InteractiveSession", "MonitoredSession",
                       "MonitoredTrainingSession", "SingularMonitoredSession"})
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
Position = Union[None, int, bool]  # None: the session itself; int: a tuple item; False: no session


def session_function_facts(path: str, text: str) -> set[str]:
    """The ``npu010-`` facts of one file (see the module docstring). An ASCII text that spells
    no ``sess`` (in any case) has none: each fact names a session constructor (all spell
    ``Session``) or a function named with ``sess``, and the names of ASCII text are spelled in
    it as they are (``ast`` normalises others, NFKC)."""
    if text.isascii() and "sess" not in text.lower():
        return set()
    return all_session_function_facts(path, text)


def top_functions(path: str, text: str) -> Optional[tuple[str, ModuleIndex, list[_Function]]]:
    """The dotted module name of the file ``path``, its index, and its module-level functions
    that no decorator wraps (what a caller elsewhere calls as written), or None where ``ast``
    cannot read ``text``: the functions the ``npu010-`` facts speak of."""
    tree = parse(text)
    if tree is None:
        return None
    functions = [node for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list]
    return ".".join(module_parts(path)), module_index(tree), functions


def all_session_function_facts(path: str, text: str) -> set[str]:
    """:func:`session_function_facts` without its first look at the text."""
    top = top_functions(path, text)
    if top is None:
        return set()
    module, index, functions = top
    facts = set()
    for node in functions:
        position = returned_session(node, index)
        if position is not False:
            facts.add(f"{PREFIX}{module}.{node.name}" + ("" if position is None else f"#{position}"))
    imports = index.imported_names(path)
    for each in index.nodes(ast.Call):
        callee = dotted(each.func)
        head, _, rest = (callee or "").partition(".")
        name = (callee or "").rpartition(".")[2]
        if head in imports and "sess" in name.lower() and name not in _SESSIONS \
                and imports[head].split(".")[0] not in ("tensorflow", "keras"):
            facts.add(f"{CALLED}{imports[head]}" + (f".{rest}" if rest else ""))
    return facts


def returned_session(function: _Function, index: Optional[ModuleIndex] = None) -> Position:
    """Where every ``return`` of ``function`` puts a session the function makes: None (it is
    the value), the index of a returned tuple's item, or False (not every return does).
    ``index``: the :class:`ModuleIndex` of its module, when there is one."""
    nodes = index.own_nodes(function) if index is not None else list(own_nodes(function))
    returns = index.returns(function) if index is not None else [node for node in nodes if isinstance(node, ast.Return)]
    if not returns:
        return False  # no position: not every return puts a session
    made = _session_names(nodes)
    positions: set[Optional[int]] = set()
    for node in returns:
        value = node.value
        if _is_session(value, made):
            positions.add(None)
        elif isinstance(value, ast.Tuple):
            items = [index for index, item in enumerate(value.elts) if _is_session(item, made)]
            if len(items) != 1:
                return False
            positions.add(items[0])
        else:
            return False
    return positions.pop() if len(positions) == 1 else False


def _session_names(nodes: list[ast.AST]) -> set[str]:
    """Names every binding of which among ``nodes`` is ``name = <session call>``."""
    targets = {id(node.targets[0]): node.targets[0].id for node in nodes
               if isinstance(node, ast.Assign) and len(node.targets) == 1
               and isinstance(node.targets[0], ast.Name) and _is_session(node.value, set())}
    names = set(targets.values())
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in targets:
            names.discard(node.id)
    return names


def _is_session(node: Optional[ast.AST], made: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in made
    if not isinstance(node, ast.Call):
        return False
    callee = dotted(node.func)
    return callee is not None and callee.rpartition(".")[2] in _SESSIONS


class SessionFunctions:
    """The ``npu010-`` facts of a repository."""

    def __init__(self, facts: Iterable[str]) -> None:
        self.returns: dict[str, Optional[int]] = {}
        self.called: set[str] = set()
        for fact in facts:
            if fact.startswith(PREFIX):
                name, _, index = fact[len(PREFIX):].partition("#")
                self.returns[name] = int(index) if index else None
            elif fact.startswith(CALLED):
                self.called.add(fact[len(CALLED):])

    def find(self, target: str, path: str) -> Optional[tuple[str, Optional[int]]]:
        """(module-qualified name, position) of the session function that ``target`` (a
        dotted name as imported in the file at ``path``) is, or None."""
        name = nearest_function(target, module_parts(path)[:-1], self.returns.keys())
        return None if name is None else (name, self.returns[name])

    def called_elsewhere(self, function: str, path: str) -> bool:
        """Does another file call ``function``, a module-level function of the file at
        ``path``? (as the facts say: the imported name's module may be spelled from any
        folder, so its last parts are compared)."""
        module = ".".join(module_parts(path))
        for target in self.called:
            imported, _, name = target.rpartition(".")
            if name == function and imported and (module == imported or module.endswith("." + imported)):
                return True
        return False


@lru_cache(maxsize=4)
def session_functions(facts: FrozenSet[str]) -> SessionFunctions:
    """The :class:`SessionFunctions` of a repository's ``facts``, read once per repository,
    not once per file (a large repository's facts are many; nothing changes the object)."""
    return SessionFunctions(facts)
