"""What the repository analysis read from a file's ``ast``, handed over to the engine.

The analysis parses every TensorFlow file with ``ast`` (``tf_versions.signals_of``); the
engine, later, needed the same tree again for the file's unit layout (``units``), its bindings
when it does not parse it with fissix (``ast_names``), the imports the repository's accessor
functions are read through (``accessors``), and the API audits' uses (``ast_references``):
a second ``ast.parse`` of most files. Keeping every tree until the engine comes to its file
would hold megabytes, so :func:`hand_over` computes, while the analysis has the tree, what
those readers take from it, as plain values packed by ``marshal`` and ``zlib`` (3 KB a
file on tensor2tensor, a third of the marshalled bytes for 45 ms over its 250 files), and
:func:`take` gives them back to the engine, keyed by the file's path and text.

The store (:mod:`.record_store`: outside the C heap) is bounded (:data:`MAX_FILES`,
:data:`MAX_BYTES`: the oldest go first) and each file's record goes when the engine takes it.
Without a record (the analysis's results came from the cache or another worker, ``--engine
full``, a file ``ast`` does not read as fissix does), every reader parses as before: a record
changes no output, only where a value comes from (``tests/test_ast_handover.py`` compares each with its reader's own on every corpus file).
"""

from __future__ import annotations

import ast
import marshal
import zlib
from typing import Iterable, Optional, Sequence

from .ast_names import BindingSteps, binding_steps, bound_names, names_read_alike
from .ast_references import _LONE_CR, AstReading, _top_level_runs, nested_runs, parsed_site_values
from .dead_sites import dead_lines, may_have_dead_lines, tree_dead_lines
from .local_names import KnownReads, module_known_reads, spelled_heads
from .modules import imported_names, module_ast, module_index, statements
from .names import ImportNames
from .qualified import ReferenceSite
from .rebound_references import bindings_key, class_members, rebound_reading
from .record_store import RecordStore
from .rule import FileContext
from .type_aliases import Span, module_type_alias_spans
from .units import Layout, Mark, PackedLayout, module_layout, packed_layout, spelled_by, unpacked_layout

#: The roots the API audits read uses of (``npu100``: TensorFlow's, and Horovod's where a file
#: may bind it): the uses a record keeps are those of the file's own bindings of them.
AUDITED_ROOTS = ("tensorflow", "horovod")
#: At most this many records, and this many bytes of them, are kept (the oldest go first):
#: more than a repository's TensorFlow files are unusual, and a record the engine never takes
#: (its file analysed by this worker and rewritten by another) must not pile up.
MAX_FILES = 4096
MAX_BYTES = 4 * 1024 * 1024

#: A record's key: the file's path, and its text's length and hash.
_Key = tuple[str, int, int]


#: The records, with the marks each layout's stand-in words stand for.
_STORE: RecordStore[_Key, tuple[Mark, ...]] = RecordStore(MAX_FILES, MAX_BYTES)


def _key(path: str, text: str) -> _Key:
    return path, len(text), hash(text)


def hand_over(path: str, text: str, marks: Sequence[Mark]) -> None:
    """Keep what the engine reads from the ``ast`` of the file ``path`` (source ``text``, as
    the analysis read it: :func:`~.modules.module_ast` gives the tree it parsed), with the
    layout's words of each of ``marks`` (every loaded rule's ``_ast_sites``). Nothing is kept
    for a file the engine would not read from ``ast`` (see :func:`record_of`)."""
    record = record_of(path, text, marks)
    if record is None:
        return
    _STORE.put(_key(path, text), zlib.compress(marshal.dumps(record), 1), tuple(marks))


def take(path: str, text: str) -> Optional["Handover"]:
    """The record :func:`hand_over` kept for the file ``path`` whose text is ``text``
    (removed from the store), or None."""
    if not _STORE:
        return None
    stored = _STORE.pop(_key(path, text))
    if stored is None:
        return None
    data, marks = stored
    return Handover(marshal.loads(zlib.decompress(data)), marks)


def clear() -> None:
    """Drop every record (the tests)."""
    _STORE.clear()


