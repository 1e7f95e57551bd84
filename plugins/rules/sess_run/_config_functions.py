"""Which functions of a repository return a session config that has the NPU optimizer lines.

NPU007 gives a config the guide's lines inside the function that returns it, once, whatever
session takes it. A session in another file that takes its config from such a function must
get nothing more, or ``custom_optimizers`` holds two NpuOptimizer entries. Each file is read
on its own before any rewrite (with ``ast``: cheap), and what it says becomes repository facts:

- ``npu007-config:<module>.<function>``: the function returns a config with the lines (it had
  them already, or a session of its own file takes its config from it: NPU007 writes them
  there);
- ``npu007-config:<module>.<function>=<dotted name>``: it returns what the imported function
  ``<dotted name>`` returns, so it is configured when that one is (all of them, when several);
  only for functions named like config makers (``config``, ``sess`` in either name), or every
  ``return np.zeros(...)`` of a repository would be a fact.

The same reading gives the ``npu007-passes:`` facts: calls that hand a function a config
their caller configures (:mod:`._passed_configs`).

``<module>`` is the file's path from the repository root, dotted (``models/benchmark.py`` ->
``models.benchmark``). :class:`ConfiguredFunctions` answers from the facts whether a call in
some file reaches a configured function, and :func:`config_source` which function a config
value of the file being rewritten comes from. Only module-level functions are named in facts:
a method is reached through an object no other file's analysis can follow.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import AbstractSet, FrozenSet, Iterable, Iterator, Optional, Union

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    ModuleIndex,
    definition_name,
    file_imported_names,
    is_call_trailer,
    memo,
    module_index,
    module_parts,
    prefix_name,
    scope_statements,
    why_not,
)
from npu_codemod.api._toolkit import (
    ast_dotted_name as dotted,
)
from npu_codemod.api._toolkit import (
    module_ast as parse,
)
from npu_codemod.api._toolkit import (
    nearest_name as nearest_function,
)

from ._functions import function_returns
from ._passed_configs import passed_config_facts
from ._session_config import (
    CONFIG_POSITION,
    SESSION_MANAGER_METHODS,
    SESSION_NAMES,
    SLIM_KEYWORD,
    SLIM_LOOPS,
    SLIM_NAMES,
    SUPERVISOR_METHODS,
)

PREFIX = "npu007-config:"
_CUSTOM_OPTIMIZERS = ("graph_options", "rewrite_options", "custom_optimizers", "add")
_POSITION = {**{name.rpartition(".")[2]: index for name, index in (*CONFIG_POSITION.items(), *SLIM_LOOPS.items())},
             **SUPERVISOR_METHODS, **SESSION_MANAGER_METHODS}
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def session_config_values(calls: Iterable[ast.AST]) -> Iterator[ast.expr]:
    """The ``config`` argument of each of ``calls`` that looks like a session (or session
    creator) call, by its last name: the cheap, generous counterpart of
    ``_session_config.session_call``."""
    return (value for value, _ in session_config_arguments(calls))


def session_config_arguments(calls: Iterable[ast.AST]) -> Iterator[tuple[ast.expr, bool]]:
    """:func:`session_config_values`, each with whether the call's name says it is a session
    (a slim loop's config given by position, the 23rd argument of any ``train(...)``, is
    only likely one)."""
    for node in calls:
        if not isinstance(node, ast.Call):
            continue
        name = _last_name(node.func)
        if name not in SESSION_NAMES and name not in SLIM_NAMES:
            continue
        parameter = SLIM_KEYWORD if name in SLIM_NAMES else "config"  # slim's loops: session_config=
        values = [keyword.value for keyword in node.keywords if keyword.arg == parameter]
        position = _POSITION.get(name)
        if not values and position is not None and len(node.args) > position \
                and not any(isinstance(arg, ast.Starred) for arg in node.args[: position + 1]):
            yield node.args[position], name not in SLIM_NAMES
        else:
            yield from ((value, True) for value in values)


def _last_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


@dataclass
class _Returns:
    """What the ``return`` statements of one function give back."""

    fresh: bool = False  # a config that has no NPU lines where it is returned
    calls: set[str] = field(default_factory=set)  # same-file functions whose result is returned
    forwards: set[str] = field(default_factory=set)  # imported functions whose result is returned


#: What every file with a fact spells (in any case): a session's name (``sess``: a config
#: taken by a session), a name with ``config`` or ``sess`` (a function that forwards another's
#: config), or the NPU lines' ``custom_optimizers``.
_MAY_CONFIGURE = ("config", "sess", "custom_optimizers")


def config_function_facts(path: str, text: str) -> set[str]:
    """The ``npu007-config:`` facts of one file (see the module docstring). An ASCII text that
    spells none of :data:`_MAY_CONFIGURE` has none: a fact names a function that a session
    takes its config from (each of ``SESSION_NAMES`` spells ``sess``), that forwards a function
    named like a config maker, or that returns a config with ``custom_optimizers`` lines, and
    the names of ASCII text are spelled in it as they are (``ast`` normalises others, NFKC)."""
    if text.isascii():
        lower = text.lower()  # a case-blind regular expression costs ten times more
        if not any(word in lower for word in _MAY_CONFIGURE):
            return set()
    return all_config_function_facts(path, text)


def all_config_function_facts(path: str, text: str) -> set[str]:
    """:func:`config_function_facts` without its first look at the text."""
    tree = parse(text)
    if tree is None:
        return set()
    index = module_index(tree)
    functions = _unique_functions(index)
    imports = index.imported_names(path)
    table = _ReturnsTable(index, functions, imports)
    sessions = list(session_config_arguments(index.nodes(ast.Call)))
    used = _used(index, table, [value for value, _ in sessions])
    module = ".".join(module_parts(path))
    facts = passed_config_facts(path, text, index, imports, [value for value, sure in sessions if sure])
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions:
            forwards = _configured(node.name, table, used, frozenset())
            if forwards is None or (forwards and not _config_like(node.name, forwards)):
                continue
            name = f"{PREFIX}{module}.{node.name}"
            facts.update({f"{name}={target}" for target in forwards} if forwards else {name})
    return facts


class _ReturnsTable:
    """What each function of ``functions`` returns (:func:`_returns`, None: not one NPU007 can
    complete), read when first asked: the facts ask about module-level functions, the
    functions they call and those whose result a session takes, seldom about the rest."""

    def __init__(self, index: ModuleIndex, functions: dict[str, _Function], imports: dict[str, str]) -> None:
        self._index, self._functions, self._imports = index, functions, imports
        self._read: dict[str, Optional[_Returns]] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._functions

    def get(self, name: str) -> Optional[_Returns]:
        if name not in self._read:
            function = self._functions.get(name)
            self._read[name] = None if function is None else _returns(
                function, self._index.own_nodes(function), self._index.returns(function),
                self._functions.keys(), self._imports)
        return self._read[name]


def _config_like(function: str, forwards: Iterable[str]) -> bool:
    """Is a function that returns what other functions return named like a config maker (or
    are those)? Only those forward: most functions of a repository return some call's result."""
    names = [function, *(target.rpartition(".")[2] for target in forwards)]
    return any(word in name.lower() for name in names for word in ("config", "sess"))


