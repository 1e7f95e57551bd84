"""Selective parsing: which top-level statements of a file a rule can act on.

A fissix parse (even with the engine's parser, ``parser.py``) costs about five times CPython's
``ast.parse`` (measured on the bench's real-code corpus), and a real training file runs to
thousands of lines with a handful of sites. :func:`module_layout` reads a file once with
``ast`` and cuts it into *units*: each top-level ``def``/``class`` (with its decorators),
and each run of other module-level statements. :func:`plan_parse` then says which units the
active rules need (by ``Rule._scope``), and
:class:`ParsePlan` gives the text the engine parses — the needed units as they are, every other
unit replaced by a one-name placeholder statement on the same lines, so every line and column
of the parsed text is the file's own — and puts the untouched units' bytes back into the
rewritten tree (:meth:`ParsePlan.restore`).

Units that hold an import or an alias assignment (``layers = tf.layers``) are always parsed: the
rules resolve names through the file's bindings (``ImportNames``), and the engine places header
imports next to the file's own; so is the ``if __name__ == "__main__":`` block, where rules
put what a whole program needs (a Keras session's configuration). When a plan cannot be made
(``ast`` cannot read the file, or it holds syntax fissix cannot parse, so a full parse reports
the same error), the file is parsed whole.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import compress
from operator import attrgetter, is_not
from typing import AbstractSet, Any, Callable, Iterable, Iterator, Optional, Sequence

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .ast_names import names_read_alike
from .modules import BLOCK_ITEMS, child_fields, module_ast, module_index
from .names import STAR, ast_dotted_name, ast_import_bindings
from .nodes import HIDDEN_NAMES, is_ast_main_block

#: How a rule declares what it reads and edits (see ``Rule._scope``).
SITE, LINKED, MODULE = "site", "linked", "module"
SCOPES = (SITE, LINKED, MODULE)

#: A word the layout gives each unit holding a node of a type that a test accepts (a rule's
#: ``_ast_sites``): (node type, word, test). The test returns True to give the word, or a
#: name: the word is then the unit's only where the file binds that name (:func:`_bindings`),
#: as the first name of ``tf.nn.dropout`` must be for a rule to resolve it.
Mark = tuple[type, str, Callable[[Any], "bool | str"]]
#: The marks of a layout by node type: (word, test) of each.
_Marks = dict[type, list[tuple[str, Callable[[Any], "bool | str"]]]]

_PLACEHOLDER = "__npu_codemod_unit_{}__"
_PLACEHOLDER_NAME = re.compile(r"__npu_codemod_unit_(\d+)__\Z")


@dataclass(frozen=True)
class Unit:
    """One top-level statement (``def``/``class``) or run of other module-level statements:
    its lines (1-based, inclusive), the identifiers its code spells (names, attributes, also
    as ``.name``, parameters, keywords; not comments, strings or imports), the names it uses, the module
    names it defines (a function's or class's name and the names it declares ``global``;
    every name a run assigns), and whether it is always parsed (see :attr:`always`)."""

    first: int
    last: int
    definition: bool
    words: frozenset[str]
    uses: frozenset[str]
    defines: frozenset[str]
    #: Always parsed: it binds names the rules resolve through (an import or an alias
    #: assignment), or it is the ``if __name__ == "__main__":`` block rules add code to.
    always: bool
    #: The variable names its code spells, as ``statements.used_names`` counts them.
    names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Layout:
    """A file cut into units, with the dotted target of each name its imports and alias
    assignments bind (``d`` -> ``tensorflow.nn.dropout``)."""

    units: tuple[Unit, ...]
    aliases: dict[str, str]
    lines: tuple[str, ...]  # the file's lines, each with its line ending


@dataclass(frozen=True)
class RuleNeed:
    """What one active rule needs parsed: its scope and the identifiers its sites spell."""

    scope: str
    site_names: frozenset[str]


def module_layout(text: str, marks: Sequence[Mark] = ()) -> Optional[Layout]:
    """``text`` (a whole module, ending with a newline) cut into units, with the words of
    ``marks`` (the active rules' ``_ast_sites``), or None when ``ast`` cannot read it or it
    holds syntax fissix does not parse."""
    if "\r" in text.replace("\r\n", ""):
        return None  # a lone CR: ast and fissix might not count its lines alike
    if not names_read_alike(text):
        return None  # ``ast`` would spell a name as fissix does not (``ｈorovod``)
    module = module_ast(text)  # shared with the rules' own analyses of the file
    if module is None:
        return None
    by_type: _Marks = {}
    for kind, word, test in dict.fromkeys(marks):  # rules may share one
        by_type.setdefault(kind, []).append((word, test))
    lines = _split_lines(text)
    scans = _scans(module, by_type, lines)
    if any(scan.beyond_fissix for scan in scans):
        return None
    if scans and ast.get_docstring(module, clean=False) is not None:
        scans[0].docstring = True
    aliases = _aliases(scans)
    bound = _bindings(scans, aliases) if any(scan.bound_words for scan in scans) else frozenset()
    units = tuple(_merged(scan.unit(aliases, bound) for scan in scans))
    return Layout(units, aliases, tuple(lines))


def spelled_by(word: str) -> Optional[str]:
    """``name`` for a mark's word ``@name`` (or a stand-in for it that ends so, as
    ``ast_handover``'s): every node its test accepts spells that name (``Rule._ast_sites``);
    None for another word."""
    at = word.rfind("@")
    return word[at + 1:] if at >= 0 else None


def _split_lines(text: str) -> list[str]:
    """Lines ended by ``\\n`` only, as both tokenizers count them (``str.splitlines`` also
    breaks at form feeds and Unicode line separators). Found with ``str.find``, not a split at
    a look-behind, which the regular expression engine tries at every character; each line is
    made once (``str.split`` and a newline added to each piece held the text twice)."""
    lines: list[str] = []
    add, find = lines.append, text.find
    start = 0
    end = find("\n") + 1
    while end:
        add(text[start:end])
        start = end
        end = find("\n", start) + 1
    if start < len(text):
        add(text[start:])
    return lines


def _groups(body: Sequence[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Each ``def``/``class`` alone, and each run of other statements together."""
    run: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, _DEFINITIONS):
            if run:
                yield run
                run = []
            yield [statement]
        else:
            run.append(statement)
    if run:
        yield run


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scans(module: ast.Module, marks: _Marks, lines: Sequence[str]) -> list["_Scan"]:
    """A :class:`_Scan` of each group of ``module``'s statements, from the nodes the file's
    :class:`~.modules.ModuleIndex` holds (built once for the analyses of the file) rather than
    a walk of its own; a group whose own walk is needed (see :func:`_group_nodes`) walks. A
    group that binds a name twice takes the order of its bindings from a walk of its statements
    (:meth:`_Scan.walk_order`), not of all its nodes."""
    groups = list(_groups(module.body))
    kinds = {*_TAKEN, *marks}
    sliced = _group_nodes(module, groups, kinds) if all(_positioned(kind) for kind in kinds) else None
    if sliced is None:
        return [_Scan(group, marks, lines) for group in groups]
    scans = []
    for group, nodes in zip(groups, sliced):
        scan = _Scan(group, marks, lines, nodes)
        if not scan.ordered():
            scan.walk_order(group)
        scans.append(scan)
    return scans


