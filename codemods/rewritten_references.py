"""The references in a rewrite of a module, read again only where the rewrite changed it.

The audits count the API uses of the file as the run writes it (``written``): :func:`~.
ast_references.ast_references` of that text. A rewrite changes a few lines of a long file (a
dropout call, a session's config), and reading the whole text again costs an ``ast.parse`` and
a walk of it, a fifth of the audit of a rewritten file. :func:`rewritten_references` gives the
same answer from the original's reading: a top-level statement the rewrite left as it was (its
lines, in a row, compared with the original's) has the original's references, moved by the
lines inserted or removed above it; only the rest (the changed statements and the lines
between) is parsed, piece by piece. The line map (``origin``) only says where to look: the
comparison of the lines is what the answer rests on.

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
import dataclasses
from bisect import bisect_left, bisect_right
from typing import Optional, Sequence

from .ast_references import AstReading, ast_references, parsed_references
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
    regions = _regions(original, reading, lines, origin)
    if regions is None:
        return ast_references(text, resolvers)
    found: list[ReferenceSite] = []
    site_lines = [site.line for site in reading.sites]
    for first, count, was in regions:
        if was:
            low = bisect_left(site_lines, was)
            found += moved_sites(reading.sites[low:bisect_right(site_lines, was + count - 1, low)],
                            first - was)
            continue
        piece = lines[first - 1:first - 1 + count]
        if all(skipped_line(line) for line in piece):
            continue  # no token: nothing to parse
        piece_text = "\n".join(piece)
        module = parsed_piece(piece_text)
        if module is None:
            return ast_references(text, resolvers)  # the long way, whatever it answers
        found += moved_sites(parsed_references(piece_text, module, resolvers), first - 1)
    return found


def _regions(original: str, reading: AstReading, lines: list[str],
             origin: Sequence[Optional[int]]) -> Optional[list[Region]]:
    """The rewrite's lines cut into regions: the original's top-level statements it kept as
    they were, and the pieces between them; None when a region's last line continues."""
    kept = _kept(original, reading, lines, origin)
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


def _kept(original: str, reading: AstReading, lines: list[str],
          origin: Sequence[Optional[int]]) -> list[Region]:
    """The original's top-level statements (runs that share lines) that the rewrite kept as
    they were, with nothing written, removed or moved in or beside them: ``(line in the
    rewrite, lines, line in the original)``, in order."""
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
            return []  # not the original's lines in order: nothing kept
        if number > previous + 1:  # lines removed or replaced between
            touched[previous + 1:number] = b"\x01" * (number - previous - 1)
        elif wrote:  # lines inserted between: both sides
            touched[previous:number + 1] = b"\x01\x01"
        where[number], previous, wrote = line, number, False
    kept = []
    for first, last in reading.statements:
        if last <= len(was_lines) and touched.find(1, first, last + 1) < 0:
            line = where[first]
            if lines[line - 1:line + last - first] == was_lines[first - 1:last]:
                kept.append((line, last - first + 1, first))
    return kept


def moved_sites(sites: list[ReferenceSite], by: int) -> list[ReferenceSite]:
    """``sites`` moved ``by`` lines down."""
    if not by:
        return sites
    return [dataclasses.replace(site, line=site.line + by) for site in sites]


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
