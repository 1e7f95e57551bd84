"""The references in a rewrite of a module, read again only where the rewrite changed it.

The audits count the API uses of the file as the run writes it (``written``): :func:`~.
ast_references.ast_references` of that text. A rewrite changes a few lines of a long file (a
dropout call, a session's config), and reading the whole text again costs an ``ast.parse`` and
a walk of it, a fifth of the audit of a rewritten file. :func:`rewritten_references` gives the
same answer from the original's reading: a top-level statement the rewrite left as it was (its
lines, in a row, compared with the original's) has the original's references, moved by the
lines inserted or removed above it; only the rest (the changed statements and the lines
between) is parsed, piece by piece, and of a piece only what is not a nested statement as the
original had it (a function's unchanged lines around the one a rule rewrote: each run of them
is a ``pass`` there, :func:`_skeleton_sites`). The line map (``origin``) only says where to
look: the comparison of the lines is what the answer rests on.

Why that is the same answer: a piece is whole lines, every one of which ends with no line
continuation (``\\``) before the next region, and each piece parses on its own at top level,
so the tokenizer starts every region afresh, at column 0 outside any bracket or string, exactly
as when the piece or the original statement is read alone; a top-level statement is made of
its own tokens only, and a region (a piece that parses alone, or a statement of the original)
cannot start with what would continue the previous one (``else``, ``except``: no statement
starts so). So the whole text parses, into the regions' statements in order, and a reference's
site depends on its own statement's text only. Where any of that does not hold (a piece does
not parse alone, a line continues, a carriage return, lines that differ), the whole text is
read the long way: the answer is :func:`ast_references`'s in every case
(``tests/test_rewritten_references.py`` compares both on every form of edit).
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from typing import Optional, Sequence

from .ast_references import AstReading, ast_references, parsed_references
from .modules import statements
from .names import ImportNames
from .qualified import ReferenceSite

#: A region of the rewrite: its first line (1-based), how many lines, and the line of the
#: original where it starts when it is one of the original's statements as they were (else 0).
Region = tuple[int, int, int]


def rewritten_references(original: str, reading: AstReading, text: str,
                         origin: Sequence[Optional[int]],
                         resolvers: Sequence[ImportNames]) -> Optional[list[ReferenceSite]]:
    """``ast_references(text, resolvers)``, where ``text`` is a rewrite of ``original``
    (read as ``reading``, with the same resolvers): ``origin[line]`` (1-based) is the line of
    the original that the rewrite's ``line`` is, unchanged, or None for a line it wrote."""
    lines = text.split("\n")
    if "\r" in text or len(origin) != len(lines) + 1:
        return ast_references(text, resolvers)
    line_map = _line_map(original, origin)
    regions = _regions(original, reading, lines, origin, line_map)
    if regions is None:
        return ast_references(text, resolvers)
    found: list[ReferenceSite] = []
    site_lines = [site.line for site in reading.sites]
    inner = _kept_blocks(reading, lines, regions, line_map)
    for first, count, was in regions:
        if was:
            found += moved_sites(_sites_of(reading, site_lines, was, count), first - was)
            continue
        piece = lines[first - 1:first - 1 + count]
        if all(skipped_line(line) for line in piece):
            continue  # no token: nothing to parse
        sites = _skeleton_sites(reading, site_lines, piece, first, inner.get(first, ()), resolvers)
        if sites is None:
            piece_text = "\n".join(piece)
            module = parsed_piece(piece_text)
            if module is None:
                return ast_references(text, resolvers)  # the long way, whatever it answers
            sites = parsed_references(piece_text, module, resolvers)
        found += moved_sites(sites, first - 1)
    return found


def _sites_of(reading: AstReading, site_lines: list[int], was: int, count: int) -> list[ReferenceSite]:
    """The sites of the original's lines ``was`` to ``was + count - 1``."""
    low = bisect_left(site_lines, was)
    return reading.sites[low:bisect_right(site_lines, was + count - 1, low)]