def _group_nodes(module: ast.Module, groups: Sequence[list[ast.stmt]],
                 kinds: AbstractSet[type]) -> Optional[list[dict[type, Sequence[ast.AST]]]]:
    """The nodes of each of ``kinds`` in each group, in pre-order, or None when two groups
    share a line. A group's nodes are one stretch of the index's pre-order list of a type, and
    start on its lines: each stretch is found by bisection on the line where the group starts
    (no step per node)."""
    starts = [_first_line(group[0]) for group in groups]
    if any(start <= _last_line(before) for start, before in zip(starts[1:], groups)):
        return None
    index = module_index(module)
    sliced: list[dict[type, Sequence[ast.AST]]] = [{} for _ in groups]
    line = attrgetter("lineno")
    for kind in kinds:
        found: list[ast.AST] = index.nodes(kind)
        if not found:
            continue
        bounds = [bisect_left(found, start, key=line) for start in starts[1:]]
        for nodes, low, high in zip(sliced, [0, *bounds], [*bounds, len(found)]):
            if low < high:
                nodes[kind] = found[low:high]
    return sliced


def _first_line(statement: ast.stmt) -> int:
    """Where a statement starts, its decorators included."""
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def _last_line(group: Sequence[ast.stmt]) -> int:
    return max(statement.end_lineno or statement.lineno for statement in group)


def _positioned(kind: type) -> bool:
    """Whether nodes of ``kind`` have a line (``arguments``, ``withitem``... have none)."""
    return "lineno" in getattr(kind, "_attributes", ())
