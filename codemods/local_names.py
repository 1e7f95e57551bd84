"""Where a module's imported name is shadowed by a function's: a parameter or a loop target.

``from tensorflow.contrib.layers import batch_norm`` and then ``def __init__(self,
batch_norm=0): self.batch_norm = batch_norm`` (tensorflow-DeepFM's model class): the
``batch_norm`` of ``__init__`` is its parameter, not TensorFlow's function. The reference
finders read names through the module's bindings alone (a site depends on its name and its
statement); :func:`without_shadowed` drops, from what they found, the reads of a name that
the function (or lambda, or comprehension) reading it takes as a parameter or a ``for``
target, as Python resolves names: the innermost function that binds the name decides, one
declaring it ``global``/``nonlocal`` binds nothing, a comprehension's first iterable is read
in the enclosing scope. A function that also binds the name otherwise (``mode =
tf.estimator.ModeKeys.PREDICT``, an import, ``tpu_lib = contrib.tpu()``: what the module's
bindings may make an alias of an API) keeps its reads as they are found. A class body shadows
nothing: the functions inside it do not see its bindings, and it reads a name it has not bound
yet from the module (``class A: batch_norm = batch_norm``).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Iterable, Optional

from .modules import module_ast
from .qualified import ReferenceSite

_HEAD = re.compile(r"\w+")
#: A carriage return that does not end a CRLF: ``ast`` counts it as a line break (no lines
#: to match the sites' then; such a file keeps its sites).
_LONE_CR = re.compile(r"\r(?!\n)")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: What has a scope of its own: what a function binds in one of these is not the function's.
_SCOPES = _FUNCTIONS + _COMPREHENSIONS + (ast.ClassDef,)
#: What each enclosing function or comprehension scope binds, outermost first: the names it
#: takes only as parameters or loop targets (they shadow the module's), and the names it
#: binds otherwise (their reads are kept as found).
_Scope = tuple[frozenset[str], frozenset[str]]


def without_shadowed(text: str, sites: list[ReferenceSite]) -> list[ReferenceSite]:
    """``sites`` (the references of the module ``text``) without those whose first name the
    scope reading it takes as a parameter or loop target (the module is parsed only when
    the text may)."""
    names = may_shadow(text, (site.spelled for site in sites))
    shadowed = shadowed_reads(text, module_ast(text), names) if names else set()
    return [site for site in sites if (site.line, site.column) not in shadowed] if shadowed else sites


def may_shadow(text: str, spellings: Iterable[str]) -> frozenset[str]:
    """Which of the names the ``spellings`` of sites start with the module ``text`` may take
    as a parameter or loop target: a search of the text, so that a module with none is not
    parsed and walked."""
    heads = set(map(_head, set(spellings)))
    return frozenset(name for name in heads if name and _followed_as_bound(name).search(text)
                     and _binding_shape(name).search(text))


@lru_cache(maxsize=256)
def _followed_as_bound(name: str) -> re.Pattern[str]:
    """``name`` followed as a parameter or loop target is: what :func:`_binding_shape` needs,
    a pattern that starts with the name's letters (a search ten times as fast over the
    corpus's TF files; most have none)."""
    return re.compile(r"%s(?:\s*[=,):]|\s+in\b)" % re.escape(name))


@lru_cache(maxsize=256)
def _binding_shape(name: str) -> re.Pattern[str]:
    """A parameter or a ``for`` target named ``name``: in the parentheses of a ``def`` (a
    default may hold one level of its own), after ``lambda``, or between ``for`` and ``in``."""
    spelled = re.escape(name)
    return re.compile(
        r"\bdef\s+\w+\s*\((?:[^()]|\([^()]*\))*?[(,*\s]%s\s*[=,):]" % spelled
        + r"|\blambda\b[^:\n]*\b%s\b" % spelled
        + r"|\bfor\s+[\w\s,()\[\]]*?\b%s\b[\w\s,()\[\]]*?\bin\b" % spelled)


def _head(spelled: str) -> str:
    found = _HEAD.match(spelled)
    return found.group() if found else ""


def shadowed_reads(text: str, module: Optional[ast.Module], names: frozenset[str]) -> set[tuple[int, int]]:
    """The (line, character column) of each read of one of ``names`` that resolves to a
    parameter or loop target of a function, lambda or comprehension, in the module ``text``
    whose ``ast`` is ``module`` (None: not Python 3, no reads; nor in a module nested deeper
    than the walk can recurse)."""
    if module is None or _LONE_CR.search(text):
        return set()
    try:
        nodes = list(_shadowed_names(module, names, ()))
    except RecursionError:
        return set()
    lines = text.split("\n")
    found: set[tuple[int, int]] = set()
    for node in nodes:
        line = lines[node.lineno - 1]
        column = node.col_offset if line.isascii() else len(
            line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))
        found.add((node.lineno, column))
    return found