def _regions(original: str, reading: AstReading, lines: list[str],
             origin: Sequence[Optional[int]], line_map: Optional["_LineMap"] = None) -> Optional[list[Region]]:
    """The rewrite's lines cut into regions: the original's top-level statements it kept as
    they were, and the pieces between them; None when a region's last line continues."""
    if line_map is None:
        line_map = _line_map(original, origin)
    kept = _kept(reading, lines, line_map)
    regions: list[Region] = []
    line = 1
    for first, count, was in kept:
        if first > line:
            regions.append((line, first - line, 0))
        regions.append((first, count, was))
        line = first + count
    if line <= len(lines):
        regions.append((line, len(lines) - line + 1, 0))
    if any(lines[first + count - 2].endswith("\\") for first, count, _ in regions[:-1]):
        return None  # a line continuation across regions: read the whole text
    return regions


#: The original's lines (``\r\n`` read as ``\n``); which of them the rewrite removed or
#: replaced, or wrote beside (1: ``touched``); and the line of the rewrite each is (``where``).
_LineMap = tuple[list[str], bytearray, list[int]]


def _line_map(original: str, origin: Sequence[Optional[int]]) -> Optional[_LineMap]:
    """:data:`_LineMap` of a rewrite of ``original``; None when ``origin`` does not give the
    original's lines in order."""
    was_lines = original.replace("\r\n", "\n").split("\n")
    end = len(was_lines) + 1  # a line after the last, kept where the rewrite ends
    touched = bytearray(end + 1)  # the original's lines removed or replaced, or beside an insertion
    where = [0] * (end + 1)
    previous, wrote = 0, False
    for line, number in [*enumerate(origin[1:], start=1), (len(origin), end)]:
        if number is None:
            wrote = True
            continue
        if not previous < number <= end or (number == end and line != len(origin)):
            return None  # not the original's lines in order: nothing kept
        if number > previous + 1:  # lines removed or replaced between
            touched[previous + 1:number] = b"\x01" * (number - previous - 1)
        elif wrote:  # lines inserted between: both sides
            touched[previous:number + 1] = b"\x01\x01"
        where[number], previous, wrote = line, number, False
    return was_lines, touched, where


def _kept(reading: AstReading, lines: list[str], line_map: Optional[_LineMap]) -> list[Region]:
    """The original's top-level statements (runs that share lines) that the rewrite kept as
    they were, with nothing written, removed or moved in or beside them: ``(line in the
    rewrite, lines, line in the original)``, in order."""
    if line_map is None:
        return []
    was_lines, touched, where = line_map
    kept = []
    for first, last in reading.statements:
        if last <= len(was_lines) and touched.find(1, first, last + 1) < 0:
            line = where[first]
            if lines[line - 1:line + last - first] == was_lines[first - 1:last]:
                kept.append((line, last - first + 1, first))
    return kept


def _kept_blocks(reading: AstReading, lines: list[str], regions: list[Region],
                 line_map: Optional[_LineMap]) -> dict[int, list[Region]]:
    """The first line of each piece (a region the rewrite changed) -> the runs of the
    original's nested statements (``reading.nested``) that it holds as they were, the
    outermost: ``(line in the rewrite, lines, line in the original)``, in order. Only their
    lines' text is compared (``_skeleton_sites`` rests on nothing else)."""
    found: dict[int, list[Region]] = {}
    if line_map is None or not reading.nested:
        return found
    was_lines, _, where = line_map
    pieces = [(first, first + count - 1) for first, count, was in regions if not was]
    index, end = 0, 0  # the piece looked at, and the last line of the run taken last
    for first, last in sorted(zip(reading.nested[::2], reading.nested[1::2])):
        line = where[first] if last <= len(was_lines) else 0
        if not line or line <= end:
            continue  # a line the rewrite removed, or inside a run taken
        while index < len(pieces) and pieces[index][1] < line:
            index += 1
        if index == len(pieces):
            break
        low, high = pieces[index]
        if line < low or line + last - first > high:
            continue  # in a kept statement, or over a piece's end
        if lines[line - 1:line + last - first] == was_lines[first - 1:last]:
            found.setdefault(low, []).append((line, last - first + 1, first))
            end = line + last - first
    return found


