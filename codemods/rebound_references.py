"""A module's references read through other bindings than those of a recorded reading.

The repository analysis records each file's API uses as the file's own imports bind them
(``ast_handover``), before it knows every module accessor function of the repository
(``accessors``: ``def slim(): return contrib_slim`` in one file, ``contrib.slim().conv2d``
in many). Where the engine then reads the file through bindings that differ (the accessors'
spellings, a name bound to an accessor's call: ``tpu_lib = contrib.tpu()``),
:func:`rebound_reading` gives ``ast_reading(text, resolvers)`` from the recorded reading
and the top-level statements that spell a name whose meaning changed, instead of an
``ast.parse`` and a walk of the whole file (tensor2tensor's ``common_layers.py`` is 139 KB).

Why that is the same answer: the site a bound name starts depends on the name's resolver
alone (``_Finder._name_site``: its binding of the name, which qualifies the site, and the
accessor spellings that start with the name, which the chain climbs through), and on the
statement it is in. So a recorded site of a name that means the same to both sets of
resolvers (:func:`meanings`) is the site ``ast_reading`` gives; a recorded site of a name
the resolvers no longer bind is none; and the sites of the other names are in top-level
statements whose lines spell them (a reference spells its name as a word), which are read
again, each alone: a top-level statement is made of its own tokens and parses alone into
itself on the same lines and columns (see ``rewritten_references``). A class is read again
only in the runs of its body's statements that spell them (tensor2tensor's model classes run
to thousands of lines), each alone under an ``if 1:`` line, which opens a block at any
indentation as the class did, one line above: the same statements on the same lines and
columns. Where that does not hold (a word outside the recorded statements, a line continued
into one, a statement that does not parse alone), there is no answer: the caller reads the
whole file.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import defaultdict
from typing import Optional, Sequence

from .ast_references import AstReading, SourcePositions, parsed_references, spelled_at, statement_runs
from .names import ImportNames
from .qualified import ReferenceSite
from .rewritten_references import moved_sites, parsed_piece, skipped_line

#: What a reading's sites depend on in its resolvers, in their order: each one's root,
#: bindings and accessors, sorted (a resolver that binds nothing reads nothing: left out).
Bindings = tuple[tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]], ...]
#: What a name means to the resolver that reads it: the resolver's root, the name's
#: binding, and the accessor spellings that start with it with what each returns.
Meaning = tuple[str, Optional[str], tuple[tuple[str, str], ...]]
#: Lines ``(first, last)`` of a run of statements.
Run = tuple[int, int]
#: Each long top-level class whose body starts below its header: its first line (decorators
#: included), and the runs of its body's statements (:func:`class_members`).
Members = tuple[tuple[int, tuple[Run, ...]], ...]
#: A class is kept with its members' runs from this many lines on (every class's made the
#: records of the bench's real-code corpus 6% larger, for little to spare in a short class).
MEMBERS_MIN_LINES = 100
#: What is read again: a run's lines, and whether it is a class's member (read in a block).
_Piece = tuple[int, int, bool]
#: The line that opens a block for a class member read alone.
_BLOCK = "if 1:\n"


def bindings_key(resolvers: Sequence[ImportNames]) -> Bindings:
    """:data:`Bindings` of ``resolvers``: two readings through the same are the same."""
    return tuple((resolver.root, tuple(sorted(resolver.bindings.items())),
                  tuple(sorted(resolver.accessors.items())))
                 for resolver in resolvers if resolver.bindings or resolver.accessors)


def meanings(bindings: Bindings) -> dict[str, Meaning]:
    """Each name a reference may start with -> what it means to the first resolver that
    has it (as ``parsed_references`` picks a name's resolver)."""
    found: dict[str, Meaning] = {}
    for root, bound, accessors in reversed(bindings):
        spelled_from: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for spelled, target in accessors:
            spelled_from[spelled.split(".")[0]].append((spelled, target))
        targets = dict(bound)
        for name in targets.keys() | spelled_from.keys():
            found[name] = (root, targets.get(name), tuple(spelled_from.get(name, ())))
    return found


def class_members(module: ast.Module) -> Members:
    """:data:`Members` of ``module``'s top-level classes of :data:`MEMBERS_MIN_LINES` or more
    (read once, with the file's record; a shorter class is read again whole)."""
    return tuple((min([statement.lineno, *(decorator.lineno for decorator in statement.decorator_list)]),
                  statement_runs(statement.body, statement.body[0].col_offset))
                 for statement in module.body
                 if isinstance(statement, ast.ClassDef) and statement.body[0].lineno > statement.lineno
                 and (statement.end_lineno or 0) - statement.lineno >= MEMBERS_MIN_LINES)


def rebound_reading(text: str, reading: AstReading, recorded: Bindings,
                    resolvers: Sequence[ImportNames], members: Members = ()) -> Optional[AstReading]:
    """``ast_reading(text, resolvers)``, where ``reading`` is ``text``'s read through
    resolvers of ``recorded`` bindings (``members``: its classes'); None where a statement
    would need the whole text."""
    was, now = meanings(recorded), meanings(bindings_key(resolvers))
    changed = {name for name, meaning in now.items() if was.get(name) != meaning}
    sites = [site for site in reading.sites if site_head(site) in now and site_head(site) not in changed]
    if not changed:
        return AstReading(sites, reading.statements, reading.nested)
    lines = text.split("\n")
    pieces = _spelling_statements(text, lines, reading.statements, members, changed)
    if pieces is None:
        return None
    for first, last, member in pieces:
        piece = (_BLOCK if member else "") + "\n".join(lines[first - 1:last])
        module = parsed_piece(piece)
        if module is None:
            return None
        sites += moved_sites(parsed_references(piece, module, resolvers, changed), first - 1 - member)
    return AstReading(sorted(sites, key=lambda site: (site.line, site.column)), reading.statements,
                      reading.nested)


def site_head(site: ReferenceSite) -> str:
    """The name a site starts with (``contrib`` of ``contrib.slim().conv2d``)."""
    return site.spelled.partition(".")[0].partition("(")[0]


def _spelling_statements(text: str, lines: list[str], statements: Sequence[Run], members: Members,
                         names: set[str]) -> Optional[list[_Piece]]:
    """The top-level ``statements`` whose lines spell one of ``names`` as a word, or of a
    class, the runs of its ``members`` that do (the whole class where another of its lines
    does: its header); None when a code line outside them does, or a line continues into one."""
    starts = SourcePositions(text).starts
    firsts = [first for first, _ in statements]
    classes = dict(members)
    chosen: set[_Piece] = set()
    for at in spelled_at(text, names):
        line = bisect_right(starts, at)
        if skipped_line(lines[line - 1]):
            continue  # a comment, or a string's line: no reference
        index = bisect_right(firsts, line) - 1
        if index < 0 or statements[index][1] < line:
            return None  # code no recorded statement holds
        first, last = statements[index]
        runs = classes.get(first)
        chosen.add((runs and _member_at(runs, line)) or (first, last, False))
    whole = [(first, last) for first, last, member in chosen if not member]
    pieces = sorted(piece for piece in chosen if not piece[2] or not any(
        first <= piece[0] <= last for first, last in whole))  # a class read whole holds its members
    if any(first > 1 and lines[first - 2].rstrip("\r").endswith("\\") for first, _, _ in pieces):
        return None
    return pieces


def _member_at(runs: Sequence[Run], line: int) -> Optional[_Piece]:
    """The run of ``runs`` (a class's members) that spans ``line``, if one does."""
    index = bisect_right([first for first, _ in runs], line) - 1
    if index >= 0 and runs[index][1] >= line:
        return (*runs[index], True)
    return None
