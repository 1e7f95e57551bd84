"""A repository's Python files read with ``ast``, for the analysis hooks: each file's module
name, its ``ast`` (parsed once for every hook that asks), what its imports bind (as
:func:`~.names.ast_import_bindings` reads each import), and which of
the repository's module-qualified names an imported dotted name is.

Repository-wide facts name module-level functions and classes by ``<module>.<name>``, where
``<module>`` is the file's path from the repository root, dotted (``models/benchmark.py`` ->
``models.benchmark``); a file that imports one spells it as its import says (``import
benchmark``, ``from .models import benchmark``), which :func:`nearest_name` maps back.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from itertools import chain, repeat
from operator import attrgetter
from typing import AbstractSet, Any, Iterable, Iterator, Optional, TypeVar, Union, overload

from .names import STAR, TF, ast_import_bindings

#: Where Google's monorepo keeps TensorFlow: a file vendored from it imports
#: ``google3.third_party.tensorflow.X`` in a ``try`` and ``tensorflow.X`` in its ``except``.
_GOOGLE3_TF = f"google3.third_party.{TF}"


@lru_cache(maxsize=2)
def module_ast(text: str) -> Optional[ast.Module]:
    """The module's ``ast``, or None when it is not Python 3 (no facts, no cross-file calls)
    or nests deeper than CPython turns into ``ast`` objects (an expression of thousands of
    terms, which fissix parses). Kept for the next caller: each analysis hook of a file
    parses the same text (do not edit the tree)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


#: An import statement on its own line(s): ``import a.b as c``, ``from .x import (y,\n z)``, with
#: backslash continuations; what a file's imports are without parsing the whole file.
_IMPORT_STATEMENT = re.compile(
    r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|(?:[^\n\\]|\\\r?\n)*)"
    r"|import[ \t]+(?:[^\n\\]|\\\r?\n)*)", re.MULTILINE)


def forget_trees() -> None:
    """Drop the trees :func:`module_ast` keeps, with their indexes and imported names: for
    the engine once a file is done, whose tree no later file asks for. Reference counting
    frees them at once; kept, they were the bulk of every young collection after the file
    (the engine pauses the collector over a file, so its objects are all young then): a
    tenth of the engine's time collecting on real repositories."""
    module_ast.cache_clear()
    module_index.cache_clear()
    _IMPORTED.clear()


def import_statements(text: str) -> ast.Module:
    """A module of the import statements of ``text`` alone, found line by line (a tenth of the
    cost of :func:`module_ast` on a file of other code): for a file whose imports are all an
    analysis reads. An import spelled inside a string may count; one after ``;`` does not."""
    found = []
    for match in _IMPORT_STATEMENT.finditer(text):
        try:
            found += ast.parse(match.group().strip()).body
        except (SyntaxError, ValueError, RecursionError):
            continue  # prose that starts with "import", or a statement cut short
    return ast.Module(body=found, type_ignores=[])


_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_Node = TypeVar("_Node", bound=ast.AST)
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
#: Nodes whose inner nodes belong to no enclosing function's own nodes.
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_SCOPE_TYPES = frozenset(_SCOPES)
#: What a list of statements is made of: statements, ``except`` clauses, ``case`` blocks.
BLOCK_ITEMS = (ast.stmt, ast.excepthandler, *([ast.match_case] if hasattr(ast, "match_case") else []))