def record_of(path: str, text: str, marks: Sequence[Mark]) -> Optional[tuple]:  # type: ignore[type-arg]
    """The plain values :class:`Handover` reads (see :meth:`Handover.__init__`), or None for
    a text the engine reads otherwise: one that does not end with a newline (the engine
    parses it with one), that ``ast`` cannot read, or reads otherwise than fissix (a lone
    carriage return, a name ``ast`` spells otherwise)."""
    if not text.endswith("\n") or _LONE_CR.search(text) or not names_read_alike(text):
        return None
    module = module_ast(text)
    if module is None:
        return None
    stand_ins = [(mark[0], _stand_in(number, mark), mark[2]) for number, mark in enumerate(marks)]
    layout = module_layout(text, stand_ins)
    index = module_index(module)  # the analyses': no walk of its own
    nodes = index.statements()
    steps = binding_steps(text, nodes)
    resolvers = _audited(steps, text)
    sites = tuple(parsed_site_values(text, module, resolvers, index=index)) if resolvers else ()
    reading = (bindings_key(resolvers), sites, _top_level_runs(module), class_members(module),
               nested_runs(nodes, text)) if resolvers else None
    dead = tuple(sorted(tree_dead_lines(module, index))) if may_have_dead_lines(text) else ()
    type_aliases = tuple(module_type_alias_spans(module, text))
    return (packed_layout(layout) if layout is not None else None,
            tuple(imported_names(module, path).items()), steps, reading,
            _spans(nodes), _alias_lines(nodes), dead, type_aliases, _known_reads(text, module, resolvers, sites))


class Handover:
    """One file's record, as the engine's readers ask for its parts."""

    def __init__(self, record: tuple, marks: tuple[Mark, ...]) -> None:  # type: ignore[type-arg]
        layout, imported, steps, reading, spans, aliases, dead, type_aliases, known = record
        self._layout: Optional[PackedLayout] = layout
        self._imported: tuple[tuple[str, str], ...] = imported
        self._steps: BindingSteps = steps
        self._reading = reading
        self._spans: tuple[int, ...] = spans
        self._aliases: tuple[tuple[str, int], ...] = aliases
        self._dead: tuple[int, ...] = dead
        self._type_aliases: tuple[tuple[Span, bool], ...] = type_aliases
        self._known: Optional[tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[int, int], ...]]] = known
        self._marks = marks

    def layout(self, text: str, marks: Sequence[Mark]) -> Optional[Layout]:
        """``module_layout(text, marks)``: ``marks`` must be among those it was handed over
        with (else the layout is made as without a record)."""
        if self._layout is None:
            return None
        stand_ins = [_stand_in(number, mark) for number, mark in enumerate(self._marks)]
        words: dict[str, Optional[str]] = dict.fromkeys(stand_ins)
        for mark in marks:
            if mark not in self._marks:
                return module_layout(text, marks)
            words[stand_ins[self._marks.index(mark)]] = mark[1]
        return unpacked_layout(self._layout, text, words)

    def imported_names(self) -> dict[str, str]:
        """``modules.imported_names(tree, path)`` of the file."""
        return dict(self._imported)

    def import_names(self, root: str, accessors: Optional[dict[str, str]] = None,
                     repository: Optional[dict[str, str]] = None) -> ImportNames:
        """``ast_names.ast_import_names(text, root, accessors, repository)`` of the file."""
        return bound_names(self._steps, root, accessors, repository)

    def reading(self, resolvers: Sequence[ImportNames], text: str) -> Optional[AstReading]:
        """``ast_references.ast_reading(text, resolvers)`` of the file (source ``text``): the
        analysis's when ``resolvers`` bind as the file's own imports do, else read again only
        where a name means something else to them (``rebound_references``: an accessor
        function of the repository reaches the file); None when neither gives it."""
        if self._reading is None:
            return None
        recorded, sites, runs, members, nested = self._reading
        reading = AstReading([ReferenceSite(*site) for site in sites], runs, nested)
        if recorded == bindings_key(resolvers):
            return reading
        return rebound_reading(text, reading, recorded, resolvers, members)

    def statement_spans(self) -> list[tuple[int, int]]:
        """``(first, last)`` lines of each statement of the file (nested ones too) that has no
        body and spans several lines, in the order of ``modules.statements``."""
        spans = self._spans
        return list(zip(spans[::2], spans[1::2]))

    def alias_lines(self) -> list[tuple[str, int]]:
        """``(name, line)`` of each assignment ``name = dotted.value`` (a name or an attribute)
        of the file, in the order of ``modules.statements``."""
        return list(self._aliases)

    def type_alias_spans(self) -> tuple[tuple[Span, bool], ...]:
        """``type_aliases.type_alias_spans`` of the file."""
        return self._type_aliases

    def dead_lines(self) -> frozenset[int]:
        """``dead_sites.dead_lines`` of the file."""
        return frozenset(self._dead)

    def known_reads(self) -> Optional[KnownReads]:
        """``local_names.module_known_reads`` of the file, for the names its audited uses
        may start with (None: no such use)."""
        if self._known is None:
            return None
        names, taken, reads = self._known
        return KnownReads(frozenset(names), frozenset(taken), frozenset(reads))


