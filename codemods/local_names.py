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

What the file's reads are is worked out where its ``ast`` already is: the repository analysis
hands :class:`KnownReads` over with the file's record (``ast_handover``), found by a walk that
goes down only to the lines that read a name some function takes as a parameter or loop target
(the analysis's :class:`~.modules.ModuleIndex` lists them); the file as a rule wrote it takes
them over on its unchanged lines (:func:`moved_reads`). Without a record, a text search keeps
a file with no such name from being parsed.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from functools import lru_cache
from typing import Iterable, NamedTuple, Optional, Sequence, Union

from .modules import ModuleIndex, module_ast, module_index
from .qualified import ReferenceSite
from .text_search import AnyOf

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
#: The words of a line that may make a scope of its own or bind a name in one.
_SCOPE_WORDS = frozenset({"def", "lambda", "class", "for"})
_WORD = re.compile(r"[^\W\d]\w*")


class KnownReads(NamedTuple):
    """What a module's ``ast`` said of some ``names`` (the repository analysis's, handed
    over): those of them a function, lambda or comprehension takes as a parameter or loop
    target (``taken``), and ``reads``, the (line, character column) of each read of one of
    them that :func:`shadowed_reads` finds; a name not in ``names`` was not looked at."""

    names: frozenset[str]
    taken: frozenset[str]
    reads: frozenset[tuple[int, int]]


def without_shadowed(text: str, sites: list[ReferenceSite],
                     known: Optional[KnownReads] = None) -> list[ReferenceSite]:
    """``sites`` (the references of the module ``text``) without those whose first name the
    scope reading it takes as a parameter or loop target: from ``known`` when it looked at
    every first name, else the module is parsed only when the text may hold one."""
    heads = site_heads(sites)
    if known is not None and heads <= known.names:
        shadowed: Iterable[tuple[int, int]] = known.reads
    else:
        names = may_shadow(text, heads)
        shadowed = shadowed_reads(text, module_ast(text), names) if names else ()
    dropped = set(shadowed)
    return [site for site in sites if (site.line, site.column) not in dropped] if dropped else sites


def site_heads(sites: Iterable[ReferenceSite]) -> frozenset[str]:
    """The names ``sites`` start with."""
    return spelled_heads({site.spelled for site in sites})


def spelled_heads(spellings: Iterable[str]) -> frozenset[str]:
    """The names the ``spellings`` of sites start with."""
    return frozenset(map(_head, set(spellings)))


def module_known_reads(text: str, module: ast.Module, names: Iterable[str]) -> KnownReads:
    """:class:`KnownReads` of ``names`` in the module ``text`` whose ``ast`` is ``module``
    (while the analysis has it: the engine does not parse the file again for them)."""
    looked_at = frozenset(names)
    taken = looked_at & taken_names(module_index(module))
    return KnownReads(looked_at, taken, frozenset(_taken_reads(text, module, taken)) if taken else frozenset())


def moved_reads(known: KnownReads, original: str, written: str,
                origin: Sequence[Optional[int]]) -> Optional[KnownReads]:
    """``known`` (of the module ``original``) for its rewrite ``written``, whose line ``line``
    is the original's ``origin[line]`` unchanged (None: a line the rewrite wrote): the reads
    on the unchanged lines, moved with them, when no line the rewrite wrote or replaced spells
    a name the module takes as a parameter or loop target or a word that may open a scope
    (``def``, ``lambda``, ``for``, ``class``), and no line it wrote may take one of the names
    as a parameter; None otherwise (then the rewrite's own ``ast`` decides). A rewrite does not
    make a line it kept a parameter or a loop target (the rules rewrite calls and add
    statements)."""
    lines = written.split("\n")
    if len(origin) != len(lines) + 1:
        return None
    kept = {number for number in origin if number is not None}
    changed = "\n".join(line for line, number in zip(lines, origin[1:]) if number is None)
    replaced = "\n".join(line for number, line in enumerate(original.split("\n"), start=1) if number not in kept)
    words = set(_WORD.findall(changed))
    if not (_SCOPE_WORDS | known.taken).isdisjoint(words.union(_WORD.findall(replaced))) or any(
            _maybe_taken(name).search(changed) for name in known.names & words):
        return None
    line_of = {number: line for line, number in enumerate(origin) if number is not None}
    return KnownReads(known.names, known.taken, frozenset(
        (line_of[line], column) for line, column in known.reads if line in line_of))


def taken_names(index: ModuleIndex) -> frozenset[str]:
    """The names the module of ``index`` takes as a parameter or a ``for`` target anywhere
    (what may shadow a name of the module's: the others cannot)."""
    loops: list[Union[ast.For, ast.AsyncFor, ast.comprehension]] = [
        *index.nodes(ast.For), *index.nodes(ast.AsyncFor), *index.nodes(ast.comprehension)]
    targets = [loop.target for loop in loops]
    return frozenset([arg.arg for arg in index.nodes(ast.arg)]
                     + [target.id for target in targets if type(target) is ast.Name]
                     + [node.id for target in targets if type(target) is not ast.Name
                        for node in ast.walk(target) if isinstance(node, ast.Name)])


def may_shadow(text: str, heads: Iterable[str]) -> frozenset[str]:
    """Which of the names ``heads`` (sites' first names) the module ``text`` may take as a
    parameter or loop target: a search of the text, so that a module with none is not
    parsed and walked."""
    return frozenset(name for name in heads if name and _followed_as_bound(name).search(text)
                     and _binding_shape(name).found(text))


@lru_cache(maxsize=256)
def _followed_as_bound(name: str) -> re.Pattern[str]:
    """``name`` followed as a parameter or loop target is: what :func:`_binding_shape` needs,
    a pattern that starts with the name's letters (a search ten times as fast over the
    corpus's TF files; most have none)."""
    return re.compile(r"%s(?:\s*[=,):]|\s+in\b)" % re.escape(name))


@lru_cache(maxsize=256)
def _maybe_taken(name: str) -> re.Pattern[str]:
    """The word ``name`` where a parameter list or a loop target may hold it: followed by
    what :func:`_followed_as_bound` looks for or by the end of its line."""
    return re.compile(r"\b%s(?:\s*(?:[=,):]|$)|\s+in\b)" % re.escape(name), re.MULTILINE)


@lru_cache(maxsize=256)
def _binding_shape(name: str) -> AnyOf:
    """A parameter or a ``for`` target named ``name``: in the parentheses of a ``def`` (a
    default may hold one level of its own), after ``lambda``, or between ``for`` and ``in``;
    each looked for by its keyword (``text_search``: tried at every position, the ``def``
    shape's lazy parameter list was 1-4 ms a file)."""
    spelled = re.escape(name)
    return AnyOf(r"\bdef\s+\w+\s*\((?:[^()]|\([^()]*\))*?[(,*\s]%s\s*[=,):]" % spelled,
                 r"\blambda\b[^:\n]*\b%s\b" % spelled,
                 r"\bfor\s+[\w\s,()\[\]]*?\b%s\b[\w\s,()\[\]]*?\bin\b" % spelled)


def _head(spelled: str) -> str:
    found = _HEAD.match(spelled)
    return found.group() if found else ""


def shadowed_reads(text: str, module: Optional[ast.Module], names: frozenset[str]) -> set[tuple[int, int]]:
    """The (line, character column) of each read of one of ``names`` that resolves to a
    parameter or loop target of a function, lambda or comprehension, in the module ``text``
    whose ``ast`` is ``module`` (None: not Python 3, no reads; nor in a module nested deeper
    than the walk can recurse). The walk goes down only to the lines that name one."""
    if module is None:
        return set()
    taken = names & taken_names(module_index(module))
    return _taken_reads(text, module, taken) if taken else set()


def _taken_reads(text: str, module: ast.Module, names: frozenset[str]) -> set[tuple[int, int]]:
    """:func:`shadowed_reads` of ``names``, each one the module takes as a parameter or loop
    target somewhere."""
    if _LONE_CR.search(text):
        return set()
    read_lines = sorted({node.lineno for node in module_index(module).nodes(ast.Name) if node.id in names})
    try:
        nodes = list(_shadowed_names(module, names, (), read_lines))
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


def _shadowed_names(node: ast.AST, names: frozenset[str], scopes: tuple[_Scope, ...],
                    read_lines: list[int]) -> Iterable[ast.Name]:
    if isinstance(node, ast.Name):
        if node.id in names and isinstance(node.ctx, ast.Load) and _shadows(node.id, scopes):
            yield node
        return
    for child, inner in _children(node, names, scopes):
        if _spans_one(child, read_lines):
            yield from _shadowed_names(child, names, inner, read_lines)


def _spans_one(node: ast.AST, lines: list[int]) -> bool:
    """Whether ``node`` (one with no position: perhaps) spans one of ``lines`` (sorted)."""
    first = getattr(node, "lineno", None)
    if first is None:
        return True
    at = bisect_left(lines, first)
    return at < len(lines) and lines[at] <= node.end_lineno  # type: ignore[attr-defined]


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