class ModuleIndex:
    """Every node of one module's ``ast``, walked once for all the analyses of the file
    (:func:`module_index`): the nodes of given types, each function's own nodes, and what
    the imports bind; expression contexts (``ast.Load``...) left out. The tree must not be
    edited (as :func:`module_ast` says)."""

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self._by_type: dict[type, list[ast.AST]] = {}
        self._own: dict[ast.AST, list[ast.AST]] = {}
        self._returns: dict[ast.AST, list[ast.Return]] = {}
        self._returns_read = False
        self._walk(tree)

    def _walk(self, tree: ast.AST) -> None:
        """Pre-order, as :func:`own_nodes` walks a function (the loop is the hot spot of a
        repository's analysis: kept flat). A stack entry is a node and the list of the
        function that owns it (None: no function's)."""
        stack: list[tuple[ast.AST, Optional[list[ast.AST]]]] = [(tree, None)]
        pop, push, extend, by_type, own = stack.pop, stack.append, stack.extend, self._by_type, self._own
        plan_of = _WALK_PLANS.get
        while stack:
            node, owner = pop()
            kind = type(node)
            bucket = by_type.get(kind)
            if bucket is None:
                bucket = by_type[kind] = []
            bucket.append(node)
            if owner is not None:
                owner.append(node)
            plan = plan_of(kind)
            if plan is None:
                plan = _walk_plan(kind)
            if not plan:
                continue  # a name, a constant: nothing below
            body_owner = inner = None
            if kind in _FUNCTIONS:
                body_owner = own[node] = []
            elif kind not in _SCOPE_TYPES:
                inner = owner
            for name, gaps in plan:
                value = getattr(node, name, None)
                if type(value) is list:
                    if not value:
                        continue
                    items_owner = body_owner if body_owner is not None and name == "body" else inner
                    if gaps:
                        extend([(item, items_owner) for item in reversed(value) if item is not None])
                    else:  # every item a node: paired in C
                        extend(zip(reversed(value), repeat(items_owner)))
                elif isinstance(value, ast.AST):
                    push((value, inner))

    @overload
    def nodes(self, kind: type[_Node], /) -> list[_Node]: ...

    @overload
    def nodes(self, *types: type[ast.AST]) -> list[ast.AST]: ...

    def nodes(self, *types: type[ast.AST]) -> list[Any]:
        """The nodes of the module that are instances of ``types``, in pre-order for each
        concrete type (several: one type's nodes after another's); for a single concrete
        type, the list kept for it (not to be edited), typed as a list of that type."""
        if len(types) == 1 and types[0] in self._by_type:
            return self._by_type[types[0]]
        kinds = [kind for kind in self._by_type if issubclass(kind, types)]
        if len(kinds) <= 1:
            return self._by_type[kinds[0]] if kinds else []
        return [node for kind in kinds for node in self._by_type[kind]]

    def own_nodes(self, function: _Function) -> list[ast.AST]:
        """The nodes of ``function``'s body, not those of functions, classes or lambdas in it
        (those themselves are), in pre-order: as :func:`own_nodes` gives them (the list kept
        for it, not to be edited)."""
        found = self._own.get(function)
        return found if found is not None else list(own_nodes(function))

    def returns(self, function: _Function) -> list[ast.Return]:
        """The ``return`` statements among :meth:`own_nodes` of ``function``, in pre-order:
        read once per function for every analysis that asks (the list kept for it, not to be
        edited)."""
        found = self._returns.get(function)
        if found is None and function in self._own and not self._returns_read:
            self._read_returns()
            found = self._returns.get(function)
        if found is None:
            found = self._returns[function] = [node for node in self.own_nodes(function) if type(node) is ast.Return]
        return found

    def _read_returns(self) -> None:
        """The ``return`` statements of every function at once, by position instead of a look
        at each function's own nodes: a statement lies in the span of each function and class
        that holds it, these spans nest, and its function is the innermost holder (a lambda
        holds no statement; a ``return`` in a class body, which ``ast.parse`` accepts, is no
        function's). The returns come in source order (statements: :meth:`statements`)."""
        self._returns_read = True
        holders: list[ast.AST] = sorted([*self._own, *self.nodes(ast.ClassDef)], key=_POSITION)
        found: dict[ast.AST, list[ast.Return]] = {function: [] for function in self._own}
        stack: list[ast.AST] = []
        waiting = iter(holders)
        holder = next(waiting, None)
        for node in self.nodes(ast.Return):
            at = _POSITION(node)
            while holder is not None and _POSITION(holder) < at:
                stack.append(holder)  # those that ended before are popped below
                holder = next(waiting, None)
            while stack and _END(stack[-1]) <= at:
                stack.pop()
            if stack and stack[-1] in found:
                found[stack[-1]].append(node)
        for function, returns in found.items():
            self._returns.setdefault(function, returns)

    def imported_names(self, path: str) -> dict[str, str]:
        """:func:`imported_names` of the module, computed once per tree and ``path`` (the
        dict kept for it, not to be edited), from the import statements the walk found."""
        return _imported_names(self.tree, path, self)

    def statements(self) -> list[ast.stmt]:
        """Every statement of the module, nested ones too, in the order :func:`statements`
        gives them (the source's: a statement starts after the one before it in pre-order, and
        no two start at one place): the walk's lists of each statement type, merged in C."""
        found: list[Any] = list(chain.from_iterable(
            nodes for kind, nodes in self._by_type.items() if issubclass(kind, ast.stmt)))
        found.sort(key=_POSITION)
        return found

    def imports(self) -> list[Union[ast.Import, ast.ImportFrom]]:
        """The module's import statements in the order :func:`statements` gives them (the
        source's: a statement starts after the one before it in pre-order)."""
        found: list[Union[ast.Import, ast.ImportFrom]] = [*self.nodes(ast.Import), *self.nodes(ast.ImportFrom)]
        return sorted(found, key=_start)


