"""Names bound to classes that the module then reads only as types: the binding is a type use.

``NextState = tf.keras.layers.Layer`` (tensorflow/gnn: a name for annotations) and
``_SUPPORTED = (tf.distribute.OneDeviceStrategy, tf.distribute.MirroredStrategy)`` read by
``isinstance(strategy, _SUPPORTED)`` (sonnet) name classes without building or running them:
the class is used as the types an annotation or ``isinstance`` reads are
(``ReferenceSite.type_use``), so the audits (NPU071, NPU100 for an API's owner) count the
binding's names as needing nothing and report none (``spec/rules-tf2.md``, NPU071).

Whether a name is only read as a type is a fact of the whole module, not of the binding's
statement: both reference finders answer per statement (``ast_references``, ``qualified``), so
this is a pass over the sites they found (:func:`with_type_aliases`), from the module's ``ast``,
the same in every engine mode. A binding qualifies when it is a module-level ``NAME = value``
(in the module's body, or an ``if``/``try`` there), ``value`` a dotted name or a tuple of them,
``NAME`` bound nowhere else in the module, and every read of ``NAME`` a type use: the class
argument of ``isinstance``/``issubclass``, an annotation, a base class, a ``typing`` subscript
or a type argument of ``cast``/``TypeVar``/``NewType``. A tuple must be read so at least once
(a tuple no read shows to be types may be iterated elsewhere), though a comprehension may
list the classes' names (``", ".join(s.__name__ for s in _SUPPORTED)``: only looked at); a name bound to one class and
not read in the module is a name for the modules that import it (the class is used there, as
that module's own name, which npu-codemod does not follow across files), unless a rule owns
the API (``api_owners``): it migrates it where it is called, so the binding stays a use.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import defaultdict
from typing import Optional, Sequence

from .api_owners import CONTRIB_OWNERS, compat_owner
from .ast_type_uses import Parents, in_typing_type
from .introspection import INTROSPECTION_ATTRIBUTES, TYPE_CHECKS
from .modules import module_ast
from .names import ast_dotted_name
from .qualified import ReferenceSite
from .support_list import list_name

#: A module-level assignment whose value may be a dotted name or a tuple: the cheap test
#: before any ``ast`` is asked.
_CANDIDATE = re.compile(r"^[ \t]*[A-Za-z_]\w*[ \t]*=[ \t]*[(A-Za-z_]", re.MULTILINE)
#: A class's name: a capital, then a lower-case letter somewhere (``Layer``, not ``FLAGS``).
_CLASS_LIKE = re.compile(r"^_*[A-Z]\w*[a-z]")
_LONE_CR = re.compile(r"\r(?!\n)")
#: (first line, column, last line, end column) of a binding's value, in characters.
Span = tuple[int, int, int, int]


def with_type_aliases(text: str, sites: list[ReferenceSite],
                      spans: Optional[Sequence[tuple[Span, bool]]] = None) -> list[ReferenceSite]:
    """``sites`` (the references of the module ``text``), those in the value of a binding
    read only as a type (see the module's doc) marked ``type_use``. ``spans``: the module's
    :func:`type_alias_spans` when the repository analysis kept them (``ast_handover``: the
    file is then not parsed with ``ast`` again)."""
    if not sites or not _CANDIDATE.search(text):
        return sites
    if spans is None:
        spans = type_alias_spans(text)
    if not spans:
        return sites
    return [dataclasses.replace(site, type_use=True)
            if not site.called and not site.type_use and _type_alias(site, spans) else site
            for site in sites]


def _type_alias(site: ReferenceSite, spans: Sequence[tuple[Span, bool]]) -> bool:
    """Is ``site`` in the value of one of the bindings ``spans`` (each with whether the module
    reads it), and, where the module does not read it, an API no rule owns? A rule that
    migrates an API where it is called (``TpuRunConfig = tf_estimator.tpu.RunConfig``, NPU013
    at the call, in another module) leaves the binding a miss of its own."""
    for (first, column, last, end), read in spans:
        if (first, column) <= (site.line, site.column) < (last, end):
            return read or not _owned(site.name)
    return False


def _owned(qualified: str) -> bool:
    """Does a rule own the API ``qualified`` (or a listed prefix of it): ``api_owners``?"""
    parts = (list_name(qualified) or "").split(".")
    return any(compat_owner(prefix) is not None or prefix in CONTRIB_OWNERS
               for prefix in (".".join(parts[:end]) for end in range(2, len(parts) + 1)))


def type_alias_spans(text: str) -> list[tuple[Span, bool]]:
    """Where the values of the module's bindings read only as types are (see the module's
    doc), each with whether the module reads the binding; none when ``ast`` cannot read it."""
    module = module_ast(text)
    if module is None or _LONE_CR.search(text):
        return []  # a lone carriage return ends a line for ``ast``, not for fissix
    return module_type_alias_spans(module, text)


def module_type_alias_spans(module: ast.Module, text: str) -> list[tuple[Span, bool]]:
    """:func:`type_alias_spans` of the module ``text`` whose ``ast`` is ``module``; none
    where no line of ``text`` binds a name (the literal test first)."""
    if not _CANDIDATE.search(text):
        return []
    candidates: dict[str, list[ast.expr]] = defaultdict(list)
    for name, value in _bindings(module.body):
        if name is not None:
            candidates[name].append(value)
    if not candidates:
        return []
    bound, reads = _uses(module, frozenset(candidates))
    lines = text.split("\n")
    spans = []
    for name, values in candidates.items():
        if bound[name] != len(values) or not all(reads[name]):
            continue  # bound otherwise too (or shadowed), or read as a value
        for value in values:  # one, or one per branch (``try:``/``except AttributeError:``)
            if isinstance(value, ast.Tuple) and not reads[name]:
                continue
            last = value.end_lineno or value.lineno
            spans.append(((value.lineno, _column(lines, value.lineno, value.col_offset),
                           last, _column(lines, last, value.end_col_offset or 0)), bool(reads[name])))
    return spans


def _column(lines: list[str], line: int, offset: int) -> int:
    """The character column of ``ast``'s UTF-8 byte ``offset`` on ``line`` (1-based)."""
    return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))