def _shadowed_names(node: ast.AST, names: frozenset[str],
                    scopes: tuple[_Scope, ...]) -> Iterable[ast.Name]:
    if isinstance(node, ast.Name):
        if node.id in names and isinstance(node.ctx, ast.Load) and _shadows(node.id, scopes):
            yield node
        return
    for child, inner in _children(node, names, scopes):
        yield from _shadowed_names(child, names, inner)


def _shadows(name: str, scopes: tuple[_Scope, ...]) -> bool:
    """Whether the innermost scope that binds ``name`` takes it only as a parameter or loop
    target."""
    for local, aliased in reversed(scopes):
        if name in local or name in aliased:
            return name in local
    return False


def _children(node: ast.AST, names: frozenset[str],
              scopes: tuple[_Scope, ...]) -> Iterable[tuple[ast.AST, tuple[_Scope, ...]]]:
    """Each child of ``node`` with the scopes it is read in."""
    if not isinstance(node, _FUNCTIONS + _COMPREHENSIONS):
        return ((child, scopes) for child in ast.iter_child_nodes(node))
    if isinstance(node, _COMPREHENSIONS):
        return _comprehension_children(node, names, scopes)
    inner = scopes + _bound_in(node, names)
    outside = _read_outside(node)
    return ((child, scopes if child in outside else inner) for child in ast.iter_child_nodes(node))


def _comprehension_children(node: ast.AST, names: frozenset[str],
                            scopes: tuple[_Scope, ...]) -> Iterable[tuple[ast.AST, tuple[_Scope, ...]]]:
    generators = node.generators  # type: ignore[attr-defined]
    bound = frozenset(name for generator in generators for name in _stored(generator.target, names))
    inner = scopes + ((bound, frozenset()),)
    first = generators[0].iter
    for child in ast.iter_child_nodes(node):
        if child is generators[0]:
            yield first, scopes
            for part in ast.iter_child_nodes(child):
                if part is not first:
                    yield part, inner
        else:
            yield child, inner


def _read_outside(node: ast.AST) -> list[ast.AST]:
    """The parts of a ``def``, ``lambda`` or ``class`` the enclosing scope reads: decorators,
    the parameters' defaults and annotations (their ``arguments``: the names they bind are
    the function's), the return annotation, bases and keywords."""
    outside: list[ast.AST] = list(getattr(node, "decorator_list", ()))
    if isinstance(node, ast.ClassDef):
        return outside + list(node.bases) + list(node.keywords)
    returns = getattr(node, "returns", None)
    return outside + [node.args] + ([returns] if returns is not None else [])  # type: ignore[attr-defined]


def _parameters(arguments: ast.arguments) -> list[ast.arg]:
    listed = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    return listed + [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]


def _bound_in(node: ast.AST, names: frozenset[str]) -> tuple[_Scope]:
    """The scope of the function or lambda ``node``: which of ``names`` it takes as a
    parameter or ``for`` target only, and which it binds otherwise (what the module's bindings
    may make an alias of an API: its reads are kept); a name declared ``global`` or
    ``nonlocal`` is another scope's."""
    shadowing = {arg.arg for arg in _parameters(node.args)}  # type: ignore[attr-defined]
    declared: set[str] = set()
    other: set[str] = set()
    body = node.body if isinstance(node.body, list) else [node.body]  # type: ignore[attr-defined]
    loop_targets: set[int] = set()
    for statement in body:
        for inner in _same_scope(statement):
            if isinstance(inner, (ast.For, ast.AsyncFor)):
                targets = [part for part in ast.walk(inner.target) if isinstance(part, ast.Name)]
                loop_targets.update(map(id, targets))
                shadowing.update(target.id for target in targets)
            elif isinstance(inner, (ast.Global, ast.Nonlocal)):
                declared.update(inner.names)
            elif id(inner) not in loop_targets:
                other.update(_binds(inner))
    return ((frozenset(shadowing - other - declared) & names, frozenset(other - declared) & names),)


def _same_scope(node: ast.AST) -> Iterable[ast.AST]:
    """``node`` and what it holds that is in its scope: a nested scope's own name (a ``def``,
    ``class``) but not its inside."""
    yield node
    if isinstance(node, _SCOPES):
        for part in _read_outside(node) if not isinstance(node, _COMPREHENSIONS) else ():
            yield from _same_scope(part)
        return
    for child in ast.iter_child_nodes(node):
        yield from _same_scope(child)


def _binds(node: ast.AST) -> Iterable[str]:
    """The names ``node`` binds in the scope it is in."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, ast.ExceptHandler) and node.name:
        yield node.name
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


def _stored(target: ast.AST, names: frozenset[str]) -> Iterable[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and node.id in names:
            yield node.id