@lru_cache(maxsize=2)
def module_index(tree: ast.AST) -> ModuleIndex:
    """The :class:`ModuleIndex` of ``tree`` (a :func:`module_ast` tree), built once for the
    analysis hooks of a file instead of an ``ast.walk`` each."""
    return ModuleIndex(tree)


def own_nodes(function: _Function) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body, not those of functions, classes or lambdas in it
    (those themselves are), in pre-order; not expression contexts and operators
    (:func:`child_fields`)."""
    stack: list[ast.AST] = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in reversed(value) if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of ``tree`` (nested ones too), in pre-order, without walking into
    expressions (none holds a statement): the imports of a module at a fraction of a walk."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list and value and isinstance(value[0], BLOCK_ITEMS):
                stack.extend(reversed(value))


_BLOCKS = (ast.If, ast.Try, ast.With)


def literal_names(value: ast.expr) -> Optional[set[str]]:
    """The strings of a literal list or tuple (``__all__``), or None for anything else."""
    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(item, ast.Constant) and isinstance(item.value, str) for item in value.elts):
        return {item.value for item in value.elts}  # type: ignore[attr-defined]
    return None


def module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module-level statements, those in ``if``/``try``/``with`` blocks too (not in
    functions or classes: they bind no module name)."""
    for node in body:
        yield node
        if not isinstance(node, _BLOCKS):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from module_level(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            yield from module_level(handler.body)


def child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes worth walking to, last first (pushed on a
    stack: popped in order): not ``ctx`` (``Load``/``Store``), the operators (``op``, ``ops``)
    nor ``type_ignores``, which hold no name and no code; none for a value that is no node (a
    ``global`` statement's names are strings). Every ``ast`` walk here uses it."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            name for name in reversed(getattr(kind, "_fields", ())) if name not in _LEAF_FIELDS)
    return fields


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_ignores"})


def node_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """:func:`child_fields` less the fields that ``ast``'s grammar (ASDL) types as identifiers,
    numbers, strings or constants, which never hold a node (a name's ``id``, a constant's
    ``value``, an attribute's ``attr``...): what :class:`ModuleIndex` walks to (names and
    constants, a third of a module's nodes, have none)."""
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        scalars = _SCALAR_FIELDS.get(kind.__name__, ())
        fields = _NODE_FIELDS[kind] = tuple(name for name in child_fields(kind) if name not in scalars)
    return fields


_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _walk_plan(kind: type[ast.AST]) -> tuple[tuple[str, bool], ...]:
    """:func:`node_fields` of ``kind``, each with whether a list it holds may have a gap (None:
    a dictionary's ``**`` entry, a keyword-only parameter without a default) among its nodes;
    every other list field holds nodes only (ASDL), as :data:`_SCALAR_FIELDS` leaves them."""
    plan = _WALK_PLANS[kind] = tuple((name, (kind.__name__, name) in _GAPPED_LISTS)
                                     for name in node_fields(kind))
    return plan


_WALK_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}
_GAPPED_LISTS = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})
_SCALAR_FIELDS: dict[str, tuple[str, ...]] = {
    "Name": ("id",), "Constant": ("value", "kind"), "Attribute": ("attr",),
    "arg": ("arg", "type_comment"), "keyword": ("arg",), "alias": ("name", "asname"),
    "ImportFrom": ("module", "level"), "Global": ("names",), "Nonlocal": ("names",),
    "FunctionDef": ("name", "type_comment"), "AsyncFunctionDef": ("name", "type_comment"),
    "ClassDef": ("name",), "ExceptHandler": ("name",), "comprehension": ("is_async",),
    "FormattedValue": ("conversion",), "AnnAssign": ("simple",), "Assign": ("type_comment",),
    "For": ("type_comment",), "AsyncFor": ("type_comment",), "With": ("type_comment",),
    "AsyncWith": ("type_comment",),
    # patterns (3.10) and type parameters (3.12): names, a singleton's value, ``**rest``
    "MatchSingleton": ("value",), "MatchStar": ("name",), "MatchAs": ("name",),
    "MatchMapping": ("rest",), "MatchClass": ("kwd_attrs",), "TypeVar": ("name",),
    "ParamSpec": ("name",), "TypeVarTuple": ("name",),
}


