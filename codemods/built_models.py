"""Is this receiver an Estimator or a Keras model the repository builds? A conservative answer.

``x.train(...)``, ``x.fit(...)`` and ``x.compile(...)`` name no API: a user class, a
scikit-learn model or a parameter of unknown type has the same methods. The rules that add
hooks, callbacks or the NPU session to them (NPU023, NPU027, NPU041) act only on a receiver
*shown* to be a model: a name or attribute bound, in its scope (``self.<attr>``: in any method
of the class), to

- a call of an Estimator class (:data:`ESTIMATORS`) or maker (``model_to_estimator``,
  :data:`ESTIMATOR_MAKERS`), or of a Keras model maker
  (:data:`KERAS_MODELS`: ``tf.keras.Model(...)``, ``Sequential(...)``, ``load_model(...)``),
- a call of a class of the repository that subclasses one of them, in any file (the
  ``class:`` facts of :mod:`classes`), spelled through the packages that re-export it too
  (:mod:`reexports`),
- a call of a function of the repository that returns one of these (``model = build_model()``,
  ``self.make_estimator()``): the ``model-function:`` facts of :func:`model_facts`, gathered
  from each file with ``ast`` before any rewrite,
  ``model-function:<module>.<function>=<kind>`` (methods: ``<module>.<Class>.<method>``) when
  each ``return`` gives a model of that kind, ``=@<dotted name>`` when it returns what an
  imported class or function makes, both joined by ``|`` when its returns give either
  (``model = KM.Model(...)``, then ``model = ParallelModel(model, gpus)`` of another module:
  Mask R-CNN's builder, ``=@mrcnn.parallel_model.ParallelModel|keras``: a model of one kind when
  each resolves to it); ``model-function:<module>.<function>#<i>=<kind>`` when
  each ``return`` gives a tuple whose element ``i`` is such a model (``return model,
  prediction_model``: EfficientDet's builder), read at ``model, pred = build()`` and
  ``build()[0]``.

Only TensorFlow's Keras (``tf.keras``) counts as Keras: a standalone ``keras`` model runs in a
session the NPU helpers do not set.
"""

from __future__ import annotations

import ast
from functools import cached_property, lru_cache
from typing import AbstractSet, Iterable, Optional, Sequence, Union

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .ast_handover import file_imported_names
from .classes import class_facts, repository_classes
from .estimators import ESTIMATOR_MAKERS, ESTIMATORS
from .modules import (
    KnownNames,
    ModuleIndex,
    module_ast,
    module_index,
)
from .names import (
    TF,
    ast_dotted_name,
    canonical,
    is_call_trailer,
    module_parts,
    prefix_name,
    public_name,
    spelled_name,
)
from .nodes import enclosing_scope
from .reexports import reexports
from .rule import FileContext
from .scopes import assigned_elements, assigned_values
from .walk import scope_statements

#: The kinds of model :meth:`BuiltModels.receiver_kind` tells apart.
ESTIMATOR = "estimator"
KERAS = "keras"
#: The Keras model classes a class of the repository may subclass.
KERAS_MODEL_CLASSES = frozenset({
    "tensorflow.keras.Model", "tensorflow.keras.Sequential", "tensorflow.keras.models.Model",
    "tensorflow.keras.models.Sequential",
})
#: Calls that give a Keras model: the classes, and the functions that load, copy or replicate
#: one (``multi_gpu_model(model, gpus=2)``: a model over towers, trained in the same session).
KERAS_MODELS = KERAS_MODEL_CLASSES | frozenset({
    f"tensorflow.keras.models.{name}"
    for name in ("load_model", "model_from_json", "model_from_yaml", "clone_model")
}) | {"tensorflow.keras.utils.multi_gpu_model"}
#: The contrib estimators built on ``tf.estimator.Estimator`` (their ``train`` takes hooks);
#: ``tf.contrib.learn``'s, which ``fit`` with monitors, are not among them.
CONTRIB_ESTIMATORS = frozenset({
    *(f"tensorflow.contrib.estimator.{name}" for name in (
        "DNNEstimator", "LinearEstimator", "DNNLinearCombinedEstimator", "RNNClassifier",
        "RNNEstimator", "DNNClassifierWithLayerAnnotations", "DNNRegressorWithLayerAnnotations")),
    *(f"tensorflow.contrib.boosted_trees.estimator_batch.estimator.{name}" for name in (
        "CoreGradientBoostedDecisionTreeEstimator", "CoreGradientBoostedDecisionTreeRanker")),
})
FUNCTION = "model-function:"
#: Between the kinds a function's returns give, some through an import (``@<target>|keras``).
EITHER = "|"
#: Between a function's name and the position of a tuple element it returns (``build#0``).
ELEMENT = "#"
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def api_kind(qualified: Optional[str]) -> Optional[str]:
    """``estimator``/``keras`` for a call of the API ``qualified`` (canonical name), else None."""
    if qualified in ESTIMATORS or qualified in ESTIMATOR_MAKERS or qualified in CONTRIB_ESTIMATORS:
        return ESTIMATOR
    return KERAS if qualified in KERAS_MODELS else None