def _unique_functions(index: ModuleIndex) -> dict[str, _Function]:
    """Functions (methods and nested ones too) by name, for names defined once in the file:
    a call of a name defined twice cannot be told apart (NPU007 leaves those alone too)."""
    by_name: dict[str, list[_Function]] = {}
    for node in index.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            by_name.setdefault(node.name, []).append(node)
    return {name: found[0] for name, found in by_name.items() if len(found) == 1}


def _returns(function: _Function, nodes: list[ast.AST], returns: list[ast.Return], functions: AbstractSet[str],
             imports: dict[str, str]) -> Optional[_Returns]:
    """What ``function`` (its own nodes ``nodes``, its ``return`` statements ``returns``)
    returns, or None when it is no config function NPU007 can complete: a return with no name
    or call, or one that no statement can be put in front of."""
    if not returns or any(not isinstance(node.value, (ast.Name, ast.Call)) for node in returns) \
            or not all(_insertable(node, function, nodes) for node in returns):
        return None  # a value of another kind gives None below: looked at before the blocks
    result = _Returns()
    configured = _configured_names(nodes)
    for node in returns:
        value = node.value
        if isinstance(value, ast.Name) and value.id in configured:
            continue
        if not isinstance(value, (ast.Name, ast.Call)):
            return None
        for source in _assigned(value.id, nodes) if isinstance(value, ast.Name) else [value]:
            _add_source(result, source, functions, imports)
    return result


def _insertable(statement: ast.stmt, function: _Function, nodes: list[ast.AST]) -> bool:
    """Not on the ``def`` line, not after a ``;`` (as ``statements.why_not`` says)."""
    if statement.lineno == function.lineno:
        return False
    for block in _blocks(function, nodes):
        for previous, following in zip(block, block[1:]):
            if following is statement:
                return getattr(previous, "end_lineno", 0) != statement.lineno
    return True


def _blocks(function: _Function, nodes: list[ast.AST]) -> Iterator[list[ast.stmt]]:
    """The statement lists of ``function`` (its own nodes ``nodes``: its body, branches,
    handlers), nested ones too."""
    yield function.body
    for node in nodes:
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for handler in getattr(node, "handlers", ()):
            yield handler.body


