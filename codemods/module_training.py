"""Does a module train when it is run: its module-level code, read with ``ast``.

NPU061 takes a TF 2.x file with no ``if __name__ == "__main__":`` block for an entry script when
nothing in the repository imports it and its *module-level code* trains (``codemods/tf_programs``):
the statements outside ``def`` and ``class`` bodies (those inside module-level ``if``/``for``/
``with``/``try`` blocks and lambdas count) call a training API directly (Keras ``fit``,
``fit_generator``, ``train_on_batch``, ``compile``; an optimizer's ``apply_gradients`` or
``minimize``; ``tf.GradientTape``; a custom ``train_step``), or call a function or method of the
same file that does, or pass one to a call (``strategy.run(train_step, ...)``), transitively
within the file (functions defined in module-level blocks count). A function trains by the calls
of its own body: a function or class it defines trains only if it calls or passes it, so a class
factory whose class overrides ``apply_gradients`` (``SGDClipped = make_clipped(SGD)``) trains
nothing when called (``spec/rules-tf2.md`` NPU061: defining a class is no training). Horovod's TF 2.x benchmarks are
the two shapes: a module-level loop timing a ``@tf.function`` step with a ``GradientTape``, and
a module-level ``model.fit(...)``. A module that only defines functions never trains when run.

A training method called on an imported name is another library's (``re.compile``,
``optimize.minimize``): not training; unless the file stores its own value on that name and
calls it there (DeepLearningZeroToAll's ``tf.model = tf.keras.Sequential(); tf.model.fit(...)``).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import AbstractSet, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence, Union

from .modules import ModuleIndex, child_fields, module_index
from .text_search import AnyOf

#: Methods that train a model or apply an optimizer step, called on a value of the file.
TRAINING_METHODS = frozenset({"fit", "fit_generator", "train_on_batch", "compile",
                              "apply_gradients", "minimize"})
#: Callables that train whatever they are called on (``tf.GradientTape()``, ``self.train_step``).
TRAINING_CALLABLES = frozenset({"GradientTape", "train_step"})

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: ``match`` blocks (3.10): statements ``_definitions`` does not walk to.
_CASES = tuple(getattr(ast, name) for name in ("match_case",) if hasattr(ast, name))


#: Every call that trains ends in one of these names called (:class:`_Reader`): a text without
#: one has no module-level training, whatever it calls.
#: (``\b(?:fit|compile|...)\s*\(``, one name at a time: see ``text_search``.)
_MAY_TRAIN = AnyOf(*(rf"\b{name}\s*\(" for name in sorted(TRAINING_METHODS | TRAINING_CALLABLES)))


@lru_cache(maxsize=2)
def may_train_when_run(text: str) -> bool:
    """A cheap first look for :func:`trains_when_run`: False when the module cannot train
    (kept for the last texts: the import graph's fact and the training calls' ask of each file)."""
    return _MAY_TRAIN.found(text)


def trains_when_run(tree: ast.Module, methods: AbstractSet[str] = TRAINING_METHODS) -> bool:
    """Does the module-level code of ``tree`` train (see the module's docstring; ``methods``: the
    training methods, all of :data:`TRAINING_METHODS` unless a caller reads ``compile`` as none)?
    A notebook exported as a script runs cells through IPython's magics (``get_ipython().run_cell_magic(
    'time', '', 'train(dataset, EPOCHS)')``): the code those strings hold is module-level code."""
    reader = _Reader(tree, methods)
    calls = list(_calls(tree.body))
    return reader.trains([*calls, *_magic_calls(calls)], reader.module)


#: IPython's calls that run code given as a string, by the position of that string: nbconvert
#: writes ``%time train(ds)`` as ``get_ipython().run_line_magic('time', 'train(ds)')`` (older:
#: ``get_ipython().magic('time train(ds)')``) and a ``%%time`` cell as ``run_cell_magic``.
_MAGICS = {"run_cell_magic": 2, "run_line_magic": 1, "magic": 0}


def _magic_calls(calls: Iterable[ast.Call]) -> Iterator[ast.Call]:
    """The module-level calls of the code that ``get_ipython()`` magics among ``calls`` run."""
    for call in calls:
        func = call.func
        position = _MAGICS.get(func.attr) if isinstance(func, ast.Attribute) else None
        if position is None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Call) \
                or not isinstance(func.value.func, ast.Name) or func.value.func.id != "get_ipython" \
                or len(call.args) <= position:
            continue
        code = call.args[position]
        if not isinstance(code, ast.Constant) or not isinstance(code.value, str):
            continue
        text = code.value.partition(" ")[2] if func.attr == "magic" else code.value
        try:
            cell = ast.parse(text)
        except (SyntaxError, ValueError):
            continue  # a magic's own arguments (``%matplotlib inline``), not Python
        yield from _calls(cell.body)


def training_definitions(tree: ast.Module) -> frozenset[str]:
    """The names of the module-level functions and classes of ``tree`` that train when they are
    called (a function) or used (a class with a method that trains), by the same reading as
    :func:`trains_when_run`: what another module that calls them reaches (``training_calls``).
    A class factory (a function whose body defines a class with a method that trains) is used
    like its class: what it returns trains, though calling it trains nothing."""
    reader = _Reader(tree)
    found = set()
    for node in reader.definitions:
        if isinstance(node, ast.ClassDef):
            methods = _methods(node)
        else:
            inner = reader.inner(node)
            methods = [node, *(method for name in inner.methods for method in inner.methods[name]
                               if method not in reader.module.methods.get(name, ()))]
        if reader.any_trains(methods):
            found.add(node.name)
    return frozenset(found)


class _Scope(NamedTuple):
    """The functions a body's calls can reach by name, and the methods by attribute name."""

    functions: Mapping[str, Sequence[_Function]]
    methods: Mapping[str, Sequence[_Function]]


