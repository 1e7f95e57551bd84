"""TF 2.x datasets: which expressions of a file are ``tf.data`` datasets (NPU064, NPU069).

A file's ``ast`` is read once (:class:`FileDatasets`). An expression is a dataset when it is
made by ``tf.data`` (``tf.data.Dataset.from_tensor_slices(...)``, ``tf.data.TFRecordDataset``),
by ``tfds.load(..., split=...)`` or a Keras utility that returns a batched dataset
(``image_dataset_from_directory``), by a dataset method on a dataset (``ds.map(f)``; the names
only ``tf.data`` uses, ``prefetch``, ``padded_batch``..., on any receiver), by a call of a
function that returns one, or when it is a name its scope (or an enclosing function's)
assigns one (in any branch; tuple targets as well: ``train, info = tfds.load(...,
with_info=True)``; the value of a ``tfds.load`` without ``split`` is a dict of datasets, so
``ds["train"]`` and ``ds.get("test")`` are ones), or a parameter named like one (``ds``,
``train_dataset``, as NPU002 reads names) or that every call of its function in the file
passes one. A batch whose result goes on to a method only ``tf.data`` has
(``.prefetch(1)``, ``.as_numpy_iterator()``) batches a dataset too.

Functions that return a dataset are found in the file itself and, through the repository's
analysis, in the files it imports: :func:`.tf2_dataset_facts.dataset_function_facts` gives one
:data:`FUNCTION_FACT` per module-level function of a file that returns a dataset
(``tf2-dataset-fn:data.loader.make_dataset:*``, or the positions of a returned tuple that are
datasets: ``...:0,1``); a call of an imported name is matched to them as Python finds the
module (:func:`~.modules.nearest_name`), or through a package that re-exports the function
(``from data import make_dataset`` with ``data/__init__.py`` importing ``data.loader``'s).
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import AbstractSet, Iterator, Optional, Union

from .ast_references import SourcePositions
from .modules import child_fields, imported_names, module_ast, module_index, nearest_name
from .names import ast_dotted_name, canonical, module_package
from .tf2_dataset_sources import (
    DATASET,
    DATASET_DICT,
    DATASET_METHODS,
    DATASET_NAME,
    TF_DATA_ONLY,
    TF_DATA_RESULTS,
    Kind,
    library_kind,
)

FUNCTION_FACT = "tf2-dataset-fn:"
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
Scope = Union[ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef)


class FileDatasets:
    """The datasets of one file (its ``ast``, its path in the repository and the repository's
    facts); every answer is worked out once."""

    def __init__(self, tree: ast.Module, text: str, path: str, facts: AbstractSet[str] = frozenset()) -> None:
        self.tree = tree
        self.text = text
        self.path = path
        self.imports = imported_names(tree, path)
        self.package = module_package(path)
        self.remote = _remote_functions(facts)
        self.index = module_index(tree)
        self._names: dict[int, dict[str, Kind]] = {}
        self._returns: dict[str, Kind] = {}
        self._returns_known = False
        self._attributes: Optional[dict[str, Kind]] = None

    @property
    def returns(self) -> dict[str, Kind]:
        """What the module-level functions that return datasets return, by name."""
        if not self._returns_known:
            self._returns_known = True
            self._returns = self._local_returns()
        return self._returns

    @cached_property
    def functions(self) -> dict[str, Function]:
        """The module-level functions by name."""
        return {node.name: node for node in self.tree.body if isinstance(node, _FUNCTIONS)}

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """``id(node)`` -> its parent, for every node of the file (for who follows a value)."""
        found: dict[int, ast.AST] = {}
        stack: list[ast.AST] = [self.tree]
        while stack:
            node = stack.pop()
            for name in child_fields(type(node)):
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            found[id(item)] = node
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    found[id(value)] = node
                    stack.append(value)
        return found

    def scope_of(self, node: ast.AST) -> Scope:
        """The function, lambda, class or module ``node`` runs in."""
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, _SCOPES):
            parent = self.parents.get(id(parent))
        return parent if parent is not None else self.tree

    def is_dataset(self, node: ast.AST, scope: Optional[Scope] = None) -> bool:
        return self.kind(node, scope) == DATASET

    def kind(self, node: ast.AST, scope: Optional[Scope] = None) -> Kind:
        """What ``node`` (read in ``scope``; None: where it is) holds: :data:`DATASET`,
        :data:`DATASET_DICT`, a tuple of those (or None) by position, or None when the file
        does not show it."""
        if isinstance(node, ast.Name):
            return self.name_kind(node.id, scope if scope is not None else self.scope_of(node))
        if isinstance(node, ast.Subscript):
            return DATASET if self.kind(node.value, scope) == DATASET_DICT else None
        if isinstance(node, ast.Attribute):
            return self.attribute_kind(node)
        if isinstance(node, ast.Call):
            return self.call_kind(node, scope)
        if isinstance(node, ast.Tuple):
            kinds = tuple(self.kind(element, scope) for element in node.elts)
            return kinds if any(kinds) else None
        return None

    def call_kind(self, call: ast.Call, scope: Optional[Scope] = None) -> Kind:
        function = call.func
        if isinstance(function, ast.Attribute) and function.attr in DATASET_METHODS:
            if function.attr in TF_DATA_ONLY or self.is_dataset(function.value, scope):
                return DATASET
        if isinstance(function, ast.Attribute) and function.attr == "get" \
                and self.kind(function.value, scope) == DATASET_DICT:
            return DATASET  # tfds.load(...) without a split: dataset.get("validation")
        qualified = self.qualify(function)
        if qualified is not None:
            made = library_kind(qualified, call)
            if made is not None:
                return made
        return self.returned_kind(call)

    def attribute_kind(self, node: ast.Attribute) -> Kind:
        """``self.pipeline``: a dataset when the file assigns the same attribute chain a
        dataset anywhere (attributes are tracked for the whole file), or, when it assigns it
        nothing, when it is named like one (``self.train_ds``)."""
        dotted = ast_dotted_name(node)
        if dotted is None or self.qualify(node) is not None:
            return None  # tf.data.AUTOTUNE and other imported names are no attributes of ours
        assigned = self.attribute_datasets
        if dotted in assigned:
            return assigned[dotted]
        return DATASET if DATASET_NAME.match(node.attr) else None

    @property
    def attribute_datasets(self) -> dict[str, Kind]:
        """The attribute chains the file assigns (``self.pipeline``), each with the kind of the
        value if every assignment gives a dataset, else None (while they are worked out,
        those found so far)."""
        if self._attributes is None:
            self._attributes = {}
            for statement in self.index.nodes(ast.Assign):
                targets = [target for target in statement.targets if isinstance(target, ast.Attribute)]
                dotted = [name for name in map(ast_dotted_name, targets) if name]
                if not dotted:
                    continue
                kind = self.kind(statement.value, self.owners.get(id(statement), self.tree))
                for name in dotted:
                    self._attributes[name] = kind if self._attributes.get(name, kind) == kind else None
        return self._attributes

    def qualify(self, node: ast.AST) -> Optional[str]:
        """The dotted name ``node`` spells, its head replaced by what the file imports it as."""
        dotted = ast_dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.imports:
            return None
        return canonical(self.imports[head] + (f".{rest}" if rest else ""))

    def returned_kind(self, call: ast.Call) -> Kind:
        """What a call of a function of the file or of the repository returns, if a dataset."""
        function = call.func
        if isinstance(function, ast.Name) and function.id in self.functions:
            return self.returns.get(function.id)
        qualified = self.qualify(function)
        if qualified is None:
            return None
        found = remote_name(qualified, self.package, self.remote.keys())
        return self.remote[found] if found else None

    def name_kind(self, name: str, scope: Scope) -> Kind:
        """The kind of ``name`` where ``scope`` reads it: its own binding, else the enclosing
        functions' (not a class body's), else the module's."""
        while True:
            kinds = self.bindings(scope)
            if name in kinds or scope is self.tree:
                return kinds.get(name)
            # the function a nested function or lambda is defined in; else (a module-level
            # function, a method) the module: class bodies are no enclosing scope
            scope = self.owners.get(id(scope), self.tree)

    def bindings(self, scope: Scope) -> dict[str, Kind]:
        """The names ``scope`` assigns a dataset (or a dict or tuple of them) anywhere, in
        order: ``ds = ds.map(f)`` keeps ``ds`` one."""
        found = self._names.get(id(scope))
        if found is None:
            found = self._names[id(scope)] = {}
            found.update(self._parameter_kinds(scope))
            for node in self.statements(scope):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    kind = self.kind(node.value, scope)
                    if kind is not None:
                        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                            _bind(target, kind, found)
        return found

    def _parameter_kinds(self, scope: Scope) -> dict[str, Kind]:
        """Every parameter of a function or lambda (each is a variable of its own, whatever
        an enclosing scope calls by that name): a dataset when it is named like one
        (``dataset``, ``ds``, ``train_ds``, ``eval_dataset``) or, of a module-level function,
        when every call of it in the file (one at least) passes a dataset: ``def
        prepare(images, shuffle=False)``; else None."""
        if not isinstance(scope, (*_FUNCTIONS, ast.Lambda)):
            return {}
        calls = self.calls_by_name.get(scope.name, []) \
            if not isinstance(scope, ast.Lambda) and self.functions.get(scope.name) is scope else []
        arguments = scope.args
        positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]]
        found: dict[str, Kind] = dict.fromkeys(
            [argument.arg for argument in (arguments.vararg, arguments.kwarg) if argument is not None])
        for index, name in enumerate(positional + [a.arg for a in arguments.kwonlyargs]):
            given = [(_passed(call, name, index if index < len(positional) else None), caller)
                     for call, caller in calls]
            named = DATASET_NAME.match(name)
            found[name] = DATASET if named or given and all(
                value is not None and self.kind(value, caller) == DATASET for value, caller in given) else None
        return found

    @cached_property
    def owners(self) -> dict[int, Scope]:
        """``id(node)`` -> the function whose own node it is (not in this dict: the module's,
        or a class body's or lambda's): cheaper than :attr:`parents` for who needs scopes."""
        found: dict[int, Scope] = {}
        for function in self.index.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            if isinstance(function, _FUNCTIONS):
                found.update(dict.fromkeys(map(id, self.index.own_nodes(function)), function))
        return found

    @cached_property
    def calls_in_scopes(self) -> list[tuple[ast.Call, Scope]]:
        """Every call of the file with the function it is made in (the module for the
        others)."""
        owners, tree = self.owners, self.tree
        return [(node, owners.get(id(node), tree)) for node in self.index.nodes(ast.Call)]

    @cached_property
    def calls_by_name(self) -> dict[str, list[tuple[ast.Call, Scope]]]:
        """The calls of plain names in the file (``make_dataset(...)``) with their scope, by
        name."""
        found: dict[str, list[tuple[ast.Call, Scope]]] = {}
        for call, scope in self.calls_in_scopes:
            if isinstance(call.func, ast.Name):
                found.setdefault(call.func.id, []).append((call, scope))
        return found

    def nodes_in(self, scope: ast.AST) -> Iterator[ast.AST]:
        """The nodes that run in ``scope`` itself (not in its functions), in source order."""
        if isinstance(scope, _FUNCTIONS):
            return iter(self.index.own_nodes(scope))
        if isinstance(scope, ast.Lambda):
            return ast.walk(scope.body)
        return (node for statement in getattr(scope, "body", []) if not isinstance(statement, _SCOPES)
                for node in _walk_outside_scopes(statement))

    def statements(self, scope: Scope) -> Iterator[ast.AST]:
        """The nodes of ``scope`` that may assign or return: a function's own nodes, the
        statements of a module or class outside its functions."""
        if isinstance(scope, _FUNCTIONS):
            return iter(self.index.own_nodes(scope))
        if isinstance(scope, ast.Lambda):
            return iter(())
        return _statements_outside_scopes(scope)

    def _local_returns(self) -> dict[str, Kind]:
        """What each module-level function returns, if datasets (functions calling functions
        of the file: worked out again until nothing changes)."""
        for _ in range(4):
            self._names.clear()
            found: dict[str, Kind] = {name: kind for name, function in self.functions.items()
                                      if (kind := self._returned(function)) is not None}
            if found == self._returns:
                break
            self._returns = found
        self._names.clear()
        return self._returns

    def _returned(self, function: Function) -> Kind:
        kinds = [self.kind(node.value, function) for node in self.index.returns(function)
                 if node.value is not None]  # the returns among its own nodes (``statements``)
        if DATASET in kinds:
            return DATASET
        tuples = [kind for kind in kinds if isinstance(kind, tuple)]
        return tuples[0] if tuples else None

    def dataset_call_at(self, line: int, column: int, attribute: str) -> Optional[ast.Call]:
        """The call ``<dataset>.<attribute>(...)`` whose attribute name starts at ``line``,
        ``column`` (characters, as fissix counts them), when its receiver is a dataset."""
        call = self.call_at(line, column, attribute)
        if call is None or not isinstance(call.func, ast.Attribute):
            return None
        return call if self.is_dataset(call.func.value) or self._used_as_dataset(call) else None

    def _used_as_dataset(self, call: ast.Call) -> bool:
        """Does the result of the dataset method ``call`` go on to a method only ``tf.data``
        has (``x.batch(n).map(f).prefetch(1)``, ``.as_numpy_iterator()``), in its chain or
        through the name it is assigned to?"""
        node: ast.AST = call
        while True:
            parent = self.parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.value is node:
                if parent.attr in TF_DATA_RESULTS:
                    return True
                above = self.parents.get(id(parent))
                if parent.attr not in DATASET_METHODS or not isinstance(above, ast.Call):
                    return False
                node = above
            elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], ast.Name):
                name = parent.targets[0].id
                return any(isinstance(use, ast.Name) and use.id == name
                           and isinstance(self.parents.get(id(use)), ast.Attribute)
                           and getattr(self.parents[id(use)], "attr", None) in TF_DATA_RESULTS
                           for use in self.nodes_in(self.scope_of(parent)))
            else:
                return False

    def call_at(self, line: int, column: int, name: str) -> Optional[ast.Call]:
        """The call of ``name`` (``f(...)``, ``x.name(...)``) whose last name starts at
        ``line``, ``column`` (characters)."""
        return self._calls.get((line, column, name))

    @cached_property
    def _calls(self) -> dict[tuple[int, int, str], ast.Call]:
        source = SourcePositions(self.text)
        found = {}
        for node in self.index.nodes(ast.Call):
            function = node.func
            if isinstance(function, ast.Attribute) and function.end_lineno is not None \
                    and function.end_col_offset is not None:
                end = source.column(function.end_lineno, function.end_col_offset)
                found[function.end_lineno, end - len(function.attr), function.attr] = node
            elif isinstance(function, ast.Name):
                found[function.lineno, source.column(function.lineno, function.col_offset), function.id] = node
        return found