def statement_spans(ctx: FileContext) -> Optional[list[tuple[int, int]]]:
    """:meth:`Handover.statement_spans` of the file of ``ctx`` as written (from its record, else
    its ``ast``), or None when ``ast`` cannot read it."""
    handover: Optional[Handover] = ctx._handover
    if handover is not None:
        return handover.statement_spans()
    module = module_ast(ctx.original)
    if module is None:
        return None
    spans = _spans(statements(module))
    return list(zip(spans[::2], spans[1::2]))


def file_dead_lines(ctx: FileContext) -> frozenset[int]:
    """:meth:`Handover.dead_lines` of the file of ``ctx`` as written (from its record, else
    its ``ast``)."""
    handover: Optional[Handover] = ctx._handover
    if handover is not None:
        return handover.dead_lines()
    return dead_lines(ctx.original)


def alias_lines(ctx: FileContext) -> list[tuple[str, int]]:
    """:meth:`Handover.alias_lines` of the file of ``ctx`` as written (none when ``ast``
    cannot read it)."""
    handover: Optional[Handover] = ctx._handover
    if handover is not None:
        return handover.alias_lines()
    module = module_ast(ctx.original)
    return list(_alias_lines(statements(module))) if module is not None else []


def file_imported_names(ctx: FileContext) -> dict[str, str]:
    """``modules.imported_names`` of the file of ``ctx`` as written (none when ``ast`` cannot
    read it)."""
    handover: Optional[Handover] = ctx._handover
    if handover is not None:
        return handover.imported_names()
    module = module_ast(ctx.original)
    return imported_names(module, ctx.path) if module is not None else {}


def _stand_in(number: int, mark: Mark) -> str:
    """The layout's word for the ``number``-th mark, ``mark``: no identifier spells it; it
    ends with an ``@name`` word (``units.spelled_by``)."""
    name = spelled_by(mark[1])
    return f"\0{number}" if name is None else f"\0{number}@{name}"


def _audited(steps: BindingSteps, text: str) -> list[ImportNames]:
    """The file's bindings of :data:`AUDITED_ROOTS`, as the audits read them with no accessor
    function (Horovod's only where an import may bind it)."""
    roots = AUDITED_ROOTS if "horovod" in text or not text.isascii() else AUDITED_ROOTS[:1]
    return [bound_names(steps, root) for root in roots]


def _known_reads(text: str, module: ast.Module, resolvers: Sequence[ImportNames],
                 sites: Sequence[tuple]) -> Optional[tuple]:  # type: ignore[type-arg]
    """:meth:`Handover.known_reads`, as plain values: of the names the audited uses may start
    with (the bindings' and the sites' first names)."""
    heads = {name for resolver in resolvers for name in resolver.heads}
    heads.update(spelled_heads(site[4] for site in sites))  # ReferenceSite.spelled
    if not heads:
        return None
    known = module_known_reads(text, module, heads)
    return tuple(sorted(known.names)), tuple(sorted(known.taken)), tuple(sorted(known.reads))


def _spans(nodes: Iterable[ast.stmt]) -> tuple[int, ...]:
    """:meth:`Handover.statement_spans`, flat, of a module's :func:`~.modules.statements`."""
    found: list[int] = []
    for node in nodes:
        if not hasattr(node, "body") and node.end_lineno and node.end_lineno > node.lineno:
            found += (node.lineno, node.end_lineno)
    return tuple(found)


def _alias_lines(nodes: Iterable[ast.stmt]) -> tuple[tuple[str, int], ...]:
    """:meth:`Handover.alias_lines` of a module's :func:`~.modules.statements`."""
    return tuple((node.targets[0].id, node.lineno) for node in nodes
                 if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, (ast.Name, ast.Attribute)))