def imported_names(tree: ast.Module, path: str) -> dict[str, str]:
    """Local name -> the dotted name it is imported as, anywhere in the module (relative
    imports resolved from ``path``; Google's monorepo spelling of TensorFlow,
    ``google3.third_party.tensorflow.X``, read as ``tensorflow.X``, so that a file importing
    either, ``try``/``except``, binds one thing); a name imported as two different things is
    left out. Computed once per tree and path; the caller gets its own copy."""
    return dict(_imported_names(tree, path))


def _imported_names(tree: ast.AST, path: str, index: Optional[ModuleIndex] = None) -> dict[str, str]:
    """The bindings of ``tree``'s imports, kept for the last two trees and paths (those of
    :func:`module_ast`'s cache: no more kept alive); read from ``index`` (the tree's) when
    given, else found with :func:`statements` (a tree no analysis indexed)."""
    key = (tree, path)
    known = _IMPORTED.get(key)
    if known is not None:
        return known
    imports = index.imports() if index is not None else statements(tree)
    found: dict[str, set[str]] = {}
    for node in imports:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, target in ast_import_bindings(node, path):
                if local != STAR:
                    found.setdefault(local, set()).add(_outside_google3(target))
    known = {local: targets.pop() for local, targets in found.items() if len(targets) == 1}
    if len(_IMPORTED) >= 2:
        del _IMPORTED[next(iter(_IMPORTED))]
    _IMPORTED[key] = known
    return known


_IMPORTED: dict[tuple[ast.AST, str], dict[str, str]] = {}


def _outside_google3(target: str) -> str:
    """``target`` with Google's monorepo path to TensorFlow made TensorFlow's own
    (``google3.third_party.tensorflow.python.estimator`` -> ``tensorflow.python.estimator``)."""
    if target == _GOOGLE3_TF or target.startswith((f"{_GOOGLE3_TF}.", f"{_GOOGLE3_TF}_")):
        return target[len("google3.third_party."):]
    return target


def _start(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


_POSITION = attrgetter("lineno", "col_offset")  # :func:`_start`, in C
_END = attrgetter("end_lineno", "end_col_offset")


def nearest_name(target: str, package: tuple[str, ...], known: AbstractSet[str]) -> Optional[str]:
    """The module-qualified name among ``known`` that ``target`` (a dotted name as imported by
    a file of ``package``) is: the nearest folder first, as Python finds a script's
    neighbours, then the single one of the repository whose name ends so; else None."""
    found = _nearest_folder(target, package, known)
    if found is None:
        ending = [name for name in known if name.endswith("." + target)]
        found = ending[0] if len(ending) == 1 else None
    return found


def _nearest_folder(target: str, package: tuple[str, ...], known: AbstractSet[str]) -> Optional[str]:
    """``target`` in the nearest folder of ``package`` that has it among ``known``, or None."""
    candidates = [".".join((*package[:depth], target)) for depth in range(len(package), -1, -1)]
    return next((name for name in candidates if name in known), None)


class KnownNames:
    """Module-qualified names, looked up as :func:`nearest_name` does but without reading all
    of them for a name of no nearby folder: a repository's thousands of classes are asked
    about each base of each class."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)
        self._by_last: dict[str, list[str]] = {}
        for name in self.names:
            self._by_last.setdefault(name.rpartition(".")[2], []).append(name)

    def nearest(self, target: str, package: tuple[str, ...]) -> Optional[str]:
        """``nearest_name(target, package, self.names)``."""
        found = _nearest_folder(target, package, self.names)
        if found is None:
            ending = [name for name in self._by_last.get(target.rpartition(".")[2], ())
                      if name.endswith("." + target)]
            found = ending[0] if len(ending) == 1 else None
        return found