def _passed(call: ast.Call, keyword: str, index: Optional[int]) -> Optional[ast.AST]:
    """The value a call passes for a parameter (by keyword, or at ``index``), or None."""
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    if index is not None and index < len(call.args) and not any(
            isinstance(argument, ast.Starred) for argument in call.args[:index + 1]):
        return call.args[index]
    return None


def _bind(target: ast.AST, kind: Kind, found: dict[str, Kind]) -> None:
    if isinstance(target, ast.Name):
        found[target.id] = kind
    elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(kind, tuple) \
            and len(kind) == len(target.elts):
        for element, part in zip(target.elts, kind):
            if part is not None:
                _bind(element, part, found)


def _walk_outside_scopes(node: ast.AST) -> Iterator[ast.AST]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, _SCOPES):
            stack.extend(reversed(list(ast.iter_child_nodes(current))))


def _statements_outside_scopes(scope: ast.AST) -> Iterator[ast.stmt]:
    """The statements of a module or class body, nested ones too, not those of its functions
    and classes, in source order."""
    stack: list[ast.AST] = list(reversed(getattr(scope, "body", [])))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) or not isinstance(node, ast.stmt):
            continue
        yield node
        for name in ("handlers", "orelse", "finalbody", "body"):
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(reversed(value))


def _remote_functions(facts: AbstractSet[str]) -> dict[str, Kind]:
    """The repository's dataset functions (:data:`FUNCTION_FACT`): qualified name -> kind."""
    found: dict[str, Kind] = {}
    for fact in facts:
        if fact.startswith(FUNCTION_FACT):
            name, _, positions = fact[len(FUNCTION_FACT):].rpartition(":")
            found[name] = DATASET if positions == "*" else _positions_kind(positions)
    return found


def _positions_kind(positions: str) -> Kind:
    numbers = [int(number) for number in positions.split(",") if number.isdigit()]
    if not numbers:
        return None
    return tuple(DATASET if index in numbers else None for index in range(max(numbers) + 1))


def remote_name(target: str, package: tuple[str, ...], known: AbstractSet[str]) -> Optional[str]:
    """The repository function ``target`` (a dotted name as imported) is: as Python finds it,
    or the one function of that name in the modules of a package that re-exports it."""
    found = nearest_name(target, package, known)
    if found is not None:
        return found
    owner, _, name = target.rpartition(".")
    candidates = [qualified for qualified in known if qualified.endswith("." + name)
                  and owner and (qualified.startswith(owner + ".") or f".{owner}." in f".{qualified}")]
    return candidates[0] if len(candidates) == 1 else None


def file_datasets(text: str, path: str, facts: AbstractSet[str] = frozenset()) -> Optional[FileDatasets]:
    """The :class:`FileDatasets` of a file's source, or None when it is no Python 3."""
    tree = module_ast(text)
    if tree is None:
        return None
    return FileDatasets(tree, text, path, facts)