#: A piece with a line indented this many columns or more is parsed whole: below it, the
#: blocks a kept run's statements end up in are too few (each opens at a deeper column) to
#: near CPython's limits (100 levels), however deep the rewrite nests the run.
_SKELETON_MAX_INDENT = 64


def _skeleton_sites(reading: AstReading, site_lines: list[int], piece: list[str], first: int,
                    kept: Sequence[Region], resolvers: Sequence[ImportNames]) -> Optional[list[ReferenceSite]]:
    """``parsed_references`` of the piece ``piece`` (the rewrite's lines from ``first`` on),
    its nested runs ``kept`` (as the original had them: :func:`_kept_blocks`) not parsed
    again: the piece is parsed with a ``pass`` line in place of each (its first line, at its
    indentation; blank lines for the others), and their sites are the original's, moved.
    None when that does not hold (then the whole piece is parsed): a placeholder that is no
    ``pass`` statement (in a string the piece opens), a line continued into or out of a run,
    an indentation of :data:`_SKELETON_MAX_INDENT` columns or more, a skeleton that does not
    parse.

    Why that is the same answer: a run's lines are the original's, whole statements that start
    their first line and end with its last (no continuation), so, read from the start of a
    line outside any bracket or string as there (the placeholder's ``pass`` statement says the
    tokenizer is so at that line), they are the same tokens: the statements' own, with the
    INDENT and DEDENT tokens of their blocks, at the same indentation as the ``pass``. The
    grammar takes any statement where it takes ``pass`` on a line of its own, and the tokens
    after the run are read as after the ``pass``: a deeper line after it, or an ``else`` or
    ``except`` that would join a compound statement of the run, does not parse after the
    ``pass`` either. So the piece parses into the skeleton's statements, each ``pass`` being
    the run's; a site depends on its own statement's text only, and no two sites start at
    one place (sorted by line and column, they are in ``ast_references``'s order)."""
    if not kept or any(len(line) > _SKELETON_MAX_INDENT and _indentation(line) >= _SKELETON_MAX_INDENT
                       for line in piece):
        return None
    skeleton = list(piece)
    placeholders = set()
    for line, count, _ in kept:
        index = line - first
        text = piece[index]
        if (index and piece[index - 1].endswith("\\")) or piece[index + count - 1].endswith("\\"):
            return None
        indent = len(text) - len(text.lstrip(" \t\f"))
        skeleton[index] = text[:indent] + "pass"
        skeleton[index + 1:index + count] = [""] * (count - 1)
        placeholders.add((index + 1, indent))
    skeleton_text = "\n".join(skeleton)
    module = parsed_piece(skeleton_text)
    if module is None or not placeholders <= {(node.lineno, node.col_offset) for node in statements(module)
                                               if type(node) is ast.Pass}:
        return None
    sites = parsed_references(skeleton_text, module, resolvers)
    for line, count, was in kept:
        sites += moved_sites(_sites_of(reading, site_lines, was, count), line - first + 1 - was)
    return sorted(sites, key=_position)


def _position(site: ReferenceSite) -> tuple[int, int]:
    return site.line, site.column


def _indentation(line: str) -> int:
    """The columns of ``line``'s indentation, as the tokenizer counts them (a tab: to the next
    multiple of 8)."""
    indent = line[:len(line) - len(line.lstrip(" \t\f"))]
    return len(indent.expandtabs(8)) if "\t" in indent else len(indent)


def moved_sites(sites: list[ReferenceSite], by: int) -> list[ReferenceSite]:
    """``sites`` moved ``by`` lines down."""
    if not by:
        return sites
    return [ReferenceSite(site.line + by, site.column, site.end_column, site.name, site.spelled, site.called,
                          site.base_class, site.type_use) for site in sites]  # twice ``replace``'s speed


def skipped_line(line: str) -> bool:
    """A line the tokenizer skips (spaces, tabs, form feeds, a comment)."""
    code = line.lstrip(" \t\f")
    return not code or code.startswith("#")


def parsed_piece(text: str) -> Optional[ast.Module]:
    """``ast.parse(text)``, or None where ``module_ast`` would give None (not kept in its
    cache: a piece is read once)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
