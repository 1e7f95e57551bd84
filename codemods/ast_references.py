"""Every reference to a module's API in a file, found with CPython's ``ast`` instead of fissix.

:func:`ast_references` answers what :func:`~npu_codemod.codemods.qualified.references_under`
answers on the fissix tree (``Reference.site`` of each), for a rule that only reads: the same
sites, in the same order, with the same names, columns and flags (a test runs both over every
corpus file and golden case). ``ast.parse`` is some 20-50x faster than a fissix parse, and the
file's text is whole in every engine mode. The names resolve through the same
:class:`~npu_codemod.codemods.names.ImportNames` (``ctx.names("tensorflow")``).

fissix's answer is matched where the two trees differ: fissix columns count characters (``ast``
counts UTF-8 bytes), a name in parentheses or an f-string is another node there, and two
places that read a name are not references to it there (the right of ``**``, what ``await``
applies to). A name a statement binds (any target: ``ast``'s ``Store`` and ``Del``) is no
reference; a bare base class (``class A(Model):``) and a bare annotation (``def f(x: Tensor)
-> Tensor``) are.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Collection, Iterable, Optional, Sequence, Union

from .ast_names import names_read_alike
from .ast_type_uses import in_typing_type
from .introspection import INTROSPECTION_ATTRIBUTES, TYPE_CHECKS, is_introspection_call
from .local_names import without_shadowed
from .modules import ModuleIndex, child_fields, module_ast, node_fields, statements
from .names import ACCESSOR_CALL, ImportNames, ast_dotted_name
from .qualified import ReferenceSite, references_under
from .rule import FileContext
from .type_aliases import with_type_aliases

#: A carriage return that does not end a CRLF: ``ast`` counts it as a line break, fissix not.
_LONE_CR = re.compile(r"\r(?!\n)")
#: What may separate two tokens: spaces, line continuations and comments.
_GAP = re.compile(r"(?:[ \t\f\r\n\\]|#[^\r\n]*)+")
#: Parents whose child, when it starts where they start, is the head of one fissix ``power``
#: node with them (a trailer ``.x``, ``(...)``, ``[...]`` or ``** y`` follows it).
_TRAILED = {ast.Attribute: "value", ast.Call: "func", ast.Subscript: "value", ast.BinOp: "left"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NO_NAMES = (ast.JoinedStr, ast.Import, ast.ImportFrom, ast.expr_context, ast.operator,
             ast.boolop, ast.unaryop, ast.cmpop, ast.Constant, ast.Name)
#: The contexts of a name that its statement binds (``x = ...``, ``for x in``, ``del x``).
_BINDS = (ast.Store, ast.Del)


def _node_types(base: type) -> frozenset[type]:
    """``base`` and every node class below it."""
    found, stack = set(), [base]
    while stack:
        kind = stack.pop()
        found.add(kind)
        stack.extend(kind.__subclasses__())
    return frozenset(found)


#: The node types a walk enters (the others hold no bound name, or are names).
_WALKED = _node_types(ast.AST).difference(*map(_node_types, _NO_NAMES))
_STATEMENTS = _node_types(ast.stmt)
#: The fields to walk of each node type (``node_fields``: not an attribute's name, a
#: keyword's...), looked up once per type.
_FIELDS: dict[type, tuple[str, ...]] = {kind: node_fields(kind) for kind in _WALKED}

#: What has a position in the text.
Spot = Union[ast.expr, ast.stmt, ast.arg, ast.keyword, ast.excepthandler]


def ast_references(text: str, resolvers: Sequence[ImportNames]) -> Optional[list[ReferenceSite]]:
    """Every reference in ``text`` (a module's source) to a name one of ``resolvers`` binds,
    in source order, as ``[reference.site for reference in references_under(tree,
    resolvers)]`` gives them on the fissix tree of the same text; None when ``ast`` cannot
    read the file as fissix does (not Python 3, a lone carriage return, thousands of terms
    in one expression, a name ``ast`` spells otherwise: :func:`~.ast_names.names_read_alike`):
    then ask the tree.

    Names in f-strings are not references (as with fissix: :func:`fstring_references`)."""
    module = module_ast(text)
    if module is None or _LONE_CR.search(text) or not names_read_alike(text):
        return None
    return parsed_references(text, module, resolvers)


def parsed_references(text: str, module: ast.Module, resolvers: Sequence[ImportNames],
                      heads: Optional[Collection[str]] = None,
                      index: Optional[ModuleIndex] = None) -> list[ReferenceSite]:
    """:func:`ast_references` of ``text`` whose ``ast`` is ``module`` (``ast.parse(text)``);
    with ``heads``, only the sites that start with one of those names (a site depends on its
    own name's resolver only: the others are not looked for). With ``index``, ``module``'s
    (:func:`~.modules.module_index`), the walk skips the statements that hold no bound name,
    rather than those whose lines do not spell one: the same sites where ``ast`` reads each
    name as the text spells it (:func:`~.ast_names.names_read_alike`), without a search of
    the text for the names."""
    return [ReferenceSite(*values) for values in parsed_site_values(text, module, resolvers, heads, index)]


#: A :class:`~.qualified.ReferenceSite`'s fields, in order: what the hand-over's record keeps.
SiteValues = tuple[int, int, int, str, str, bool, bool, bool]


def parsed_site_values(text: str, module: ast.Module, resolvers: Sequence[ImportNames],
                       heads: Optional[Collection[str]] = None,
                       index: Optional[ModuleIndex] = None) -> list[SiteValues]:
    """:func:`parsed_references`, each site as the tuple of its fields (no site is made: the
    hand-over's record keeps the values)."""
    by_head = {name: resolver for resolver in reversed(resolvers) for name in resolver.heads}
    if heads is not None:
        by_head = {name: resolver for name, resolver in by_head.items() if name in heads}
    if not by_head:
        return []
    finder = _Finder(text, by_head, index)
    name_site = finder._name_site
    found = [site for site in map(name_site, finder._walk(module)) if site is not None]
    found.sort(key=_LINE_COLUMN)
    return found


_LINE_COLUMN = itemgetter(0, 1)  # a site's line and column


@dataclass(frozen=True)
class AstReading:
    """A module's references read with ``ast`` (:func:`ast_references`), and where its
    top-level statements are: ``(first, last)`` lines of each run of them that share lines
    (``a = 1; b = 2``), for the runs whose first statement starts its line (column 0); and
    ``nested``, the same of the statements in the blocks of compound statements, at any
    depth (:func:`nested_runs`, flat). A rewrite of the module can be read again only where
    it changed (``rewritten_references``)."""

    sites: list[ReferenceSite]
    statements: tuple[tuple[int, int], ...]
    nested: tuple[int, ...] = ()


def ast_reading(text: str, resolvers: Sequence[ImportNames]) -> Optional[AstReading]:
    """:func:`ast_references` of ``text`` with where its statements are; None when that is
    None."""
    module = module_ast(text)
    if module is None or _LONE_CR.search(text):
        return None
    return AstReading(parsed_references(text, module, resolvers), _top_level_runs(module),
                      nested_runs(statements(module), text))


def _top_level_runs(module: ast.Module) -> tuple[tuple[int, int], ...]:
    """The ``(first, last)`` lines of each run of top-level statements that share lines
    (decorators included), those whose first statement starts at column 0."""
    return statement_runs(module.body, 0)


#: The fields of each compound statement type that hold a block, or blocks' holders
#: (``handlers``, ``cases``): looked up once per type.
_BLOCK_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    kind: (tuple(field for field in ("body", "orelse", "finalbody") if field in _FIELDS[kind]),
           tuple(field for field in ("handlers", "cases") if field in _FIELDS[kind]))
    for kind in _STATEMENTS if kind in _FIELDS and {"body", "cases"}.intersection(_FIELDS[kind])}


def nested_runs(nodes: Iterable[ast.stmt], text: str) -> tuple[int, ...]:
    """``first, last, first, last...``: the lines of each run of statements that share lines
    in a block of one of the compound statements ``nodes`` (a module's, nested ones too), for
    the blocks that start on a line of their own (not ``if x: y``) and the runs whose first
    statement starts its line (as :func:`statement_runs`), in no order (no two start on one
    line: a block starts below its statement's first line). Asked of every file the analysis
    reads (its record), read only for one a rule rewrites: kept flat, sorted when read."""
    lines: Optional[list[str]] = None
    found: list[int] = []
    fields_of = _BLOCK_FIELDS
    for node in nodes:
        fields = fields_of.get(type(node))
        if fields is None:
            continue
        if lines is None:
            lines = text.split("\n")
        blocks = [getattr(node, field) for field in fields[0]]
        for holders in fields[1]:
            blocks += [holder.body for holder in getattr(node, holders)]
        for block in blocks:
            if not block:
                continue
            line = lines[block[0].lineno - 1]
            column = block[0].col_offset
            if len(line) - len(line.lstrip(" \t\f")) == column:
                _add_runs(found, block, column)
    return tuple(found)


_DECORATED = frozenset(_DEFINITIONS)


def _add_runs(found: list[int], block: list[ast.stmt], column: int) -> None:
    """Add to ``found`` the ``first, last`` of :func:`statement_runs` ``(block, column)``."""
    first = last = 0
    start = -1  # the column of the run's first statement
    for statement in block:
        line = statement.lineno
        if type(statement) in _DECORATED and statement.decorator_list:  # type: ignore[attr-defined]
            line = statement.decorator_list[0].lineno  # type: ignore[attr-defined]  # they come first
        end = statement.end_lineno or line
        if line <= last:
            last = end if end > last else last
            continue
        if start == column:
            found += (first, last)
        first, last, start = line, end, statement.col_offset
    if start == column:
        found += (first, last)


def statement_runs(body: Sequence[ast.stmt], column: int) -> tuple[tuple[int, int], ...]:
    """The ``(first, last)`` lines of each run of the statements ``body`` (one block's) that
    share lines (decorators included), those whose first statement starts at ``column``."""
    runs: list[tuple[int, int, int]] = []  # first, last, the first statement's column
    for statement in body:
        decorators = getattr(statement, "decorator_list", None)
        first = min([statement.lineno] + [decorator.lineno for decorator in decorators]) \
            if decorators else statement.lineno
        last = statement.end_lineno or statement.lineno
        if runs and first <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(last, runs[-1][1]), runs[-1][2])
        else:
            runs.append((first, last, statement.col_offset))
    return tuple((first, last) for first, last, start in runs if start == column)


def reads_whole_tree(ctx: FileContext) -> bool:
    """Whether the audits read the file's uses from its fissix tree (it holds the whole file:
    no ``ast`` of it was made) rather than from ``ast`` (:func:`site_references`)."""
    return not ctx._unparsed and (ctx.parsed or ctx.original) == ctx.original


def original_reading(ctx: FileContext, *resolvers: ImportNames) -> Optional[AstReading]:
    """:func:`ast_reading` of the file as it was (``ctx.analysis(original_reading, *resolvers)``:
    read once for its uses and for those of its rewrite): the repository analysis's, when it
    kept one (``ast_handover``), else its own; None for a file parsed whole with no record
    (no ``ast`` of it is made: its fissix tree holds the same uses) or that ``ast`` cannot read."""
    handover = ctx._handover
    reading = handover.reading(resolvers, ctx.original) if handover is not None else None
    if reading is None and not reads_whole_tree(ctx):
        reading = ast_reading(ctx.original, resolvers)
    return reading


def site_references(ctx: FileContext, resolvers: Sequence[ImportNames]) -> list[ReferenceSite]:
    """Every reference to a name one of ``resolvers`` binds in the file as written, in source
    order, for a rule that only reads them (the API audits): from ``ast``, which gives the
    same sites as the fissix tree (the analysis's reading, or the file's own ``ast`` when the
    engine did not parse it whole), else from the tree, which then holds the whole file;
    ``ast`` cannot read Python 2 code, whose file is always parsed whole. A binding the module
    reads only as a type (``NextState = tf.keras.layers.Layer``) is a type use
    (``type_aliases``: a fact of the whole module, which neither finder sees). A name a
    function, lambda or comprehension binds itself (``def __init__(self, batch_norm=0)`` under
    ``from tensorflow.contrib.layers import batch_norm``) is no reference there
    (``local_names``: a fact of the function, which a reading of a statement alone does not
    see)."""
    reading = ctx.analysis(original_reading, *resolvers)
    if reading is None:
        sites = [reference.site for reference in references_under(ctx.tree, resolvers)]
    else:
        sites = reading.sites
    handover = ctx._handover
    sites = without_shadowed(ctx.original, sites, handover.known_reads() if handover is not None else None)
    return with_type_aliases(ctx.original, sites,
                             handover.type_alias_spans() if handover is not None else None)


class SourcePositions:
    """Positions in a module's text: ``ast``'s (line, UTF-8 byte column) as characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self._starts: list[int] = []

    @property
    def starts(self) -> list[int]:
        """The index in the text where each line starts (line ``n`` at ``starts[n - 1]``), and
        one past the end of the text last."""
        if not self._starts:  # in C: no Python step per line
            self._starts = list(accumulate(map((1).__add__, map(len, self.lines)), initial=0))
        return self._starts

    def column(self, line: int, offset: int) -> int:
        """The character column of the byte ``offset`` on ``line`` (1-based)."""
        text = self.lines[line - 1]
        if offset == 0 or text.isascii():
            return offset
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))

    def offset(self, line: int, byte_column: int) -> int:
        """The index in the text of ``line``'s byte ``byte_column``."""
        return self.starts[line - 1] + self.column(line, byte_column)

    def start(self, node: Spot) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: Spot) -> int:
        return self.offset(node.end_lineno or node.lineno, node.end_col_offset or 0)

    def gap(self, start: int, end: int) -> str:
        """The punctuation in ``text[start:end]``: what separates two nodes (``"),("``)."""
        return _GAP.sub("", self.text[start:end])


