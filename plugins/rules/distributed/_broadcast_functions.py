"""Functions of the repository that return hooks (callbacks) holding a broadcast of the variables.

``hooks = utils.make_hooks()`` then ``estimator.train(input_fn, hooks=hooks)``, where
``utils.make_hooks`` returns ``[hvd.BroadcastGlobalVariablesHook(0), ...]`` (NPU024 turns it into
the NPU's hook in ``utils.py``): wrapped in ``npu_hooks_append(...)``, which appends the NPU's
broadcast hook, the variables were broadcast twice. The file that trains cannot see that
function, so each file's analysis says, with ``ast``, which of its module-level functions
return only hooks (callbacks) holding one::

    broadcast-function:<module>.<function>=<hooks|callbacks>:<state>

``<state>`` is ``npu`` when each broadcast is the NPU's already, ``horovod`` when it is
Horovod's and NPU024 replaces it there (a TensorFlow file, given the root rank alone), ``kept``
when a Horovod one stays (NPU025 or NPU024 report it there). A return holds one when it is a
list or tuple display with such an item (a call, or a name bound only to calls), a sum with
such a part, or a name bound only to those, or one is added to (``append``, ``insert``,
``extend``, ``+=``) after its last binding and before the ``return``.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Union

from npu_codemod.api import Base, FileContext, symbols
from npu_codemod.api._toolkit import (
    STAR,
    ast_dotted_name,
    ast_import_bindings,
    file_imported_names,
    is_call_trailer,
    module_ast,
    module_index,
    module_parts,
    nearest_name,
    prefix_name,
)

from .horovod import for_tensorflow, member

FACT = "broadcast-function:"
NPU_STATE, HOROVOD_STATE, KEPT_STATE = "npu", "horovod", "kept"
#: The broadcast that a training call's keyword takes, by its name under its module.
KEYWORDS = {"BroadcastGlobalVariablesHook": "hooks", "callbacks.BroadcastGlobalVariablesCallback": "callbacks",
            "NPUBroadcastGlobalVariablesHook": "hooks", "NPUBroadcastGlobalVariablesCallback": "callbacks"}
NPU_INIT = "npu_bridge.npu_init"
_ADDERS = {"append": 0, "insert": 1, "extend": -1}
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: (keyword, state) of one broadcast call.
Found = tuple[str, str]


def broadcast_function_facts(path: str, text: str) -> frozenset[str]:
    """The ``broadcast-function:`` facts of one file (see the module docstring)."""
    tree = module_ast(text) if "roadcastGlobalVariables" in text and "return" in text else None
    if tree is None:
        return frozenset()
    index = module_index(tree)
    reader = _Reader(index.imported_names(path), _npu_star(tree, path))
    module = ".".join(module_parts(path))
    facts = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list:
            found = _returned(node, index.returns(node), index.own_nodes(node), reader)
            if found is not None:
                facts.add(f"{FACT}{module}.{node.name}={found[0]}:{found[1]}")
    return frozenset(facts)


def _npu_star(tree: ast.Module, path: str) -> bool:
    return any(isinstance(node, ast.ImportFrom) and (STAR, NPU_INIT) in ast_import_bindings(node, path)
               for node in tree.body)


class _Reader:
    """Which calls of one file are a broadcast, and in what state."""

    def __init__(self, imports: dict[str, str], npu_star: bool) -> None:
        self.imports, self.npu_star = imports, npu_star
        self.tensorflow = any(target.split(".")[0] == "tensorflow" for target in imports.values())

    def broadcast(self, node: Optional[ast.expr]) -> Optional[Found]:
        """(keyword, state) when ``node`` is a call of a broadcast hook or callback."""
        spelled = ast_dotted_name(node.func) if isinstance(node, ast.Call) else None
        if spelled is None:
            return None
        head, _, rest = spelled.partition(".")
        if head not in self.imports:
            npu = self.npu_star and not rest and spelled in KEYWORDS
            return (KEYWORDS[spelled], NPU_STATE) if npu else None
        target = self.imports[head] + (f".{rest}" if rest else "")
        if target.startswith(NPU_INIT + ".") and target[len(NPU_INIT) + 1:] in KEYWORDS:
            return KEYWORDS[target[len(NPU_INIT) + 1:]], NPU_STATE
        name = member(target)
        if not for_tensorflow(target) or name not in KEYWORDS:
            return None
        assert isinstance(node, ast.Call)
        return KEYWORDS[name], HOROVOD_STATE if self.tensorflow and _root_only(node) else KEPT_STATE


def _root_only(call: ast.Call) -> bool:
    """Is the call given the root rank alone (and ``device=''``), as NPU024 rewrites it?"""
    given = [*call.args, *(keyword for keyword in call.keywords
                           if not (keyword.arg == "device" and isinstance(keyword.value, ast.Constant)
                                   and keyword.value.value == ""))]
    return len(given) == 1 and not isinstance(given[0], ast.Starred) and getattr(given[0], "arg", "") is not None


def _returned(function: _Function, returns: list[ast.Return], nodes: list[ast.AST],
              reader: _Reader) -> Optional[Found]:
    """(keyword, the worst state) when every ``return`` of ``function`` gives hooks holding a
    broadcast, else None."""
    found: list[Found] = []
    for node in returns:
        held = _held(node.value, node.lineno, nodes, reader, depth=0)
        if not held:
            return None
        found += held
    keywords = {keyword for keyword, _ in found}
    if len(keywords) != 1:
        return None
    states = {state for _, state in found}
    worst = next(state for state in (KEPT_STATE, HOROVOD_STATE, NPU_STATE) if state in states)
    return keywords.pop(), worst


def _held(value: Optional[ast.expr], line: int, nodes: list[ast.AST], reader: _Reader,
          depth: int) -> list[Found]:
    """The broadcasts the hooks ``value`` (read at ``line``) hold; empty when not shown."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _held(value.left, line, nodes, reader, depth) + _held(value.right, line, nodes, reader, depth)
    if isinstance(value, (ast.List, ast.Tuple)):
        return [found for item in value.elts for found in _item(item, nodes, reader)]
    if not isinstance(value, ast.Name) or depth > 2:
        return []
    bound = _bindings(value.id, nodes, line)
    if bound and all(bound_value is not None for _, bound_value in bound):
        held = [_held(bound_value, line, nodes, reader, depth + 1) for _, bound_value in bound]
        if all(held):
            return [found for part in held for found in part]
    last = max((at for at, _ in bound), default=0)
    return [found for at, added in _adds(value.id, nodes) if last < at < line
            for item in added for found in _item(item, nodes, reader)]


