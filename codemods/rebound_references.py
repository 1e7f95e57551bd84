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
itself on the same lines and columns (see ``rewritten_references``). Where that does not
hold (a word outside the recorded statements, a line continued into one, a statement that
does not parse alone), there is no answer: the caller reads the whole file.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from typing import Optional, Sequence

from .ast_references import AstReading, SourcePositions, _spelled_at, parsed_references
from .names import ImportNames
from .qualified import ReferenceSite
from .rewritten_references import _blank, _moved, _parsed

#: What a reading's sites depend on in its resolvers, in their order: each one's root,
#: bindings and accessors, sorted (a resolver that binds nothing reads nothing: left out).
Bindings = tuple[tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]], ...]
#: What a name means to the resolver that reads it: the resolver's root, the name's
#: binding, and the accessor spellings that start with it with what each returns.
Meaning = tuple[str, Optional[str], tuple[tuple[str, str], ...]]


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


def rebound_reading(text: str, reading: AstReading, recorded: Bindings,
                    resolvers: Sequence[ImportNames]) -> Optional[AstReading]:
    """``ast_reading(text, resolvers)``, where ``reading`` is ``text``'s read through
    resolvers of ``recorded`` bindings; None where a statement would need the whole text."""
    was, now = meanings(recorded), meanings(bindings_key(resolvers))
    changed = {name for name, meaning in now.items() if was.get(name) != meaning}
    sites = [site for site in reading.sites if site_head(site) in now and site_head(site) not in changed]
    if not changed:
        return AstReading(sites, reading.statements)
    pieces = _spelling_statements(text, reading.statements, changed)
    if pieces is None:
        return None
    lines = text.split("\n")
    for first, last in pieces:
        piece = "\n".join(lines[first - 1:last])
        module = _parsed(piece)
        if module is None:
            return None
        sites += _moved([site for site in parsed_references(piece, module, resolvers)
                         if site_head(site) in changed], first - 1)
    return AstReading(sorted(sites, key=lambda site: (site.line, site.column)), reading.statements)


def site_head(site: ReferenceSite) -> str:
    """The name a site starts with (``contrib`` of ``contrib.slim().conv2d``)."""
    return site.spelled.partition(".")[0].partition("(")[0]


def _spelling_statements(text: str, statements: Sequence[tuple[int, int]],
                         names: set[str]) -> Optional[list[tuple[int, int]]]:
    """The ``(first, last)`` lines of the top-level ``statements`` whose lines spell one of
    ``names`` as a word; None when a code line outside them does, or a line continues into
    one of them."""
    lines = text.split("\n")
    starts = SourcePositions(text).starts
    firsts = [first for first, _ in statements]
    chosen: dict[int, tuple[int, int]] = {}
    for at in _spelled_at(text, names):
        line = bisect_right(starts, at)
        index = bisect_right(firsts, line) - 1
        if index >= 0 and statements[index][1] >= line:
            chosen.setdefault(index, statements[index])
        elif not _blank(lines[line - 1]):
            return None  # code no recorded statement holds
    if any(first > 1 and lines[first - 2].rstrip("\r").endswith("\\") for first, _ in chosen.values()):
        return None
    return [chosen[index] for index in sorted(chosen)]