class _Reader:
    """The module's functions and methods by name, and which of them train (worked out once).

    A function trains when the calls of its own body do, not the bodies of the functions and
    classes it defines: those train only when it calls them (or passes them to a call), by
    name in its scope. A class factory (``def make(cls): class Clipped(cls): def
    apply_gradients(...)``) defines a method that trains and calls none: calling it at module
    level is no training (``spec/rules-tf2.md`` NPU061: defining a class trains nothing)."""

    def __init__(self, tree: ast.Module, methods: AbstractSet[str] = TRAINING_METHODS) -> None:
        self.methods = methods
        self.imported = _imported(tree)
        self.stored = _stored_attributes(tree, self.imported)
        self.index = module_index(tree)  # built by ``_stored_attributes``: its own nodes are read
        #: id of each function or method -> the scope its body is read in (where it is defined)
        self.outer: dict[int, _Scope] = {}
        self.definitions = list(_definitions(tree.body))  # the module's
        self.module = self.scope(self.definitions, None)
        self.known: dict[int, bool] = {}
        self._inner: dict[int, _Scope] = {}
        # ``_definitions`` does not look into ``case`` blocks, which own nodes hold
        self._cases = bool(self.index.nodes(*_CASES)) if _CASES else False

    def inner(self, function: _Function) -> _Scope:
        """The scope of ``function``'s body (:meth:`scope` in the scope it is defined in),
        worked out once: ``training_definitions`` and :meth:`any_trains` both read it."""
        found = self._inner.get(id(function))
        if found is None:
            found = self._inner[id(function)] = self.scope(self._definitions(function), self.outer[id(function)])
        return found

    def _definitions(self, function: _Function) -> list[Union[_Function, ast.ClassDef]]:
        """:func:`_definitions` of ``function``'s body, from the index's own nodes of it (the
        same nodes, in the same order) when the module has no ``match`` statement."""
        if self._cases:
            return list(_definitions(function.body))
        return [node for node in self.index.own_nodes(function) if isinstance(node, _DEFINITIONS)]

    def scope(self, definitions: Sequence[Union[_Function, ast.ClassDef]], outer: Optional[_Scope]) -> _Scope:
        """The scope of a body defining ``definitions`` (``_definitions``: the module's, or a
        function's inside ``outer``): its own functions shadow the outer ones of their name,
        its classes' methods add to theirs. A body that defines nothing reads ``outer``."""
        if outer is not None and not definitions:
            return outer  # what would be made is a copy of it (its functions all known)
        functions: dict[str, Sequence[_Function]] = {}
        methods: dict[str, Sequence[_Function]] = {}
        for node in definitions:
            if isinstance(node, ast.ClassDef):
                for method in _methods(node):
                    methods[method.name] = [*methods.get(method.name, ()), method]
            else:
                functions[node.name] = [*functions.get(node.name, ()), node]
        if outer is not None:
            functions = {**outer.functions, **functions}
            methods = {name: [*outer.methods.get(name, ()), *methods.get(name, ())]
                       for name in dict.fromkeys([*outer.methods, *methods])}  # in order: no hash seed
        made = _Scope(functions, methods)
        for defined in (*functions.values(), *methods.values()):
            for function in defined:
                self.outer.setdefault(id(function), made)
        return made

    def trains(self, calls: Iterable[ast.Call], scope: _Scope) -> bool:
        return any(self._call_trains(call, scope) for call in calls)

    def _call_trains(self, call: ast.Call, scope: _Scope) -> bool:
        """A training call, a call of a function of the file that trains, or one that is given
        such a function (``strategy.run(train_step, ...)``, ``timeit.timeit(step)``)."""
        passed = [*call.args, *(keyword.value for keyword in call.keywords)]
        if any(isinstance(value, ast.Name) and self.any_trains(scope.functions.get(value.id, ()))
               for value in passed):
            return True
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in TRAINING_CALLABLES or self.any_trains(scope.functions.get(func.id, ()))
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in TRAINING_CALLABLES:
            return True
        if _root(func.value) in self.imported and not _stored_on(func.value, self.stored):
            return False
        return func.attr in self.methods or self.any_trains(scope.methods.get(func.attr, ()))

    def any_trains(self, functions: Iterable[_Function]) -> bool:
        """Does one of ``functions`` train when called: the calls of its own body do?"""
        for function in functions:
            if id(function) not in self.known:
                self.known[id(function)] = False  # a recursive call does not train by itself
                inner = self.inner(function)
                self.known[id(function)] = self.trains(_own_calls(self.index, function), inner)
            if self.known[id(function)]:
                return True
        return False