def _item(item: ast.expr, nodes: list[ast.AST], reader: _Reader) -> list[Found]:
    """The broadcast ``item`` is: a call of one, or a name bound only to such calls."""
    if not isinstance(item, ast.Name):
        found = reader.broadcast(item)
        return [found] if found else []
    bound = _bindings(item.id, nodes, item.lineno)
    calls = [reader.broadcast(value) for _, value in bound]
    return [found for found in calls if found] if bound and all(calls) else []


def _bindings(name: str, nodes: list[ast.AST], line: int) -> list[tuple[int, Optional[ast.expr]]]:
    """(line, value) of each binding of ``name`` in the function before ``line``; value None
    for a binding other than ``name = value``."""
    assigned = {id(node.targets[0]): node.value for node in nodes
                if isinstance(node, ast.Assign) and len(node.targets) == 1}
    return [(node.lineno, assigned.get(id(node))) for node in nodes
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
            and node.lineno < line]


def _adds(name: str, nodes: list[ast.AST]) -> Iterator[tuple[int, list[ast.expr]]]:
    """(line, what is added) of each ``name.append(x)``, ``insert(i, x)``, ``extend([...])``,
    ``name += [...]`` among ``nodes``."""
    for node in nodes:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
                and isinstance(node.op, ast.Add) and isinstance(node.value, (ast.List, ast.Tuple)):
            yield node.lineno, list(node.value.elts)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name \
                and node.func.attr in _ADDERS and not node.keywords:
            place = _ADDERS[node.func.attr]
            if place == -1 and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
                yield node.lineno, list(node.args[0].elts)
            elif place >= 0 and len(node.args) == place + 1:
                yield node.lineno, [node.args[place]]


def returned_broadcast(value: Base, ctx: FileContext, keyword: str) -> Optional[str]:
    """The state of the broadcast the hooks (``keyword``) hold that ``value``, a call of a
    function of another module of the repository (``utils.make_hooks()``, ``make_hooks()``
    imported or star-imported), returns; None when it is not shown to return one."""
    if value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return None
    spelled = prefix_name(value, len(value.children) - 1)
    known = _known(ctx.facts)
    if spelled is None or not known:
        return None
    head, _, rest = spelled.partition(".")
    imported = file_imported_names(ctx).get(head)
    package = module_parts(ctx.path)[:-1]
    targets = [imported + (f".{rest}" if rest else "")] if imported is not None \
        else [f"{star}.{spelled}" for star in _stars(ctx, head)] if not rest else []
    for target in targets:
        name = nearest_name(target, package, known.keys())
        if name is not None:
            given, _, state = known[name].partition(":")
            return state if given == keyword else None
    return None


def _known(facts: frozenset[str]) -> dict[str, str]:
    return dict(fact[len(FACT):].partition("=")[::2] for fact in facts if fact.startswith(FACT))


def _stars(ctx: FileContext, name: str) -> list[str]:
    """The modules the file star-imports at module level, when no statement of its own binds
    ``name`` there (a function, an assignment, an import)."""
    tree = module_ast(ctx.original) if "*" in ctx.original else None
    if tree is None or name in _bound_here(tree, ctx.path):
        return []
    return [module for node in tree.body if isinstance(node, ast.ImportFrom)
            for bound, module in ast_import_bindings(node, ctx.path) if bound == STAR]


def _bound_here(tree: ast.Module, path: str) -> set[str]:
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound.update(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                       ast.ClassDef)))
    bound.update(local for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                 for local, _ in ast_import_bindings(node, path) if local != STAR)
    return bound