def _bindings(body: list[ast.stmt]) -> list[tuple[Optional[str], ast.expr]]:
    """``(NAME, value)`` of each ``NAME = value`` of ``body`` (and of the ``if``/``try``
    blocks and ``except`` handlers in it) whose value is a class's dotted name or a tuple of dotted names."""
    found: list[tuple[Optional[str], ast.expr]] = []
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and _classes(statement.value):
            found.append((statement.targets[0].id, statement.value))
        elif isinstance(statement, ast.If):
            found += _bindings(statement.body) + _bindings(statement.orelse)
        elif isinstance(statement, ast.Try):
            found += _bindings(statement.body) + _bindings(statement.orelse)
            for handler in statement.handlers:  # ``except AttributeError: X = <older name>``
                found += _bindings(handler.body)
    return found


def _classes(value: ast.expr) -> bool:
    """Is ``value`` a class's dotted name (``tf.keras.layers.Layer``) or a tuple of dotted
    names (nested tuples too)?"""
    if isinstance(value, ast.Tuple):
        return bool(value.elts) and all(_classes(element) or ast_dotted_name(element) is not None
                                        for element in value.elts)
    spelled = ast_dotted_name(value)
    return spelled is not None and "." in spelled \
        and _CLASS_LIKE.match(spelled.rpartition(".")[2]) is not None


def _uses(module: ast.Module, names: frozenset[str]) -> tuple[dict[str, int], dict[str, list[bool]]]:
    """How many times each of ``names`` is bound in ``module`` (any scope: a parameter, a
    definition, an import, a target), and whether each of its reads is a type use."""
    parents: Parents = {}
    bound: dict[str, int] = defaultdict(int)
    reads: dict[str, list[bool]] = defaultdict(list)
    loads = []
    for node in ast.walk(module):
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else (value,):
                if isinstance(child, ast.AST):
                    parents[child] = (node, field)
        name = _bound_name(node)
        if name in names:
            bound[name] += 1
        elif isinstance(node, ast.Name) and node.id in names:
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            else:
                bound[node.id] += 1
    for load in loads:
        reads[load.id].append(_type_use(load, parents))
    return bound, reads


def _bound_name(node: ast.AST) -> Optional[str]:
    """The name a definition, parameter, import alias or ``global`` binds, if any."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.alias):
        return node.asname or node.name.partition(".")[0]
    if isinstance(node, ast.ExceptHandler):
        return node.name
    return None


def _type_use(node: ast.expr, parents: Parents) -> bool:
    """Is the read ``node`` a type use: the class argument of ``isinstance``/``issubclass``
    (alone or in a tuple), a base class, in an annotation, a type ``typing`` reads, or the
    classes only looked at (:func:`_names_listed`)?"""
    return _type_argument(node, parents) or _annotation(node, parents) \
        or in_typing_type(node, parents) or _names_listed(node, parents) or (
            isinstance(parents[node][0], ast.ClassDef) and parents[node][1] == "bases")


def _names_listed(node: ast.expr, parents: Parents) -> bool:
    """Is ``node`` what a comprehension iterates only to look at each class
    (``", ".join(s.__name__ for s in _SUPPORTED)``: sonnet's error message naming the
    strategies its ``isinstance`` accepts): each read of its target is followed by an
    introspection attribute (``codemods/introspection``)?"""
    parent, field = parents[node]
    if not isinstance(parent, ast.comprehension) or field != "iter" \
            or not isinstance(parent.target, ast.Name):
        return False
    comprehension, _ = parents[parent]
    target = parent.target.id
    reads = [name for name in ast.walk(comprehension)
             if isinstance(name, ast.Name) and name.id == target and isinstance(name.ctx, ast.Load)]
    return bool(reads) and all(_looked_at(name, parents) for name in reads)


def _looked_at(name: ast.Name, parents: Parents) -> bool:
    """Is ``name`` followed by an introspection attribute (``s.__name__``)?"""
    parent, field = parents[name]
    return isinstance(parent, ast.Attribute) and field == "value" and parent.attr in INTROSPECTION_ATTRIBUTES


def _type_argument(node: ast.expr, parents: Parents) -> bool:
    parent, field = parents[node]
    while isinstance(parent, ast.Tuple):
        node = parent
        parent, field = parents[node]
    return isinstance(parent, ast.Call) and field == "args" and len(parent.args) > 1 \
        and parent.args[1] is node and ast_dotted_name(parent.func) in TYPE_CHECKS


def _annotation(node: ast.expr, parents: Parents) -> bool:
    parent, field = parents[node]
    while isinstance(parent, ast.expr):
        parent, field = parents[parent]
    return (field == "annotation" and isinstance(parent, (ast.arg, ast.AnnAssign))) \
        or (field == "returns" and isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)))
