"""A name bound to an API value, then read: one API use, at the binding, for both audits.

``is_per_host = tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2`` makes ``is_per_host`` an
alias (``ImportNames`` binds it), so each later read, ``per_host_input_for_training=is_per_host``,
resolves back to the API and is a reference of its own. The value was used once, where it was
named: the audits (NPU100, NPU071) report and count the binding, not each read again
(docs/reports.md: each site counted once). The other way round where a rule covered every
read and the binding alone is a miss (``Reg = tf.estimator.BoostedTreesRegressor``, then
``Reg(...)`` given its config by NPU011): the reads are the sites, as a direct call is.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .ast_handover import alias_lines as assignment_lines
from .qualified import ReferenceSite
from .rule import FileContext

#: A use's (line, column) in the file as written.
Position = tuple[int, int]


@dataclass(frozen=True)
class AliasVerdict:
    """An audit's verdict on one use: the finding it would report (``""``: none) and whether
    a rule covers the use."""

    message: str
    covered: bool


def alias_reads(sites: Iterable[ReferenceSite], aliases: Mapping[str, Sequence[int]]) -> dict[Position, Position]:
    """Each read of a bare name an assignment bound to an API value (``aliases``: name -> the
    lines of its ``name = dotted.value`` assignments) -> the use of that API the binding line
    spells: the read's own site is that one. A read of an attribute of the name
    (``slim.conv2d``) names another API: not a read of the value."""
    listed = list(sites)
    by_line: dict[int, list[ReferenceSite]] = defaultdict(list)
    for site in listed:
        by_line[site.line].append(site)
    found: dict[Position, Position] = {}
    for site in listed:
        if site.spelled not in aliases:
            continue  # a dotted or called spelling, or no alias
        for line in aliases[site.spelled]:
            bound = [other for other in by_line.get(line, ()) if other.name == site.name
                     and other.spelled != site.spelled] if line != site.line else []
            if bound:
                found[(site.line, site.column)] = (bound[0].line, bound[0].column)
                break
    return found


def alias_repeats(judged: Mapping[Position, AliasVerdict], reads: Mapping[Position, Position]) -> frozenset[Position]:
    """The uses that are no site of their own (:func:`alias_reads`' ``reads``): each read with
    no finding, or whose binding has one (it names the same API: the read would repeat it);
    or, where the binding alone is a miss and a rule covered every read with no finding, the
    binding (the reads are the sites). A read with a finding where the binding has none (an
    owner that covered the binding but not this use) stays a site."""
    through: dict[Position, list[Position]] = defaultdict(list)
    for read, binding in reads.items():
        if read in judged and binding in judged:
            through[binding].append(read)
    out: set[Position] = set()
    for binding, group in through.items():
        said = judged[binding].message
        if said and all(judged[read].covered and not judged[read].message for read in group):
            out.add(binding)
            continue
        out.update(read for read in group if said or not judged[read].message)
    return frozenset(out)


def value_alias_lines(ctx: FileContext) -> dict[str, list[int]]:
    """Name -> the lines of the file's assignments ``name = dotted.value`` (any scope), as
    ``ctx.analysis(value_alias_lines)`` keeps them for both audits."""
    aliases: dict[str, list[int]] = defaultdict(list)
    for name, line in assignment_lines(ctx):  # the analysis's record, or the file's ast
        aliases[name].append(line)
    return aliases