class _Finder:
    """One walk of a module's ``ast``: its parents (:meth:`_walk`), then the site of each
    bound name (:meth:`_name_site`)."""

    def __init__(self, text: str, by_head: dict[str, ImportNames],
                 index: Optional[ModuleIndex] = None) -> None:
        self.source = SourcePositions(text)
        self.by_head = by_head
        self.parents: dict[ast.AST, tuple[ast.AST, str]] = {}
        self._heads: list[int] = []  # where the text spells a bound name (no index)
        self._name_lines: Optional[list[int]] = None  # the lines of the bound names (the index)
        if index is None:
            self._heads = spelled_at(text, by_head)
        else:
            self._name_lines = sorted([node.lineno for node in index.nodes(ast.Name) if node.id in by_head])
        self._qualified: dict[tuple[str, str], Optional[str]] = {}  # ``qualify``'s answers

    def _walk(self, module: ast.Module) -> list[ast.Name]:
        """The bound names of ``module``, their parents recorded: statements whose lines spell
        no bound name are skipped (with the index, those that hold none), and so is what cannot
        hold a name (f-strings, imports, constants)."""
        heads, parents = self.by_head, self.parents
        may_name = self._may_name if self._name_lines is None else self._holds_name
        stack: list[ast.AST] = [module]
        pop, push = stack.pop, stack.append
        found: list[ast.Name] = []
        name, walked, statements, fields_of = ast.Name, _WALKED, _STATEMENTS, _FIELDS
        while stack:  # the hot loop of the audits' uses: kept flat
            node = pop()
            kind = type(node)
            for field in fields_of.get(kind) or child_fields(kind):
                value = getattr(node, field)  # a parsed tree sets every field
                for child in value if type(value) is list else (value,):
                    kind = type(child)
                    if kind is name:
                        if child.id in heads:
                            parents[child] = (node, field)
                            found.append(child)
                    elif kind in walked and (kind not in statements or may_name(child)):
                        parents[child] = (node, field)
                        push(child)
        return found

    def _may_name(self, statement: ast.stmt) -> bool:
        """Whether a line of ``statement`` (its decorators included) spells a bound name."""
        decorators = getattr(statement, "decorator_list", None)
        first = min([statement.lineno] + [decorator.lineno for decorator in decorators]) \
            if decorators else statement.lineno
        starts, heads = self.source.starts, self._heads
        index = bisect_left(heads, starts[first - 1])
        return index < len(heads) and heads[index] < starts[statement.end_lineno or statement.lineno]

    def _holds_name(self, statement: ast.stmt) -> bool:
        """:meth:`_may_name` from the index: whether a bound name lies on a line of
        ``statement`` (its decorators included)."""
        decorators = getattr(statement, "decorator_list", None)
        first = min([statement.lineno] + [decorator.lineno for decorator in decorators]) \
            if decorators else statement.lineno
        lines = self._name_lines or []
        index = bisect_left(lines, first)
        return index < len(lines) and lines[index] <= (statement.end_lineno or statement.lineno)

    def _site(self, head: Union[ast.Name, ast.arg], name: str, last: Spot, called: bool = False,
              base_class: bool = False, type_use: bool = False) -> Optional[SiteValues]:
        """The site (its values) of ``name`` spelled from ``head`` to ``last`` (a name or an
        attribute)."""
        spelled_head = head.id if isinstance(head, ast.Name) else head.arg
        key = (spelled_head, name)
        if key in self._qualified:  # a file spells the same few hundred names again and again
            qualified = self._qualified[key]
        else:
            qualified = self._qualified[key] = self.by_head[spelled_head].qualify(name)
        if not qualified:
            return None
        line, source = head.lineno, self.source
        column = source.column(line, head.col_offset)
        end = source.column(line, last.end_col_offset or 0) if last.end_lineno == line else column
        return line, column, end, qualified, name, called, base_class, type_use

    def _name_site(self, name: ast.Name) -> Optional[SiteValues]:
        """The site (its values) that the bound ``name`` starts, if it starts one (see the
        module's doc)."""
        chain, parts = _climb_chain(name, self.parents, self.by_head[name.id])
        top = self._power(chain, name)
        parent, field = self.parents[top]
        if isinstance(parent, ast.Await) and self._awaited(parent, top):
            return None  # fissix: ``await tf.f()`` is one node with the await, no reference
        if _is_decorator(chain, self.parents):
            return self._site(name, ".".join(parts), chain)
        if top is name and not self._reads(name, parent, field):
            return None
        called = top is not chain and self._called(chain)
        base_class = self._is_base(top, parent, field)
        type_use = not called and (base_class or self._is_type_argument(top) or self._in_annotation(top)
                                   or in_typing_type(top, self.parents) or self._introspected(chain, top))
        return self._site(name, ".".join(parts), chain, called, base_class, type_use)

    def _power(self, chain: ast.expr, head: ast.Name) -> ast.expr:
        """The outermost node of what fissix makes one ``power`` node with ``chain``: the
        trailers that follow it without parentheses between (``tf.a(x)[0].b ** 2``)."""
        node = chain
        while True:
            parent, field = self.parents[node]
            if not isinstance(parent, ast.expr) or _TRAILED.get(type(parent)) != field \
                    or not _same_start(parent, head) \
                    or (isinstance(parent, ast.BinOp) and not isinstance(parent.op, ast.Pow)):
                return node
            node = parent

    def _called(self, chain: ast.expr) -> bool:
        parent, field = self.parents[chain]
        return isinstance(parent, ast.Call) and field == "func" and _same_start(parent, chain)

    def _awaited(self, awaited: ast.Await, node: ast.expr) -> bool:
        """Whether ``node`` follows ``await`` with no parenthesis between."""
        source = self.source
        return source.gap(source.start(awaited) + len("await"), source.start(node)) == ""

    def _reads(self, name: ast.Name, parent: ast.AST, field: str) -> bool:
        """Whether a bare ``name`` (no trailer) is a reference where fissix's
        ``_is_plain_reference`` reads it: not a name its statement binds, not the right of
        ``**``."""
        if isinstance(name.ctx, _BINDS):
            return False
        if isinstance(parent, ast.BinOp) and field == "right" and isinstance(parent.op, ast.Pow):
            source = self.source
            return not source.gap(source.end(parent.left), source.start(name)).endswith("**")
        return True

    def _direct(self, holder: Union[ast.Call, ast.ClassDef], node: ast.expr) -> bool:
        """Whether the argument ``node`` of ``holder`` is not in parentheses of its own."""
        source = self.source
        start = source.start(node)
        before = [source.end(other) for other in _arguments(holder)
                  if source.end(other) <= start]
        if before:
            return source.gap(max(before), start).rpartition(",")[2] == ""
        if isinstance(holder, ast.Call):
            opening = source.end(holder.func)
        else:
            opening = source.text.index("(", source.start(holder))
        return source.gap(opening, start).lstrip(")") == "("

    def _is_base(self, top: ast.expr, parent: ast.AST, field: str) -> bool:
        return isinstance(parent, ast.ClassDef) and field == "bases" and self._direct(parent, top)

    def _is_type_argument(self, node: ast.expr) -> bool:
        """fissix's ``is_type_argument``: ``node`` is the class argument of ``isinstance`` or
        ``issubclass``, alone or in a tuple of them."""
        parent, field = self.parents[node]
        while isinstance(parent, ast.Tuple):  # ``ast`` drops a lone ``(node)``'s parentheses
            node = parent
            parent, field = self.parents[node]
        return isinstance(parent, ast.Call) and field == "args" and len(parent.args) > 1 \
            and parent.args[1] is node and isinstance(parent.func, ast.Name) \
            and parent.func.id in TYPE_CHECKS

    def _introspected(self, chain: ast.expr, top: ast.expr) -> bool:
        """fissix's ``Reference._introspected``: an introspection attribute follows the name
        (``tf.keras.layers.Layer.__dict__``), or the name alone is the first argument of
        ``dir``, ``inspect.getmembers``... (``codemods/introspection``)."""
        parent, field = self.parents[chain]
        if isinstance(parent, ast.Attribute) and parent.attr in INTROSPECTION_ATTRIBUTES:
            return _same_start(parent, chain)
        if top is not chain:
            return False
        parent, field = self.parents[top]
        return isinstance(parent, ast.Call) and field == "args" and parent.args[0] is top \
            and self._direct(parent, top) and is_introspection_call(ast_dotted_name(parent.func))

    def _in_annotation(self, node: ast.expr) -> bool:
        """fissix's ``in_annotation``: ``node`` is in a parameter's, a return's or a
        variable's annotation."""
        parent, field = self.parents[node]
        while isinstance(parent, _IN_EXPRESSIONS):
            parent, field = self.parents[parent]
        return (field == "annotation" and isinstance(parent, (ast.arg, ast.AnnAssign))) \
            or (field == "returns" and isinstance(parent, _DEFINITIONS))