# --- Facts, from each file's ``ast`` -------------------------------------------------------


@lru_cache(maxsize=4)
def model_facts(path: str, text: str) -> frozenset[str]:
    """The ``model-function:`` facts of one file (see the module docstring), and its
    ``class:`` facts (:func:`classes.class_facts`, which the function facts build on);
    computed once per text, whichever analysis hooks ask. A file that defines no class or
    function has none (and is not parsed)."""
    tree = module_ast(text) if "class " in text or "def " in text else None
    if tree is None:
        return frozenset()
    module = ".".join(module_parts(path))
    classes = class_facts(path, text)
    kinds = _class_kinds(classes, module)
    index = module_index(tree)
    imports = index.imported_names(path)
    facts = set(classes)
    for owner, function in _functions(tree):
        name = f"{owner}.{function.name}" if owner else function.name
        kind = _returned_kind(function, index, kinds, imports, owner)
        if kind is not None:
            facts.add(f"{FUNCTION}{module}.{name}={kind}")
        for position, element in _returned_elements(function, index, kinds, imports, owner).items():
            facts.add(f"{FUNCTION}{module}.{name}{ELEMENT}{position}={element}")
    return frozenset(facts)


def _class_kinds(classes: AbstractSet[str], module: str) -> dict[str, str]:
    """The kind of each model class of the file (its ``class:`` facts ``classes``), by its
    name there (``Net``)."""
    return {name[len(module) + 1:]: kind for name, kind in ModelFacts(classes).classes.items()
            if name.startswith(module + ".")}