def _calls(body: Sequence[ast.AST]) -> Iterator[ast.Call]:
    """The calls ``body`` (module-level code, a function's, or a lambda) makes itself: not inside the
    bodies of the functions and classes it defines."""
    stack: list[ast.AST] = [node for node in reversed(body) if not isinstance(node, _DEFINITIONS)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            yield node
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in reversed(value)
                             if isinstance(item, ast.AST) and not isinstance(item, _DEFINITIONS))
            elif isinstance(value, ast.AST) and not isinstance(value, _DEFINITIONS):
                stack.append(value)


def _own_calls(index: ModuleIndex, function: _Function) -> Iterator[ast.Call]:
    """:func:`_calls` of ``function``'s body, from the index's own nodes of it (no walk of its
    own): those are the same nodes in the same order, but a lambda's, which ``_calls`` walks."""
    for node in index.own_nodes(function):
        if isinstance(node, ast.Call):
            yield node
        elif isinstance(node, ast.Lambda):
            yield from _calls([node])


def _definitions(body: list[ast.stmt]) -> Iterator[Union[_Function, ast.ClassDef]]:
    """The functions and classes ``body`` defines (also inside its ``if``, ``with``, ``try``
    blocks: ``with strategy.scope(): def train_step(...)``)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFINITIONS):
            yield node
            continue
        stack.extend(reversed([child for child in ast.iter_child_nodes(node)
                               if isinstance(child, (ast.stmt, ast.excepthandler))]))


def _methods(node: ast.ClassDef) -> list[_Function]:
    """The methods a class body defines."""
    return [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _imported(tree: ast.Module) -> frozenset[str]:
    """The names the module's imports bind (its import statements from the analyses' index of
    the tree, which :func:`_stored_attributes` reads too: no walk of its own)."""
    index = module_index(tree)
    names: set[str] = set()
    imports: list[Union[ast.Import, ast.ImportFrom]] = [*index.nodes(ast.Import), *index.nodes(ast.ImportFrom)]
    for node in imports:
        names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(names)


def _stored_attributes(tree: ast.Module, imported: frozenset[str]) -> frozenset[str]:
    """The attributes of imported names the module assigns (``tf.model`` of ``tf.model =
    tf.keras.Sequential()``), dotted: values of the file kept on a library's module."""
    found: set[str] = set()
    index = module_index(tree)  # the analysis's index of the module: no walk of its own
    assignments: list[Union[ast.Assign, ast.AnnAssign]] = [*index.nodes(ast.Assign), *index.nodes(ast.AnnAssign)]
    for node in assignments:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and _root(target) in imported:
                name = _dotted(target)
                if name:
                    found.add(name)
    return frozenset(found)


def _stored_on(receiver: ast.expr, stored: frozenset[str]) -> bool:
    """Is ``receiver`` (``tf.model``, ``tf.model.layers``) one of the ``stored`` attributes or
    reached through one?"""
    if not stored:
        return False
    name = _dotted(receiver)
    return bool(name) and any(name == item or name.startswith(item + ".") for item in stored)


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` of a chain of attributes on a name, or ``""``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _root(node: ast.expr) -> str:
    """The name a dotted receiver starts with (``tf`` of ``tf.keras.Model``), or ``""``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""