#: What an annotation may hold around a name (fissix's ``in_annotation`` climbs through them).
_IN_EXPRESSIONS = (ast.expr, ast.comprehension, ast.keyword)


#: What may not come right before a name spelled as a word (``x.tf``, ``xtf``: not ``tf``).
_WORD_BEFORE = re.compile(r"[\w.]")


def spelled_at(text: str, names: Collection[str]) -> list[int]:
    r"""Where (sorted indexes) ``text`` spells one of the names as a word: what the pattern
    ``(?<![\w.])(?:names)\b`` finds. Its look-behind is tested on each match of the rest,
    which the regular expression engine searches for as a literal (three times faster)."""
    pattern = re.compile(r"(?:%s)\b" % "|".join(
        re.escape(name) for name in sorted(names, key=len, reverse=True)))
    before = _WORD_BEFORE.match
    return [start for start in (match.start() for match in pattern.finditer(text))
            if not start or before(text, start - 1) is None]


def _climb_chain(name: ast.Name, parents: dict[ast.AST, tuple[ast.AST, str]],
                 resolver: ImportNames) -> tuple[ast.expr, list[str]]:
    """The longest ``name.a.b`` with no parentheses between its parts, and its parts; through
    the ``()`` of a module accessor function (``contrib.tpu().TPUEstimator``: ``tpu()``)."""
    node: ast.expr = name
    parts = [name.id]
    while True:
        parent, field = parents[node]
        if isinstance(parent, ast.Call) and field == "func" and not parent.args \
                and not parent.keywords and _same_start(parent, name) \
                and resolver.accessor(".".join(parts)) is not None \
                and isinstance(parents[parent][0], ast.Attribute) and parents[parent][1] == "value":
            parts[-1] += ACCESSOR_CALL
            parent, field = parents[parent]
        if not isinstance(parent, ast.Attribute) or field != "value" \
                or not _same_start(parent, name) or parent.attr in INTROSPECTION_ATTRIBUTES:
            return node, parts
        parts.append(parent.attr)
        node = parent


def _is_decorator(chain: ast.expr, parents: dict[ast.AST, tuple[ast.AST, str]]) -> bool:
    """Whether ``chain`` is a decorator's name (``@tf.function``, ``@tf.function(...)``)."""
    parent, field = parents[chain]
    if isinstance(parent, ast.Call) and field == "func":
        parent, field = parents[parent]
    return field == "decorator_list" and isinstance(parent, _DEFINITIONS)


def _arguments(holder: Union[ast.Call, ast.ClassDef]) -> list[ast.expr]:
    if isinstance(holder, ast.Call):
        return [*holder.args, *(keyword.value for keyword in holder.keywords)]
    return [*holder.bases, *(keyword.value for keyword in holder.keywords)]


def _same_start(node: Spot, other: Spot) -> bool:
    """Whether two nodes start at the same place (a parenthesis would move the outer one)."""
    return node.col_offset == other.col_offset and node.lineno == other.lineno