def _functions(tree: ast.Module) -> Iterable[tuple[Optional[str], _Function]]:
    """(class name or None, function) for the module's functions and its classes' methods."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node.name, item


def _returned_kind(function: _Function, index: ModuleIndex, kinds: dict[str, str],
                   imports: dict[str, str], owner: Optional[str]) -> Optional[str]:
    """The one kind every ``return`` of ``function`` (of the module of ``index``) gives, or None."""
    nodes = index.own_nodes(function)
    returns = index.returns(function)
    found: set[Optional[str]] = set()
    # Names last: each costs a look at every node, and a return of another kind often settles
    # the answer (None); the order of the returns does not change it (a set of kinds).
    for node in sorted(returns, key=_names_last):
        values = _assigned(node.value.id, nodes) if isinstance(node.value, ast.Name) else [node.value]
        found.update(_made_kind(value, kinds, imports, owner) for value in values)
        if _one_kind(found) is None:
            return None  # the answer whatever the other returns give
    return _one_kind(found)


def _one_kind(kinds: AbstractSet[Optional[str]]) -> Optional[str]:
    """The kind of model values of ``kinds`` make together: their one kind, or the kinds
    joined by :data:`EITHER` when some are what an import makes (``@<target>``, resolved by
    :meth:`ModelFacts.kind`); None when there are none, one is no model or two kinds differ."""
    if not kinds or None in kinds:
        return None
    if len({kind for kind in kinds if not kind.startswith("@")}) > 1:  # type: ignore[union-attr]
        return None
    return EITHER.join(sorted(kinds))  # type: ignore[arg-type]


def _returned_elements(function: _Function, index: ModuleIndex, kinds: dict[str, str],
                       imports: dict[str, str], owner: Optional[str]) -> dict[int, str]:
    """Position -> the one kind of model that element of the tuple every ``return`` of
    ``function`` gives (``return model, prediction_model``); empty when a return gives no
    tuple, or tuples of different lengths."""
    returns = index.returns(function)
    values = [node.value for node in returns]
    if not values or not all(isinstance(value, ast.Tuple) for value in values):
        return {}
    lengths = {len(value.elts) for value in values}  # type: ignore[union-attr]
    if len(lengths) != 1:
        return {}
    nodes = index.own_nodes(function)
    found = {}
    for position in range(lengths.pop()):
        elements = [value.elts[position] for value in values]  # type: ignore[union-attr]
        made = {_made_kind(made, kinds, imports, owner) for element in elements
                for made in (_assigned(element.id, nodes) if isinstance(element, ast.Name) else [element])}
        kind = _one_kind(made)
        if kind is not None:
            found[position] = kind
    return found


def _names_last(node: ast.Return) -> bool:
    return isinstance(node.value, ast.Name)


def _assigned(name: str, nodes: list[ast.AST]) -> list[Optional[ast.expr]]:
    """The values ``name = value`` binds among ``nodes``; None for any other binding. (One
    pass: ``nodes`` come from ``ast.parse``, whose node types are exact.)"""
    values: list[Optional[ast.expr]] = []
    targets = set()
    stores = []
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if node.id == name and type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                stores.append(node)
        elif kind is ast.Assign and len(node.targets) == 1:  # type: ignore[attr-defined]
            target = node.targets[0]  # type: ignore[attr-defined]
            if type(target) is ast.Name and target.id == name:
                values.append(node.value)  # type: ignore[attr-defined]
                targets.add(id(target))
    values += [None for node in stores if id(node) not in targets]
    return values or [None]


def _made_kind(value: Optional[ast.expr], kinds: dict[str, str], imports: dict[str, str],
               owner: Optional[str]) -> Optional[str]:
    """The kind of model the call ``value`` makes (``@<dotted>``: what that import makes)."""
    callee = ast_dotted_name(value.func) if isinstance(value, ast.Call) else None
    if callee is None:
        return None
    if callee in kinds:
        return kinds[callee]
    head = callee.partition(".")[0]
    if head in ("self", "cls") and owner is not None:
        return None  # another method: not followed in the facts
    target = _imported(callee, imports)
    if target is None:
        return None
    kind = api_kind(_public(target))
    return kind if kind is not None or _is_library(target) else f"@{target}"


def _imported(spelled: str, imports: dict[str, str]) -> Optional[str]:
    head, _, rest = spelled.partition(".")
    return imports[head] + (f".{rest}" if rest else "") if head in imports else None


def _public(target: str) -> str:
    return canonical(public_name(target)) if target.split(".")[0] == TF else target


def _is_library(target: str) -> bool:
    """A name of TensorFlow, Keras or the NPU bridge: not a class of the repository."""
    return target.split(".")[0] in (TF, "keras", "npu_bridge", "tensorflow_estimator")


class ModelFacts:
    """The model facts of a repository: which of its classes and functions make models."""

    def __init__(self, facts: AbstractSet[str]) -> None:
        self.functions: dict[str, str] = {}
        #: Function -> position -> the kind of model that element of its returned tuple is.
        self.elements: dict[str, dict[int, str]] = {}
        for fact in facts:
            if fact.startswith(FUNCTION):
                name, _, kind = fact[len(FUNCTION):].partition("=")
                function, element, position = name.partition(ELEMENT)
                if element:
                    self.elements.setdefault(function, {})[int(position)] = kind
                else:
                    self.functions[name] = kind
        subclasses = repository_classes(frozenset(facts)).subclasses(ESTIMATORS | KERAS_MODEL_CLASSES)
        #: The repository's model classes (module-qualified) -> their kind.
        self.classes = {name: ESTIMATOR if found.api_base in ESTIMATORS else KERAS
                        for name, found in subclasses.items()}
        self._known_classes, self._known_functions = (KnownNames(self.classes),
                                                      KnownNames({**self.functions, **self.elements}))
        self._reexports = reexports(frozenset(facts))

    def kind(self, target: str, path: str, visiting: frozenset[str] = frozenset(),
             element: Optional[int] = None, reexported: bool = False) -> Optional[str]:
        """The kind of model that calling ``target`` (a dotted name as the file at ``path``
        imports it, or module-qualified) makes, or None; with ``element``, the kind of that
        element of the tuple the call returns. ``reexported``: a function is looked up through
        the packages' re-exports too (``from lib.models import Net``), as a class always is:
        what the E signal, NPU061's entries and NPU041 ask (``tf_model_idioms``,
        :class:`BuiltModels` with ``reexported``). NPU067 does not: the builder a package
        re-exports gets its broadcast in its own file, and the caller has no site of its own
        (``is_trained_maker``)."""
        package = module_parts(path)[:-1]
        found = self._reexports.resolve(target, package, self._known_classes.nearest)  # tfgan.estimator.X
        if found is not None:
            return self.classes[found] if element is None else None
        name = self._reexports.resolve(target, package, self._known_functions.nearest) if reexported \
            else self._known_functions.nearest(target, package)
        if name is None or name in visiting:
            return None
        kind = self.functions.get(name) if element is None else self.elements.get(name, {}).get(element)
        if kind is None:
            return None
        kinds = {self._resolved(part, name, visiting, reexported) for part in kind.split(EITHER)}
        return kinds.pop() if len(kinds) == 1 else None

    def _resolved(self, kind: str, function: str, visiting: frozenset[str], reexported: bool) -> Optional[str]:
        """``kind`` as the fact of ``function`` gives it, with what an import makes
        (``@<target>``) looked up from the function's module."""
        if not kind.startswith("@"):
            return kind
        home = "/".join(function.split(".")[:-1]) + ".py"
        return self.kind(kind[1:], home, visiting | {function}, reexported=reexported)

    def element_kinds(self, target: str, path: str) -> set[Optional[str]]:
        """The kinds of model of the elements of the tuple that calling ``target`` (as
        :meth:`kind` reads it) returns; empty when it returns none."""
        package = module_parts(path)[:-1]
        name = self._reexports.resolve(target, package, self._known_functions.nearest)
        return {self.kind(target, path, element=position, reexported=True) for position in self.elements.get(name or "", ())}


