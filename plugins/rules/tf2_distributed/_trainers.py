"""Models handed to a trainer: ``trainer = Trainer(model, optimizer)`` or
``trainer.compile(model=model)``, then ``trainer.fit(...)`` (TensorFlowTTS's training scripts,
a package's custom trainer). The entry builds the model, a class of the repository trains it:
NPU067's site is still the model's construction in the entry (spec ``rules-tf2.md``: broadcast
where the variables provably exist, report lazily built models at their construction).

A :data:`TRAINED_PARAMETER` fact of the file that defines it says which parameter a function or
method trains (:func:`parameter_facts`): then the model is trained as if the entry trained it.
Where no fact says so (the method hands the parameter on through ``super()`` or a setter, its
variables through another method), the model may still be trained: reported, never silent.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import AbstractSet, Iterator, Optional, Sequence

from npu_codemod.api import Base, symbols, tokens
from npu_codemod.api._toolkit import (
    is_call_trailer,
    module_ast,
    module_index,
    module_parts,
    nearest_name,
    reexports,
    spelled_name,
    tree_text,
)

from ._trained import qualified, trains

#: ``trained-parameter:pkg.trainer.Trainer.__init__=0:model``: the function or method trains
#: its parameter ``model``, the first after ``self`` when passed by position.
TRAINED_PARAMETER = "trained-parameter:"


@dataclass(frozen=True)
class Trainer:
    """The call a model is handed to (``Trainer``, ``trainer.compile``), and whether a fact of
    the repository shows that it trains the model (else it may)."""

    callee: str
    proven: bool


@lru_cache(maxsize=64)
def parameter_facts(path: str, text: str) -> frozenset[str]:
    """A :data:`TRAINED_PARAMETER` fact for each parameter that a module-level function of the
    file at ``path`` trains, or that a method of one of its classes trains or keeps on ``self``
    (``self.model = model``) for a method of the class to train (``self.model.fit``, a tape over
    ``self.model.trainable_variables``)."""
    tree = module_ast(text) if "def " in text and ("trainable_" in text or "fit" in text) else None
    if tree is None:
        return frozenset()
    module = ".".join(module_parts(path))
    lines = text.splitlines(keepends=True)
    found: set[str] = set()
    assignments: list[ast.Assign] = module_index(tree).nodes(ast.Assign)  # the analyses' one walk
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = _source(lines, node)
            found |= {f"{TRAINED_PARAMETER}{module}.{node.name}={index}:{name}"
                      for index, name in enumerate(_names(node)) if trains(name, body)}
        elif isinstance(node, ast.ClassDef):
            found |= _method_facts(f"{module}.{node.name}", node, _source(lines, node), lines, assignments)
    return frozenset(found)


def _method_facts(cls: str, node: ast.ClassDef, text: str, lines: list[str],
                  assignments: Sequence[ast.Assign]) -> set[str]:
    found = set()
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        body = _source(lines, method)
        kept = _kept_on_self(method, assignments)
        for index, name in enumerate(_names(method)[1:]):
            if trains(name, body) or any(trains(attribute, text) for attribute in kept.get(name, ())):
                found.add(f"{TRAINED_PARAMETER}{cls}.{method.name}={index}:{name}")
    return found


def _kept_on_self(method: ast.stmt, assignments: Sequence[ast.Assign]) -> dict[str, list[str]]:
    """``{"model": ["self.model"]}`` for each ``self.<attribute> = <parameter>`` of ``method``
    (in functions nested in it too), from the module's ``assignments`` (in source order: the
    index's): those on the method's lines, found by bisection, are its own (no statement after
    it starts on its last line), without a walk of the method."""
    kept: dict[str, list[str]] = {}
    low = bisect_left(assignments, method.lineno, key=_LINE)
    high = bisect_right(assignments, method.end_lineno or method.lineno, key=_LINE)
    for node in assignments[low:high]:
        if isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    kept.setdefault(node.value.id, []).append(f"self.{target.attr}")
    return kept


_LINE = attrgetter("lineno")


def _names(function: ast.AST) -> list[str]:
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    return [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]


def _source(lines: list[str], node: ast.stmt) -> str:
    return "".join(lines[node.lineno - 1:node.end_lineno or node.lineno])


def handed_to_trainer(scope: Base, model: str, path: str, text: str, facts: AbstractSet[str]) -> Optional[Trainer]:
    """The trainer the plain name ``model`` is handed to in ``scope``: an argument of a call of
    the repository (no TensorFlow API) that a trained name binds (``trainer = Trainer(model)``,
    ``trainer.fit(...)``) or that is a method of such a name (``trainer.compile(model=model)``),
    or of a function a fact says trains it; None when there is none."""
    tree = module_ast(text)
    if tree is None:
        return None
    module = ".".join(module_parts(path))
    imports = module_index(tree).imported_names(path)
    known = facts | parameter_facts(path, text)
    scope_text = tree_text(scope)
    found: Optional[Trainer] = None
    for callee, target, position, keyword in _calls_given(scope, model):
        receiver, _, method = callee.rpartition(".")
        function: Optional[str]
        handle: Optional[str]
        if receiver and "." not in receiver and receiver not in imports:  # ``trainer.compile(model=...)``
            cls = _class_bound(scope_text, receiver)
            function = qualified(cls, module, imports) if cls else None
            function, handle = (f"{function}.{method}" if function else None), receiver
        else:  # ``Trainer(model)``, ``train(model)``, ``pkg.Trainer(model)``
            function, handle = qualified(callee, module, imports), target
            function = f"{function}.__init__" if function and method[:1].isupper() else function
        if function is None or function.startswith("tensorflow."):
            continue
        if _trains_parameter(function, tuple(module_parts(path)[:-1]), position, keyword, known):
            return Trainer(callee, True)
        if found is None and handle is not None and trains(handle, scope_text):
            found = Trainer(callee, False)
    return found


def _trains_parameter(function: str, package: tuple[str, ...], position: Optional[int],
                      keyword: Optional[str], facts: AbstractSet[str]) -> bool:
    """Does a fact say ``function`` (as the file of ``package`` names it: through a package's
    re-export too, ``from tts.trainers import Trainer``) trains the argument given at
    ``position`` or by ``keyword``?"""
    trained = _trained_parameters(frozenset(fact for fact in facts if fact.startswith(TRAINED_PARAMETER)))
    if not trained:
        return False
    named = reexports(frozenset(facts)).resolve(function, package, lambda target, where: nearest_name(
        target, where, trained.keys()))
    return any(keyword == name or (position is not None and position == index)
               for index, name in trained.get(named or "", ()))


@lru_cache(maxsize=8)
def _trained_parameters(facts: frozenset[str]) -> dict[str, tuple[tuple[int, str], ...]]:
    """The :data:`TRAINED_PARAMETER` facts read back: function -> (position, name) pairs."""
    found: dict[str, list[tuple[int, str]]] = {}
    for fact in facts:
        named, _, parameter = fact[len(TRAINED_PARAMETER):].partition("=")
        index, _, name = parameter.partition(":")
        found.setdefault(named, []).append((int(index), name))
    return {named: tuple(pairs) for named, pairs in found.items()}


def _class_bound(text: str, name: str) -> Optional[str]:
    """The class ``name`` is bound to an instance of in ``text`` (``trainer = Trainer(``)."""
    match = re.search(rf"(?m)^\s*{re.escape(name)}\s*=\s*([A-Za-z_][\w.]*)\s*\(", text)
    return match.group(1) if match else None


def _calls_given(scope: Base, model: str) -> Iterator[tuple[str, Optional[str], Optional[int], Optional[str]]]:
    """``(callee, target, position, keyword)`` for each call in ``scope`` given the name
    ``model`` as a plain argument: the callee as spelled, the name the call's result is bound
    to (or None), the argument's position or its keyword."""
    for leaf in scope.leaves():
        if leaf.type != tokens.NAME or leaf.value != model:
            continue
        given = _argument_of(leaf)
        if given is None:
            continue
        trailer, position, keyword = given
        power = trailer.parent
        if power is None or power.type != symbols.power or power.children[-1] is not trailer:
            continue
        callee = spelled_name(power.children[:-1])
        if callee is None:
            continue
        statement = power.parent
        target = statement.children[0] if statement is not None and statement.type == symbols.expr_stmt \
            and len(statement.children) == 3 and statement.children[2] is power else None
        yield callee, str(target.value) if target is not None and target.type == tokens.NAME else None, \
            position, keyword


def _argument_of(leaf: Base) -> Optional[tuple[Base, Optional[int], Optional[str]]]:
    """The call trailer ``leaf`` is a plain argument of, with its position or its keyword."""
    parent = leaf.parent
    keyword = None
    node = leaf
    if parent is not None and parent.type == symbols.argument:
        if leaf is not parent.children[-1] or len(parent.children) != 3 or parent.children[1].type != tokens.EQUAL:
            return None
        keyword, node, parent = str(parent.children[0].value), parent, parent.parent
    position = None
    if parent is not None and parent.type == symbols.arglist:
        if keyword is None:
            before = [child for child in parent.children[:parent.children.index(node)] if child.type != tokens.COMMA]
            if any(child.type == symbols.argument for child in before):
                return None
            position = len(before)
        parent = parent.parent
    elif keyword is None:
        position = 0
    return (parent, position, keyword) if is_call_trailer(parent) else None