#: Statements newer than fissix's grammar (on the Pythons that have them).
_NEWER_STATEMENTS = tuple(getattr(ast, name) for name in ("Match", "TryStar") if hasattr(ast, name))


class _Scan:
    """One walk over a group of top-level statements: the identifiers it spells, the names
    it uses, its imports and alias assignments, and whether fissix could parse it."""

    def __init__(self, group: list[ast.stmt], marks: Optional[_Marks] = None,
                 lines: Sequence[str] = (), nodes: Optional[dict[type, Sequence[ast.AST]]] = None) -> None:
        """``nodes``: the group's nodes of each type of :data:`_TAKEN` and of ``marks`` (from the
        file's index: :func:`_group_nodes`), read instead of walking the group."""
        first = group[0]
        self.marks = marks or {}
        self.lines = lines  # the file's (for what ``ast`` does not say: ``_beyond_fissix``)
        self.marked = frozenset(self.marks)  # the node types a mark tests
        self.first = _first_line(first)
        self.last = _last_line(group)
        self.definition = len(group) == 1 and isinstance(first, _DEFINITIONS)
        self.name = first.name if isinstance(first, _DEFINITIONS) else ""
        self.words: set[str] = set()
        self.uses: set[str] = set()
        self.names: set[str] = set()  # what ``used_names`` would find in the unit's tree
        self.assigned: set[str] = set()  # names stored to (at module level, for a run)
        self.globals: set[str] = set()  # names a function declares global
        self.imports: list[tuple[str, str]] = []  # (bound name, dotted target)
        self.assignments: list[tuple[str, str]] = []  # ``name = a.b``: (name, "a.b")
        self.calls: set[str] = set()  # ``name = a.b()``: what an accessor's call may bind
        self.bound_words: list[tuple[str, str]] = []  # (word, name): a mark's, if name is bound
        self.beyond_fissix = False
        self.main_block = any(is_ast_main_block(statement) for statement in group)
        #: The module's docstring is the group's first statement: the engine places header
        #: imports after it (``imports.header_index``), which a placeholder would hide.
        self.docstring = False
        if nodes is None:
            self._walk(group)
        else:
            self._take(nodes)

    def _take(self, nodes: dict[type, Sequence[ast.AST]]) -> None:
        """What :meth:`_walk` finds, read from the group's nodes of each type: the names,
        attributes, parameters and keywords a set at a time, the others node by node."""
        get, words = nodes.get, self.words
        names = get(ast.Name)
        if names:
            ids = set(map(_ID, names))
            self.uses |= ids
            self.names |= ids
            stored = map(_NOT_LOAD, map(type, map(_CTX, names)))  # ``type(node.ctx) is not Load``, in C
            self.assigned.update(map(_ID, compress(names, stored)))
        attributes = get(ast.Attribute)
        if attributes:
            spelled = set(map(_ATTR, attributes))
            words |= spelled
            words.update(["." + attr for attr in spelled])  # ".batch": an attribute
        parameters = get(ast.arg)
        if parameters:
            spelled = set(map(_ARG, parameters))
            words |= spelled
            self.names |= spelled
        keywords = get(ast.keyword)
        if keywords:
            words.update(filter(None, map(_ARG, keywords)))
        self._take_statements(get)
        for kind in self.marked - _UNMARKED:
            marked = get(kind)
            if marked:
                self._take_marks(kind, marked)

    def _take_marks(self, kind: type, nodes: Sequence[ast.AST]) -> None:
        """:meth:`_mark` of each of ``nodes`` (all of ``kind``), a mark at a time; an ``@name``
        mark not where the group spells no ``name`` (its test accepts no node there)."""
        for word, test in self.marks[kind]:
            name = spelled_by(word)
            if name is not None and not self._spells(name):
                continue
            for node in nodes:
                try:
                    marked = test(node)
                except Exception:
                    marked = True  # as :func:`_marked`: the rule reads the unit
                if isinstance(marked, str):
                    self.bound_words.append((word, marked))
                elif marked:
                    self.words.add(word)

    def _spells(self, name: str) -> bool:
        """Whether the group's code spells ``name`` as an identifier (a name, an attribute, a
        parameter, a keyword, a definition's name): only then may a node of it spell it, as a
        node an ``@name`` mark accepts does (``Rule._ast_sites``)."""
        return name in self.words or name in self.uses or name in self.names

    def _take_statements(self, get: Callable[..., Sequence[Any]]) -> None:
        """:meth:`_take` of the assignments, definitions and what ``_beyond_fissix`` tests."""
        for node in get(ast.Assign, ()):
            if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                self._assignment(node.targets[0].id, node.value)
        if any(_has_starred(node.slice) for node in get(ast.Subscript, ())):
            self.beyond_fissix = True  # a[*b]
        for kind in _DEFINITIONS:
            definitions = get(kind)
            if definitions:
                defined = set(map(_NAME, definitions))
                self.words |= defined
                self.assigned |= defined
                self.names |= defined
                if not all(_fissix_decorator(decorator) for node in definitions
                           for decorator in node.decorator_list):
                    self.beyond_fissix = True
        for holder in _FUNCTIONS_WITH_ARGUMENTS:  # ``arguments`` have no line: read from theirs
            for node in get(holder, ()):
                if node.args.posonlyargs or node.args.vararg is not None:
                    self._see(node.args)
        for kind in _SEEN_ONE_BY_ONE:
            for node in get(kind, ()):
                self._see(node)

    def ordered(self) -> bool:
        """Whether the order the imports and alias assignments were found in changes no
        binding: no name is bound to two targets (the walk's order decides which one wins)."""
        return len({name for name, _ in self.imports}) == len(set(self.imports)) and \
            len({name for name, _ in self.assignments}) == len(set(self.assignments))

    def walk_order(self, group: list[ast.stmt]) -> None:
        """The imports' bindings and the alias assignments in the order :meth:`_walk` finds
        them (for a scan taken from the index that is not :meth:`ordered`): only the statements
        are walked, as :meth:`_walk` pushes them (an expression holds none, and the walk is done
        with one before it pops what was below it), the rest of the scan is the same."""
        self.imports, self.assignments = [], []
        stack: list[ast.AST] = list(group)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.extend(ast_import_bindings(node))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                dotted = ast_dotted_name(node.value)
                if dotted:
                    self.assignments.append((node.targets[0].id, dotted))
            for field in child_fields(type(node)):
                value = getattr(node, field, None)
                if type(value) is list and value and isinstance(value[0], BLOCK_ITEMS):
                    stack.extend(value)

    def _walk(self, group: list[ast.stmt]) -> None:
        """Every node once; names and attributes (most nodes) seen inline, and only the
        fields that can hold more nodes followed (:func:`~.modules.child_fields`)."""
        name, attribute, constant, load = ast.Name, ast.Attribute, ast.Constant, ast.Load
        uses, names, words, assigned = self.uses, self.names, self.words, self.assigned
        seen, marked = _SEEN, self.marked
        marked_attributes = attribute in marked  # a mark on attributes sees each of them
        stack: list[ast.AST] = list(group)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is name:
                uses.add(node.id)  # type: ignore[attr-defined]
                names.add(node.id)  # type: ignore[attr-defined]
                if type(node.ctx) is not load:  # type: ignore[attr-defined]
                    assigned.add(node.id)  # type: ignore[attr-defined]
                continue
            if kind is attribute:
                words.add(node.attr)  # type: ignore[attr-defined]
                words.add("." + node.attr)  # type: ignore[attr-defined]  # ".batch": an attribute
                stack.append(node.value)  # type: ignore[attr-defined]
                if marked_attributes:
                    self._mark(node)
                continue
            if kind is constant:
                continue
            if marked and kind in marked:
                self._mark(node)
            if kind in seen:
                self._see(node)
            for field in child_fields(kind):
                value = getattr(node, field, None)
                if type(value) is list:
                    stack.extend(value)
                elif value is not None:
                    stack.append(value)

    def _mark(self, node: ast.AST) -> None:
        for word, test in self.marks.get(type(node), ()):
            marked = _marked(test, node)
            if isinstance(marked, str):
                self.bound_words.append((word, marked))
            elif marked:
                self.words.add(word)

    def _see(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
        elif isinstance(node, ast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._assignment(node.targets[0].id, node.value)
        elif isinstance(node, _DEFINITIONS):
            self.words.add(node.name)
            self.assigned.add(node.name)
            self.names.add(node.name)
            if not all(_fissix_decorator(decorator) for decorator in node.decorator_list):
                self.beyond_fissix = True
        elif isinstance(node, ast.arg):
            self.words.add(node.arg)
            self.names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.names.add(node.name)
        elif isinstance(node, ast.keyword) and node.arg:
            self.words.add(node.arg)
        elif isinstance(node, ast.Global):
            self.names.update(node.names)
            self.uses.update(node.names)
            self.globals.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            self.names.update(node.names)
            self.uses.update(node.names)
        elif _beyond_fissix(node, self.lines):
            self.beyond_fissix = True

    def _assignment(self, name: str, value: ast.expr) -> None:
        """``name = a.b`` (an alias, if ``a`` is bound so) or ``name = a.b()`` (an accessor's)."""
        dotted = ast_dotted_name(value)
        if dotted:
            self.assignments.append((name, dotted))
        elif _empty_call(value):
            self.calls.add(name)

    def _import(self, node: "ast.Import | ast.ImportFrom") -> None:
        """What an import binds. Its words are not the unit's: imports are always parsed, and a
        name they bind that a rule looks for is a site name of the units that use it."""
        for alias in node.names:
            self.names.update(filter(None, (alias.name.partition(".")[0], alias.asname)))
        self.imports.extend(ast_import_bindings(node))
        if isinstance(node, ast.ImportFrom) and node.module:
            self.names.add(node.module.partition(".")[0])

    def unit(self, aliases: dict[str, str], bound: AbstractSet[str] = frozenset()) -> Unit:
        always = bool(self.imports) or self.main_block or self.docstring or any(
            name in aliases and dotted.partition(".")[0] in aliases for name, dotted in self.assignments)
        defines = {self.name} | self.globals if self.definition else self.assigned
        marked = {word for word, name in self.bound_words if STAR in bound or name in bound}
        return Unit(self.first, self.last, self.definition, frozenset(self.words | marked | self.uses),
                    frozenset(self.uses), frozenset(defines), always, frozenset(self.names))


#: Node types :meth:`_Scan._see` looks at (the others are only walked through).
_SEEN = frozenset({ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef, ast.AsyncFunctionDef,
                   ast.ClassDef, ast.arg, ast.keyword, ast.ExceptHandler, ast.Global, ast.Nonlocal,
                   ast.arguments, ast.With, ast.AsyncWith, ast.Subscript, ast.For,
                   ast.AsyncFor, *_NEWER_STATEMENTS})


#: What :meth:`_Scan._take` reads of a group's nodes: names, attributes, the types
#: :meth:`_Scan._see` looks at (``arguments``, which have no line, through what holds them).
_FUNCTIONS_WITH_ARGUMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: Those :meth:`_Scan._take_statements` gives :meth:`_Scan._see` one by one.
_SEEN_ONE_BY_ONE = (ast.Import, ast.ImportFrom, ast.ExceptHandler, ast.Global, ast.Nonlocal,
                    ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, *_NEWER_STATEMENTS)
_TAKEN = frozenset({ast.Name, ast.Attribute, ast.arg, ast.keyword, ast.Assign, ast.Subscript,
                    *_DEFINITIONS, *_FUNCTIONS_WITH_ARGUMENTS, *_SEEN_ONE_BY_ONE})
_ID, _ATTR, _ARG, _NAME = attrgetter("id"), attrgetter("attr"), attrgetter("arg"), attrgetter("name")
_CTX, _NOT_LOAD = attrgetter("ctx"), partial(is_not, ast.Load)
_UNMARKED = frozenset({ast.Name, ast.Constant})  # leaves the walk never tests a mark on


def _beyond_fissix(node: ast.AST, lines: Sequence[str] = ()) -> bool:
    """Syntax ``ast`` reads and fissix's grammar does not (or may not: several context
    managers may be parenthesised, see :func:`_may_parenthesise`): a whole parse decides, and
    reports it."""
    if isinstance(node, _NEWER_STATEMENTS):
        return True  # match, except*
    if isinstance(node, ast.arguments):
        return bool(node.posonlyargs) or isinstance(getattr(node.vararg, "annotation", None),
                                                    ast.Starred)  # *args: *Ts
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return len(node.items) > 1 and _may_parenthesise(node, lines)
    if isinstance(node, ast.Subscript):
        return _has_starred(node.slice)  # a[*b]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _has_starred(node.iter)  # for x in *a, *b:
    return False


def _may_parenthesise(node: "ast.With | ast.AsyncWith", lines: Sequence[str]) -> bool:
    """May this ``with`` of several items put them in parentheses (``with (a, b):``, PEP 617)?
    ``ast`` reads it as ``with a, b:``; fissix reads it as one tuple, or not at all. Not when
    the code after the keyword (the first of its line: a compound statement starts one) opens
    no parenthesis nor goes on to the next line."""
    code = lines[node.lineno - 1].lstrip(" \t\f") if 0 < node.lineno <= len(lines) else ""
    if isinstance(node, ast.AsyncWith):
        code = code[len("async"):].lstrip(" \t\f") if code.startswith("async") else ""
    if not code.startswith("with"):
        return True
    after = code[len("with"):].lstrip(" \t\f")
    return not after or after[0] in "(\\\r\n#"


def _marked(test: Callable[[Any], "bool | str"], node: ast.AST) -> "bool | str":
    """Whether a rule's ``_ast_sites`` test accepts ``node`` (or the name the file must bind for
    it to); a test that raises marks it (the rule then reads that unit, as it would without
    the hint)."""
    try:
        marked = test(node)
    except Exception:
        return True
    return marked if isinstance(marked, str) else bool(marked)


def _empty_call(node: ast.expr) -> bool:
    """``a.b()``: an accessor's call binds the module it returns (``ImportNames``)."""
    return isinstance(node, ast.Call) and not node.args and not node.keywords \
        and ast_dotted_name(node.func) is not None


def _bindings(scans: Sequence[_Scan], aliases: dict[str, str]) -> frozenset[str]:
    """Every name the file may bind as ``ImportNames`` binds one, whatever the module: by an
    import (:data:`STAR` for a star import: any name), an assignment of a dotted name or of an
    accessor's call (``tpu = contrib.tpu()``)."""
    return frozenset(aliases).union(*(scan.calls for scan in scans),
                                    *((name for name, _ in scan.assignments) for scan in scans))


def _has_starred(node: ast.expr) -> bool:
    return isinstance(node, ast.Starred) or (
        isinstance(node, ast.Tuple) and any(isinstance(item, ast.Starred) for item in node.elts))


def _fissix_decorator(decorator: ast.expr) -> bool:
    """``@name``, ``@a.b`` or a call of one: what fissix's grammar reads (not PEP 614's
    ``@buttons[0].clicked.connect``)."""
    return ast_dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator) is not None


def _merged(units: Iterable[Unit]) -> Iterator[Unit]:
    """Units that share a line become one run (``x = 1; y = 2`` are one already)."""
    previous: Optional[Unit] = None
    for unit in units:
        if previous is not None and unit.first <= previous.last:
            previous = Unit(previous.first, max(previous.last, unit.last), False,
                            previous.words | unit.words, previous.uses | unit.uses,
                            previous.defines | unit.defines, previous.always or unit.always,
                            previous.names | unit.names)
            continue
        if previous is not None:
            yield previous
        previous = unit
    if previous is not None:
        yield previous


def _aliases(scans: Sequence[_Scan]) -> dict[str, str]:
    """Name -> dotted target of each import anywhere in the file, and of each alias
    assignment (``name = a.b``) of a name bound so, transitively: what ``ImportNames`` follows."""
    aliases = {name: target for scan in scans for name, target in scan.imports}
    assignments = [assignment for scan in scans for assignment in scan.assignments]
    grown = True
    while grown:
        grown = False
        for name, dotted in assignments:
            head, _, rest = dotted.partition(".")
            if name not in aliases and head in aliases:
                aliases[name] = aliases[head] + ("." + rest if rest else "")
                grown = True
    return aliases


#: Where a top-level ``def`` or ``class`` (or its decorators) starts, for :func:`may_skip`.
_TOP_DEFINITION = re.compile(r"^(?:@|def[ \t]|class[ \t]|async[ \t]+def[ \t])", re.MULTILINE)
_IDENTIFIER = re.compile(r"(?:\.[ \t]*)?[A-Za-z_][A-Za-z0-9_]*")  # ".batch" an attribute
#: Below this share of lines left out, a selective parse is not worth its ``ast`` pass.
MIN_SKIPPED_SHARE = 0.2


def may_skip(text: str, needs: Sequence[RuleNeed]) -> bool:
    """A cheap first look (regular expressions, no parse): could a plan leave out a fair share
    (:data:`MIN_SKIPPED_SHARE`) of ``text``? Counted on the stretches from one top-level
    ``def``/``class`` to the next whose text (comments and strings too) spells none of the
    rules' site names. False is only an economy (the file is parsed whole, which is always
    right); True is checked by :func:`module_layout` and :func:`plan_parse`."""
    if any(need.scope == MODULE for need in needs):
        return False
    starts = [match.start() for match in _TOP_DEFINITION.finditer(text)]
    if len(starts) < 2:
        return False
    names = frozenset(name for need in needs for name in need.site_names)
    free = 0
    for start, end in zip(starts, starts[1:] + [len(text)]):
        stretch = text[start:end]
        words = {word.replace(" ", "").replace("\t", "") for word in _IDENTIFIER.findall(stretch)}
        if names.isdisjoint(words) and names.isdisjoint(word.lstrip(".") for word in words):
            free += stretch.count("\n")
    return free >= MIN_SKIPPED_SHARE * text.count("\n")


def may_have_no_site(text: str, needs: Sequence[RuleNeed]) -> bool:
    """A cheap first look (one regular expression, no parse): could no unit of ``text`` be
    a site of ``needs``? True when none of their site names is a word of the text outside
    its comments and string literals (as far as a regular expression tells them: a wrong
    guess either way costs time, never a wrong output). Every unit that spells a name, and
    every import or assignment that binds a name to something through one
    (:func:`spelled_names`), spells it in the code. False: the file is parsed whole (a
    short one) or planned as before; True is decided by :func:`has_site` on the layout."""
    if any(need.scope == MODULE for need in needs):
        return False
    pattern = _site_words(frozenset(name.lstrip(".") for need in needs for name in need.site_names))
    return not any(match.lastindex for match in pattern.finditer(text))


#: What the first look skips: comments and string literals (docstrings above all).
_NOT_CODE = (r"#[^\n]*|" r'"""[\s\S]*?"""|' r"'''[\s\S]*?'''|"
             r'"(?:[^"\\\n]|\\.)*"|' r"'(?:[^'\\\n]|\\.)*'")


@lru_cache(maxsize=64)
def _site_words(names: frozenset[str]) -> "re.Pattern[str]":
    """A comment or a string literal, or (group 1) one of ``names`` as a word."""
    words = "|".join(re.escape(name) for name in sorted(names)) or "(?!)"
    return re.compile(rf"{_NOT_CODE}|\b({words})\b")


def has_site(layout: Layout, need: RuleNeed) -> bool:
    """Whether a unit of the file may be a site of ``need``'s rule (any, for the ``module``
    scope): one whose code spells a site name (see ``Rule._scope``)."""
    if need.scope == MODULE:
        return True
    names = spelled_names(layout, need.site_names)
    return any(unit.words & names for unit in layout.units)


def spelled_names(layout: Layout, names: AbstractSet[str]) -> frozenset[str]:
    """``names`` and every name the file binds to something one of whose dotted parts is one
    of them (``d`` after ``from tensorflow.nn import dropout as d``, ``hvd`` after ``import
    horovod.tensorflow as hvd``): what a site of a rule whose sites spell ``names`` spells in
    this file."""
    parts = frozenset(name.lstrip(".@") for name in names)  # ".batch", "@dropout": batch, dropout
    return frozenset(names) | frozenset(
        name for name, target in layout.aliases.items() if not parts.isdisjoint(target.split(".")))


def plan_parse(layout: Layout, needs: Sequence[RuleNeed]) -> Optional["ParsePlan"]:
    """The plan that parses what ``needs`` ask for, or None when that is the whole file."""
    if any(need.scope == MODULE for need in needs):
        return None
    units = layout.units
    chosen = {index for index, unit in enumerate(units) if unit.always}
    for need in needs:
        names = spelled_names(layout, need.site_names)
        sites = {index for index, unit in enumerate(units) if unit.words & names}
        if any(not units[index].definition for index in sites):
            return None  # module-level code flows into all module-level code: read it whole
        if need.scope == LINKED:
            sites = _linked(units, sites)
        chosen |= sites
    if len(chosen) == len(units):
        return None
    return ParsePlan(layout, frozenset(chosen))


def _linked(units: Sequence[Unit], sites: set[int]) -> set[int]:
    """``sites`` and, transitively, the units that define a name they use (a function, a
    class, a module-level variable), and the units that use a function or class among them
    (or a module-level name one of those declares ``global``)."""
    chosen = set(sites)
    grown = True
    while grown:
        uses = frozenset().union(*(units[index].uses for index in chosen))
        defines = frozenset().union(*(units[index].defines for index in chosen
                                      if units[index].definition))
        more = {index for index, unit in enumerate(units) if index not in chosen
                and (unit.defines & uses or unit.uses & defines)}
        chosen |= more
        grown = bool(more)
    return chosen


class ParsePlan:
    """The text to parse for a set of units, and how to put the others back."""

    def __init__(self, layout: Layout, chosen: AbstractSet[int]) -> None:
        self.layout = layout
        self.chosen = chosen
        self.skipped = {index: unit for index, unit in enumerate(layout.units)
                        if index not in chosen}

    @property
    def skipped_lines(self) -> int:
        """How many lines of the file the placeholders stand for."""
        return sum(unit.last - unit.first + 1 for unit in self.skipped.values())

    def text(self) -> str:
        """The file with each skipped unit replaced by ``(__npu_codemod_unit_N__`` ... ``)``
        over the same lines: one statement, so every other line keeps its number."""
        lines = list(self.layout.lines)
        for index, unit in self.skipped.items():
            ending = _ending(lines[unit.last - 1])
            span = unit.last - unit.first
            lines[unit.first - 1] = "(" + _PLACEHOLDER.format(index) + ("\n" if span else ")" + ending)
            for number in range(unit.first, unit.last - 1):
                lines[number] = "\n"
            if span:
                lines[unit.last - 1] = ")" + ending
        return "".join(lines)

    def mark(self, tree: pytree.Node) -> None:
        """Tell ``tree`` (the parse of :meth:`text`) the names its placeholders stand for, so
        ``statements.used_names`` of the module sees them (a rule naming new code)."""
        hidden = frozenset().union(*(unit.names for unit in self.skipped.values()))
        setattr(tree, HIDDEN_NAMES, hidden)

    def restore(self, tree: pytree.Node) -> Optional[list[int]]:
        """Put each skipped unit's own text back in place of its placeholder, in ``tree`` (the
        rewritten parse of :meth:`text`), and say where: the positions in ``tree.children`` of
        the statements that changed (the rest of the tree is as it was). None when a placeholder
        is not where a rule can leave it (a top-level statement of its own): the file must then
        be redone whole."""
        found = {}
        for at, statement in enumerate(tree.children):
            index = _placeholder_index(statement)
            if index is not None:
                found[index] = at
        if set(found) != set(self.skipped):
            return None
        lines, children = self.layout.lines, tree.children
        for index, at in found.items():
            unit = self.skipped[index]
            code = "".join(lines[unit.first - 1:unit.last])
            ending = _ending(code)
            atom, newline = children[at].children
            if newline.type != token.NEWLINE or newline.value != ending:
                return None
            atom.replace(pytree.Leaf(token.NAME, code[:len(code) - len(ending)], prefix=atom.prefix))
        return sorted(found.values())


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""


def _placeholder_index(statement: pytree.Base) -> Optional[int]:
    """N when ``statement`` is the placeholder ``(__npu_codemod_unit_N__)`` of a skipped unit."""
    if statement.type != syms.simple_stmt or len(statement.children) != 2:
        return None
    atom = statement.children[0]
    if atom.type != syms.atom or len(atom.children) != 3 or atom.children[1].type != token.NAME:
        return None
    match = _PLACEHOLDER_NAME.match(atom.children[1].value)
    return int(match.group(1)) if match else None


#: A layout without its lines, in plain values (``marshal`` writes them): per unit ``(first,
#: last, definition, always, uses, words, names, defines)``, the sets spelled as one string of
#: space-separated names (``words`` and ``names`` less the ``uses`` they hold), then the aliases
#: as ``(name, target)`` pairs.
PackedLayout = tuple[tuple[tuple[int, int, bool, bool, str, str, str, str], ...],
                     tuple[tuple[str, str], ...]]


def packed_layout(layout: Layout) -> PackedLayout:
    """``layout`` as :data:`PackedLayout`: a tenth of the memory of its units' sets, for a
    layout kept while other files are read (``ast_handover``)."""
    units = tuple((unit.first, unit.last, unit.definition, unit.always, " ".join(unit.uses),
                   " ".join(unit.words - unit.uses), " ".join(unit.names - unit.uses),
                   " ".join(unit.defines)) for unit in layout.units)
    return units, tuple(layout.aliases.items())


def unpacked_layout(packed: PackedLayout, text: str,
                    words: Optional[dict[str, Optional[str]]] = None) -> Layout:
    """The :class:`Layout` of ``text`` that ``packed`` (:func:`packed_layout`) holds; ``words``
    replaces (or, with None, drops) each listed word of a unit (a mark's stand-in)."""
    units = []
    for first, last, definition, always, uses, more_words, more_names, defines in packed[0]:
        used = frozenset(uses.split())
        spelled = used.union(more_words.split())
        if words and not spelled.isdisjoint(words):
            spelled = frozenset(filter(None, (words.get(word, word) for word in spelled)))
        units.append(Unit(first, last, definition, spelled, used, frozenset(defines.split()),
                          always, used.union(more_names.split())))
    return Layout(tuple(units), dict(packed[1]), tuple(_split_lines(text)))