def _add_source(result: _Returns, value: Optional[ast.expr], functions: AbstractSet[str],
                imports: dict[str, str]) -> None:
    """Count one value that may be returned: a call of a function, or anything else (fresh)."""
    callee = dotted(value.func) if isinstance(value, ast.Call) else None
    head, _, rest = (callee or "").partition(".")
    if callee is not None and (callee in functions or (head in ("self", "cls") and rest in functions)):
        result.calls.add(rest if head in ("self", "cls") else callee)
    elif callee and callee.rpartition(".")[2] != "ConfigProto" and head in imports:
        result.forwards.add(imports[head] + (f".{rest}" if rest else ""))
    else:
        result.fresh = True


def _assigned(name: str, nodes: list[ast.AST]) -> list[Optional[ast.expr]]:
    """The values that ``name = value`` statements among ``nodes`` bind; None for a binding of
    another kind (a parameter, a loop or ``with`` target...) or none at all: unknown objects."""
    values: list[Optional[ast.expr]] = []
    targets = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(node.value)
                    targets.add(id(target))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store) \
                and id(node) not in targets:
            values.append(None)
    return values or [None]


def _configured_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Names given the NpuOptimizer custom_op lines (``x = <name>...custom_optimizers.add()``
    and ``x.name = "NpuOptimizer"``) somewhere among ``nodes``: the generous test."""
    optimizers: dict[str, str] = {}
    named: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Call):
            chain = dotted(value.func)
            if chain and tuple(chain.split(".")[1:]) == _CUSTOM_OPTIMIZERS:
                optimizers[target.id] = chain.split(".")[0]
        elif isinstance(target, ast.Attribute) and target.attr == "name" \
                and isinstance(target.value, ast.Name) and isinstance(value, ast.Constant) \
                and value.value == "NpuOptimizer":
            named.add(target.value.id)
    return {config for optimizer, config in optimizers.items() if optimizer in named}


def _used(index: ModuleIndex, table: _ReturnsTable, sessions: list[ast.expr]) -> set[str]:
    """Same-file functions whose result a session of the file takes as its config (the
    ``sessions`` configs: :func:`session_config_values`), directly, through a name (any
    ``name = f(...)`` of the file: generous) or through a used function."""
    assigned: dict[str, list[ast.expr]] = {}
    for node in index.nodes(ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                assigned.setdefault(target.id, []).append(node.value)
    seeds = []
    for value in sessions:
        seeds += assigned.get(value.id, []) if isinstance(value, ast.Name) else [value]
    used: set[str] = set()
    pending = [name for name in map(_same_file_callee, seeds) if name is not None and name in table]
    while pending:
        name = pending.pop()
        returns = table.get(name)
        if name in used or returns is None:
            continue
        used.add(name)
        pending.extend(returns.calls)
    return used


def _same_file_callee(value: ast.expr) -> Optional[str]:
    """``f`` for ``f(...)``, ``self.f(...)``, ``cls.f(...)``."""
    callee = dotted(value.func) if isinstance(value, ast.Call) else None
    head, _, rest = (callee or "").partition(".")
    return rest if head in ("self", "cls") and "." not in rest else (callee or None)


def _configured(name: str, table: _ReturnsTable, used: AbstractSet[str],
                visiting: frozenset[str]) -> Optional[frozenset[str]]:
    """None when the result of ``name`` may lack the NPU lines; else the imported functions
    whose results it also returns (configured when all those are)."""
    returns = table.get(name)
    if returns is None or name in visiting:
        return None
    if name in used:
        return frozenset()  # NPU007 completes every return of it (see SessionConfig)
    if returns.fresh:
        return None
    forwards = set(returns.forwards)
    for called in returns.calls:
        found = _configured(called, table, used, visiting | {name})
        if found is None:
            return None
        forwards |= found
    return frozenset(forwards)


class ConfiguredFunctions:
    """The ``npu007-config:`` facts of a repository: which functions return a configured config."""

    def __init__(self, facts: Iterable[str]) -> None:
        self.plain: set[str] = set()
        self.forwards: dict[str, set[str]] = {}
        for fact in facts:
            if fact.startswith(PREFIX):
                name, _, target = fact[len(PREFIX):].partition("=")
                if target:
                    self.forwards.setdefault(name, set()).add(target)
                else:
                    self.plain.add(name)
        self._names = frozenset(self.plain | self.forwards.keys())

    def find(self, target: str, path: str) -> Optional[str]:
        """The configured function that ``target`` (a dotted name as imported in the file at
        ``path``) is, module-qualified, or None. ``import benchmark`` in ``scripts/train.py``
        may be ``scripts/benchmark.py`` or ``benchmark.py``: the nearest folder first, as
        Python finds a script's neighbours; then a single module of the repository that ends
        so (a package under ``src/``)."""
        return self._find(target, module_parts(path)[:-1], frozenset())

    def _find(self, target: str, package: tuple[str, ...], visiting: frozenset[str]) -> Optional[str]:
        found = nearest_function(target, package, self._names)
        return found if found is not None and self._configured(found, visiting) else None

    def _configured(self, name: str, visiting: frozenset[str]) -> bool:
        if name in self.plain:
            return True
        if name in visiting or name not in self.forwards:
            return False
        package = tuple(name.split(".")[:-2])
        return all(self._find(target, package, visiting | {name}) for target in self.forwards[name])


@lru_cache(maxsize=4)
def configured_functions(facts: FrozenSet[str]) -> ConfiguredFunctions:
    """The :class:`ConfiguredFunctions` of a repository's ``facts``, read once per repository,
    not once per file (a large repository's facts are many; nothing changes the object)."""
    return ConfiguredFunctions(facts)


def configured_function(callee: str, ctx: FileContext) -> Optional[str]:
    """The configured function of another file (module-qualified) that ``callee`` (the dotted
    callee of a call in the file of ``ctx``) names through the file's imports, or None."""
    key = "config_functions.imports"
    if key not in memo(ctx):
        memo(ctx)[key] = (file_imported_names(ctx), configured_functions(ctx.facts))
    imports, functions = memo(ctx)[key]
    head, _, rest = callee.partition(".")
    if head not in imports:
        return None
    return functions.find(imports[head] + (f".{rest}" if rest else ""), ctx.path)


@dataclass(frozen=True)
class ConfigSource:
    """The function whose result a config value is: one of the file being rewritten
    (``function``: NPU007 completes each of its returns) or a configured one of another file."""

    name: str  # ``make_config``; module-qualified for another file's: ``benchmark.create_config_proto``
    function: Optional[Node] = None  # the ``def`` in this file


def config_source(value: Base, ctx: FileContext) -> Optional[ConfigSource]:
    """The function whose return value ``value`` is, when it is a call NPU007 can rely on:
    ``f(...)``/``self.f(...)`` of a function defined once in the file whose returns it can
    complete (:func:`completable`), or a function of another file that is configured."""
    if value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return None
    callee = prefix_name(value, len(value.children) - 1)
    if callee is None:
        return None
    head, _, rest = callee.partition(".")
    local = rest if head in ("self", "cls") and "." not in rest else None if rest else callee
    found = _defined(ctx).get(local or "", [])
    if found and local is not None:  # (no function is named "")
        usable = len(found) == 1 and completable(found[0])
        return ConfigSource(local, found[0]) if usable else None
    qualified = configured_function(callee, ctx)
    return ConfigSource(qualified) if qualified else None


def _defined(ctx: FileContext) -> dict[str, list[Node]]:
    """Every function of the file (methods, nested ones) by name, found once per file."""
    key = "config_functions.defined"
    if key not in memo(ctx):
        found: dict[str, list[Node]] = {}
        for node in scope_statements(ctx.tree, nested=True):
            if node.type == symbols.funcdef:
                found.setdefault(node.children[1].value, []).append(node)
        memo(ctx)[key] = found
    return memo(ctx)[key]


def completable(function: Node) -> bool:
    """Does every ``return`` of ``function`` give a name or a call (the ``ast`` analysis
    asks the same of a function, see ``_returns``), with room for statements before it?"""
    returns = function_returns(function)
    return bool(returns) and all(
        node.type == symbols.return_stmt and _returned_kind(node.children[1]) and not why_not(node)
        for node in returns)


def returned_value(value: Base) -> Base:
    """``value`` without the parentheses around it."""
    while value.type == symbols.atom and value.children[0].type == tokens.LPAR and len(value.children) == 3:
        value = value.children[1]
    return value


def _returned_kind(value: Base) -> bool:
    value = returned_value(value)
    if value.type == tokens.NAME:
        return value.value not in ("None", "True", "False")
    return value.type == symbols.power and is_call_trailer(value.children[-1])


def promised_functions(ctx: FileContext) -> list[Node]:
    """The module-level functions of the file that the facts name as returning a configured
    config by themselves (not through another file's function): other files rely on them."""
    module = ".".join(module_parts(ctx.path))
    names = {name.rpartition(".")[2] for name in configured_functions(ctx.facts).plain
             if name.rpartition(".")[0] == module}
    found = []
    for node in ctx.tree.children:
        function = node.children[-1] if node.type == symbols.decorated else node
        if function.type == symbols.funcdef and definition_name(function) in names \
                and len(_defined(ctx).get(definition_name(function), [])) == 1:
            found.append(function)
    return found