# --- Receivers, in the file being rewritten ------------------------------------------------


class BuiltModels:
    """Which receivers of a file are models it builds: ``ctx.analysis(BuiltModels)``."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.module = ".".join(module_parts(ctx.path))
        self._npu = ctx.names("npu_bridge")

    @cached_property
    def facts(self) -> ModelFacts:
        """The repository's facts, and this file's own (a file processed without the
        repository's analysis still knows its own classes and functions)."""
        return ModelFacts(self.ctx.facts | model_facts(self.ctx.path, self.ctx.original))

    @cached_property
    def imports(self) -> dict[str, str]:
        """Local name -> the dotted name the file imports it as (read only when a callee is
        not TensorFlow's: most models are ``tf.keras`` or Estimator calls)."""
        return file_imported_names(self.ctx)  # the analysis's reading, or the file's ast

    def receiver_kind(self, parts: Sequence[pytree.Base]) -> Optional[str]:
        """``estimator``/``keras`` when the receiver spelled by power children ``parts`` (the
        ones before ``.train``) is a model the file builds, else None."""
        if not parts:
            return None
        if len(parts) > 1 and (is_call_trailer(parts[-1]) or _element(parts) is not None):
            return self._called_kind(parts, None, True)  # Estimator(...).train(), build()[0].fit()
        name = spelled_name(parts)
        values = bound_elements(parts[0], name) if name is not None else None
        kinds = {self.value_kind(value, position, reexported=True) for value, position in values or ()}
        return kinds.pop() if len(kinds) == 1 and None not in kinds else None

    def value_kind(self, value: pytree.Base, element: Optional[int] = None,
                   reexported: bool = False) -> Optional[str]:
        """The kind of model the expression ``value`` is a call of; with ``element``, the kind
        of that element of the tuple it is. A call's element taken by a constant index
        (``build()[0]``) counts as that element. ``reexported``: see :meth:`ModelFacts.kind`
        (the receivers of :meth:`receiver_kind` are; NPU067's own builds are not)."""
        return self._called_kind(value.children, element, reexported) if value.type == syms.power else None

    def _called_kind(self, parts: Sequence[pytree.Base], element: Optional[int],
                     reexported: bool) -> Optional[str]:
        """:meth:`value_kind` of the expression spelled by power children ``parts``."""
        position = _element(parts)
        if position is not None and element is None:
            parts, element = parts[:-1], position  # build()[0]: the call's element 0
        if len(parts) < 2 or not is_call_trailer(parts[-1]):
            return None
        return self.call_kind(parts[:-1], enclosing_scope(parts[0]), element, reexported)

    def call_kind(self, callee: Sequence[pytree.Base], scope: pytree.Node,
                  element: Optional[int] = None, reexported: bool = False) -> Optional[str]:
        """The kind of model that calling the expression spelled by ``callee`` gives (with
        ``element``: that element of the tuple the call gives)."""
        spelled = spelled_name(callee)
        if spelled is None:  # ``contrib.tpu().TPUEstimator``: through a module accessor function
            through = spelled_name(callee, through_calls=True)
            return api_kind(self.ctx.tf.qualify(through)) if through is not None and element is None else None
        kind = api_kind(self.ctx.tf.qualify(spelled) or self._npu.qualify(spelled))
        if kind is not None:
            return kind if element is None else None
        head, _, rest = spelled.partition(".")
        if head in ("self", "cls") and "." not in rest:
            owner = _class_node(scope)
            method = f"{self.module}.{owner.children[1].value}.{rest}" if owner is not None else None
            return self.facts.kind(method, self.ctx.path, element=element, reexported=reexported) if method else None
        if head in self.imports:
            return self.facts.kind(self.imports[head] + (f".{rest}" if rest else ""), self.ctx.path,
                                   element=element, reexported=reexported)
        return self.facts.kind(f"{self.module}.{spelled}", self.ctx.path, element=element,
                               reexported=reexported) if not rest else None


def _element(parts: Sequence[pytree.Base]) -> Optional[int]:
    """``i`` when the power children ``parts`` end with a call then ``[i]`` (a constant
    index: ``build()[0]``), else None."""
    if len(parts) < 3 or not is_call_trailer(parts[-2]):
        return None
    last = parts[-1]
    if last.type != syms.trailer or len(last.children) != 3 or last.children[0].type != token.LSQB:
        return None
    index = last.children[1]
    return int(index.value) if index.type == token.NUMBER and str(index.value).isdigit() else None


def bound_elements(node: pytree.Base, name: str) -> Optional[list[tuple[pytree.Base, Optional[int]]]]:
    """:func:`bound_values` with the position each value is unpacked at (None: the whole
    value): a plain name as :func:`scopes.assigned_elements` answers (``model, pred = build()``
    gives ``model`` element 0 of ``build()``)."""
    if "." not in name:
        return assigned_elements(node, name)
    values = bound_values(node, name)
    return [(value, None) for value in values] if values is not None else None


def bound_values(node: pytree.Base, name: str) -> Optional[list[pytree.Base]]:
    """What the name or attribute ``name`` (``model``, ``self.model``, ``trainer.model``) read
    at ``node`` may hold: the values of its ``name = value`` assignments, or None when that is
    not known from here. A plain name as :func:`scopes.assigned_values` answers (its scope's
    assignments; None when it is also bound otherwise: a parameter, a loop target...); an
    attribute ``self.x`` the assignments ``self.x = value`` in every method of the class, any
    other attribute those of its own scope (None when there are none)."""
    if "." not in name:
        return assigned_values(node, name)
    scope = enclosing_scope(node)
    owner = _class_node(scope) if name.partition(".")[0] in ("self", "cls") else None
    return _attribute_values(owner or scope, name, nested=owner is not None) or None


def _attribute_values(scope: pytree.Node, name: str, nested: bool) -> list[pytree.Base]:
    """The value of each ``<name> = value`` in ``scope`` (its nested functions and classes
    too when ``nested``)."""
    found = []
    scopes = [scope]
    while scopes:
        current = scopes.pop()
        for node in scope_statements(current):
            if node is not current and node.type in (syms.funcdef, syms.classdef):
                if nested:
                    scopes.append(node)
            elif node.type == syms.expr_stmt and len(node.children) == 3 \
                    and node.children[1].type == token.EQUAL \
                    and _target(node.children[0]) == name:
                found.append(node.children[2])
    return found


def _target(target: pytree.Base) -> Optional[str]:
    if target.type == token.NAME:
        return str(target.value)
    return prefix_name(target, len(target.children)) if target.type == syms.power else None


def _class_node(scope: pytree.Node) -> Optional[pytree.Node]:
    """The class whose method ``scope`` is (a method's own scope), or None."""
    if scope.type != syms.funcdef:
        return None
    parent = scope.parent
    while parent is not None and parent.type not in (syms.classdef, syms.funcdef, syms.file_input):
        parent = parent.parent
    return parent if parent is not None and parent.type == syms.classdef else None
