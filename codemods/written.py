"""The file as this run writes it: where each of its lines comes from, which of its code is
the tool's own NPU form, and its API uses matched to those of the file as it was.

The audits (NPU100, NPU071) count the API uses of the file as the run leaves it, so that a rerun
over the migrated branch counts the same sites: a use a rule rewrote away (``tf.nn.dropout`` that became
``npu_ops.dropout``, a gelu formula's ``tf.tanh``) is no API site (the rule's finding is the
site), and a use in code of the tool's own shapes (the NpuOptimizer lines, the ``ConfigProto()``
NPU007 creates for them, ``OptimizerOptions.OFF``) is none either, on any run: whoever wrote it,
it is the NPU form.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import AbstractSet, Generic, Iterable, Optional, Sequence, TypeVar

from .ast_references import ast_references, original_reading
from .local_names import KnownReads, moved_reads, without_shadowed
from .names import ImportNames
from .qualified import ReferenceSite, references_under
from .rewritten_references import rewritten_references
from .rule import FileContext
from .walk import tree_text

T = TypeVar("T")

#: The NpuOptimizer lines' options the guide sets to ``RewriterConfig.OFF``.
NPU_OFF_OPTIONS = frozenset({"remapping", "memory_optimization"})
REWRITE_OPTIONS = ("graph_options", "rewrite_options")
#: What an API's name ends with where it is already the NPU form (NPU051's value).
NPU_VALUES = (".OptimizerOptions.OFF",)
#: Cheap signs that a text may hold code of the tool's shapes (else no ``ast`` pass for them).
SHAPE_SIGNS = ("rewrite_options", "npu_config_proto", "OptimizerOptions.OFF")


@dataclass
class Written:
    """The file as written: ``text``, and for each of its lines (1-based, index 0 unused) the
    line of the original it is (equal text), or None for a line of a changed block;
    ``block[line]``: the original lines ``(first, end)`` that line's changed block replaced."""

    text: str
    origin: list[Optional[int]] = field(default_factory=list)
    block: dict[int, tuple[int, int]] = field(default_factory=dict)


def written(ctx: FileContext) -> Optional[Written]:
    """The file as the rules left it (before the header imports, which hold no use), its
    lines mapped to the original's; None when no rule changed it (a rule that rewrites
    reports ``migrated``: a file with no such finding is not rendered to be compared)."""
    if not any(finding.status == "migrated" for finding in ctx.findings):
        return None
    before = _lines(ctx.parsed or ctx.original)
    after = _lines(tree_text(ctx.tree))
    if after == before:
        return None
    source = _lines(ctx.original)
    result = Written("")
    lines: list[str] = []
    result.origin.append(None)
    for tag, first, end, new_first, new_end in line_opcodes(before, after):
        if tag == "equal":  # the original's lines (the parsed text's past its end)
            lines += source[first:end]
            if end > len(source):
                lines += before[max(first, len(source)):end]
            result.origin += range(first + 1, end + 1)
            continue
        for number in range(new_first, new_end):
            lines.append(after[number])
            result.origin.append(None)
            result.block[len(lines)] = (first + 1, end + 1)
    result.text = "\n".join(lines)
    return result


#: Gaps of at most this many line pairs are matched by ``difflib`` (fine-grained); larger ones
#: by their lines that occur once on each side (a patience diff): ``difflib`` takes seconds on
#: a long file with many equal lines (blank ones).
SMALL_GAP = 4096

Opcode = tuple[str, int, int, int, int]


def line_opcodes(before: list[str], after: list[str]) -> list[Opcode]:
    """``difflib``'s opcodes (``equal`` blocks and the changed ones between them) turning
    the lines ``before`` into ``after``: the lines equal on both sides stay matched."""
    opcodes: list[Opcode] = []
    first = new_first = 0
    for number, new, size in [*_matched(before, after), (len(before), len(after), 0)]:
        start, new_start = number, new
        if (number, new) != (first, new_first):
            opcodes.append(("replace", first, number, new_first, new))
        elif size and opcodes:  # a block that goes on where the last one (an equal one) ends
            _, start, _, new_start, _ = opcodes.pop()
        if size:
            opcodes.append(("equal", start, number + size, new_start, new + size))
        first, new_first = number + size, new + size
    return opcodes


def _matched(before: list[str], after: list[str]) -> list[tuple[int, int, int]]:
    """The blocks of lines matched, ``(before, after, size)``, in order."""
    blocks: list[tuple[int, int, int]] = []
    gaps = [(0, len(before), 0, len(after))]
    while gaps:
        low, high, new_low, new_high = gaps.pop()
        if low == high or new_low == new_high:
            continue  # (most gaps, those between two anchors)
        if before[low] == after[new_low]:
            size = _common_run(before, after, low, new_low, min(high - low, new_high - new_low), 1)
            blocks.append((low, new_low, size))
            low, new_low = low + size, new_low + size
        if low < high and new_low < new_high and before[high - 1] == after[new_high - 1]:
            size = _common_run(before, after, high - 1, new_high - 1, min(high - low, new_high - new_low), -1)
            high, new_high = high - size, new_high - size
            blocks.append((high, new_high, size))
        if low == high or new_low == new_high:
            continue
        if (high - low) * (new_high - new_low) <= SMALL_GAP:
            matcher = SequenceMatcher(None, before[low:high], after[new_low:new_high], autojunk=False)
            blocks.extend((low + block.a, new_low + block.b, block.size)
                          for block in matcher.get_matching_blocks() if block.size)
            continue
        anchors = _anchors(before, after, low, high, new_low, new_high)
        if not anchors:
            continue  # nothing in common that can be told apart: one changed block
        blocks.extend((number, new, 1) for number, new in anchors)
        bounds = [(low - 1, new_low - 1), *anchors, (high, new_high)]
        gaps.extend((a + 1, b, c + 1, d) for (a, c), (b, d) in zip(bounds, bounds[1:]))
    return sorted(blocks)


def _common_run(before: list[str], after: list[str], at: int, new_at: int, limit: int, way: int) -> int:
    """How many lines (``limit`` at most) are equal from ``before[at]`` and ``after[new_at]``
    on, forward (``way`` 1) or backward (-1): compared in slices of growing size (in C, not a
    Python step per line: most of a long file is one run)."""
    size, step = 0, 1
    while step:
        if size + step <= limit and (
                before[at + size:at + size + step] == after[new_at + size:new_at + size + step] if way > 0
                else before[at - size - step + 1:at - size + 1] == after[new_at - size - step + 1:new_at - size + 1]):
            size += step
            step *= 2
        else:
            step //= 2
    return size


def _anchors(before: list[str], after: list[str], low: int, high: int, new_low: int,
             new_high: int) -> list[tuple[int, int]]:
    """The longest run, in order on both sides, of the lines that occur once on each side."""
    once = Counter(before[low:high])
    new_once = Counter(after[new_low:new_high])
    where = {after[new]: new for new in range(new_low, new_high) if new_once[after[new]] == 1}
    candidates = [(number, where[before[number]]) for number in range(low, high)
                  if once[before[number]] == 1 and before[number] in where]
    return _increasing(candidates)


def _increasing(candidates: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``candidates`` (in order of their first items) whose second
    items increase too (patience sorting)."""
    tails: list[int] = []  # tails[k]: the index of the smallest end of a run of k + 1
    ends: list[int] = []  # the second items of those ends
    previous: list[int] = [-1] * len(candidates)
    for index, (_, new) in enumerate(candidates):
        at = bisect_left(ends, new)
        previous[index] = tails[at - 1] if at else -1
        if at == len(tails):
            tails.append(index)
            ends.append(new)
        else:
            tails[at], ends[at] = index, new
    run: list[tuple[int, int]] = []
    index = tails[-1] if tails else -1
    while index >= 0:
        run.append(candidates[index])
        index = previous[index]
    return run[::-1]


@dataclass(frozen=True)
class NpuForm:
    """Where a module holds code of the tool's own shapes: the ``lines`` of its statements
    (the guide's NpuOptimizer lines, the ``ConfigProto()`` created for them) and the lines of
    ``npu_config_proto(config_proto=tf.ConfigProto())`` (only that ``ConfigProto`` use)."""

    lines: frozenset[int] = frozenset()
    configs: frozenset[int] = frozenset()

    def holds(self, site: ReferenceSite) -> bool:
        """Is the use ``site`` part of that code (or a value already in NPU form)?"""
        return (site.line in self.lines or site.name.endswith(NPU_VALUES)
                or (site.line in self.configs and site.name.endswith(".ConfigProto")))


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


#: A dotted name (``self.config``, ``rewriter_config_pb2.RewriterConfig``).
_DOTTED = r"[A-Za-z_][\w.]*"
#: The guide's NpuOptimizer lines that switch an option off (NPU007 writes them).
_NPU_OFF = re.compile(rf"\s*{_DOTTED}\.graph_options\.rewrite_options\.(?:remapping|memory_optimization)"
                      rf"\s*=\s*(?:{_DOTTED}\.)?RewriterConfig\.OFF\s*(?:#.*)?$")
#: ``custom_op.parameter_map["precision_mode"].s = ...`` (NPU007's precision mode setting).
_PARAMETER = re.compile(rf"\s*{_DOTTED}\.parameter_map\[[^\]]*\][\w.]*\s*=")
#: ``config = tf.ConfigProto()``, or with the ``allow_soft_placement=True`` NPU008 adds.
_FRESH_CONFIG = re.compile(rf"(\s*)(\w+)\s*=\s*{_DOTTED}\.ConfigProto\((?:allow_soft_placement=True)?\)"
                           r"\s*(?:#.*)?$")
#: What follows NPU007's fresh config: ``custom_op = config.graph_options...add()``.
_ADD_CUSTOM_OP = "{indent}{name} = {config}.graph_options.rewrite_options.custom_optimizers.add()"
#: NPU007's helper style around a config it created.
_WRAPPED_CONFIG = re.compile(rf"npu_config_proto\(config_proto={_DOTTED}\.ConfigProto\(\)\)")


def npu_form(text: str) -> NpuForm:
    """The code of the tool's own shapes in ``text`` (a module; the tool writes each shape on
    lines of its own, so the lines are matched, no parse)."""
    if not any(sign in text for sign in SHAPE_SIGNS):
        return NpuForm()
    lines = text.split("\n")
    shaped: set[int] = set()
    configs: set[int] = set()
    for number, line in enumerate(lines, start=1):
        if "rewrite_options" in line and _NPU_OFF.match(line) or "parameter_map" in line \
                and _PARAMETER.match(line):
            shaped.add(number)
        elif "ConfigProto" in line:
            if _fresh_config(line, lines[number] if number < len(lines) else ""):
                shaped.add(number)
            if _WRAPPED_CONFIG.search(line):
                configs.add(number)
    return NpuForm(frozenset(shaped), frozenset(configs))


def _fresh_config(line: str, following: str) -> bool:
    """``config = tf.ConfigProto()`` right before ``custom_op = config.graph_options.
    rewrite_options.custom_optimizers.add()``: the config NPU007 creates for a session."""
    fresh = _FRESH_CONFIG.match(line)
    if fresh is None:
        return False
    indent, name = fresh.groups()
    custom_op = following.partition("=")[0].strip()
    return bool(custom_op.isidentifier()) and following.rstrip() == _ADD_CUSTOM_OP.format(
        indent=indent, name=custom_op, config=name)


@dataclass(frozen=True)
class WrittenUse(Generic[T]):
    """An API use of the file as the run writes it: its ``site`` there, and ``was``, what the
    caller knew of the same use in the file as it was (None: a use the rewrite wrote), with
    the lines of the file as it was that its line is or replaced (``replaced``)."""

    site: ReferenceSite
    was: Optional[T]
    replaced: tuple[int, int]


def written_uses(ctx: FileContext, resolvers: Sequence[ImportNames],
                 uses: Sequence[tuple[ReferenceSite, T]],
                 left_out: AbstractSet[tuple[int, int]] = frozenset()) -> list[WrittenUse[T]]:
    """The API uses of the file as the run writes it, none in the tool's own shapes (see
    :func:`npu_form`), each matched to one of ``uses`` (the file's as it was, with what the
    caller knows of them): the use on a line as it was, or the nearest of the same spelling
    on the lines a changed block replaced. A use a rewrite removed has no match; those at
    ``left_out`` (line, column) positions are not uses. A file no rule changed, or that
    ``ast`` cannot read: its uses as they were."""
    out = ctx.analysis(written)
    sites = None if out is None else written_references(ctx, out, resolvers)
    if out is not None and sites is not None:  # as ``site_references`` reads the original
        sites = without_shadowed(out.text, sites, _written_known_reads(ctx, out))
    if out is None or sites is None:
        form = ctx.analysis(_original_npu_form)
        return [WrittenUse(site, was, (site.line, site.line + 1)) for site, was in uses
                if not form.holds(site) and (site.line, site.column) not in left_out]
    form = npu_form(out.text)
    by_position = {(site.line, site.column): (site, was) for site, was in uses}
    changed = {line for first, end in out.block.values() for line in range(first, end)}
    pool = [(site, was) for site, was in uses if site.line in changed]
    found: list[WrittenUse[T]] = []
    for site in sites:
        origin = out.origin[site.line]
        if form.holds(site) or (origin, site.column) in left_out:
            continue
        if origin is not None:
            was = by_position.get((origin, site.column))
            found.append(WrittenUse(site, was[1] if was else None, (origin, origin + 1)))
            continue
        block = out.block[site.line]
        match = _nearest(site, block, pool)
        if match is not None and (match[0].line, match[0].column) in left_out:
            continue
        found.append(WrittenUse(site, match[1] if match else None, block))
    return found


def written_references(ctx: FileContext, out: Written,
                       resolvers: Sequence[ImportNames]) -> Optional[list[ReferenceSite]]:
    """``ast_references(out.text, resolvers)``: where the file's uses were read with ``ast``
    (the analysis's reading, or its own), only the statements the rewrite changed are read
    again (``rewritten_references``); a file whose uses came from its fissix tree has no
    ``ast`` reading to start from."""
    reading = ctx.analysis(original_reading, *resolvers)  # the audit's own, from its start
    if reading is None:
        sites = ast_references(out.text, resolvers)
        return sites if sites is not None else _tree_references(out.text, resolvers)
    return rewritten_references(ctx.original, reading, out.text, out.origin, resolvers)


def _written_known_reads(ctx: FileContext, out: Written) -> Optional[KnownReads]:
    """What the analysis's ``ast`` of the file said of its shadowed reads, for the file as
    written (``local_names.moved_reads``), or None."""
    handover = ctx._handover
    known = handover.known_reads() if handover is not None else None
    return moved_reads(known, ctx.original, out.text, out.origin) if known is not None else None


def _tree_references(text: str, resolvers: Sequence[ImportNames]) -> Optional[list[ReferenceSite]]:
    """The uses of ``text`` from its fissix tree, for a file ``ast`` cannot read (Python 2:
    print statements, mixed tabs), whose uses as it was came from its tree too: so a use a rule
    rewrote away is no site on the first run, as on a rerun over the branch. None when the
    text does not parse (then the uses as they were count)."""
    from .engine import parse_module, unlink  # the engine's grammars; it imports the rules

    tree = parse_module(text)
    if tree is None:
        return None
    try:
        return [reference.site for reference in references_under(tree, resolvers)]
    finally:
        unlink(tree)


def in_npu_form(ctx: FileContext, site: ReferenceSite) -> bool:
    """Is the use ``site`` of the file as it was in code of the tool's own shapes (the NPU
    form: no finding there)?"""
    return ctx.analysis(_original_npu_form).holds(site)


def _original_npu_form(ctx: FileContext) -> NpuForm:
    return npu_form(ctx.original)


def _nearest(site: ReferenceSite, block: tuple[int, int],
             pool: list[tuple[ReferenceSite, T]]) -> Optional[tuple[ReferenceSite, T]]:
    """The use of ``pool`` (the changed lines' uses as they were) that ``site``, on a line
    written in place of ``block``, still is (the same spelling, the nearest), taken off the
    pool; None for a use the rewrite wrote."""
    same = [index for index, (was, _) in enumerate(pool) if was.spelled == site.spelled]
    if not same:
        return None
    return pool.pop(min(same, key=lambda index: abs(pool[index][0].line - block[0])))


def rewritten_away(ctx: FileContext, originals: Iterable[ReferenceSite],
                   found: Sequence[WrittenUse[T]], kept: Iterable[ReferenceSite]) -> frozenset[tuple[int, int]]:
    """The (line, column) of each use of ``originals`` (the file's as it was) that a rewrite
    removed: on a line the file as written no longer holds as it was (a rule replaced or
    deleted it), matched by no use of the file as written (``found``, :func:`written_uses`;
    ``kept``: the originals they matched), and with no use of the same API written in its
    place (a respelled value stays a use). The branch no longer holds it
    (``AllReduceCrossDeviceOps(...)`` in the ``cross_tower_ops=`` NPU026 drops): no API site
    (docs/reports.md), so no finding either, and a rerun over the branch reports the same sites."""
    out = ctx.analysis(written)
    if out is None:
        return frozenset()
    as_was = set(out.origin)
    matched = {(site.line, site.column) for site in kept}
    respelled = [(use.site.name, use.replaced) for use in found if use.was is None]
    return frozenset(
        (site.line, site.column) for site in originals
        if site.line not in as_was and (site.line, site.column) not in matched
        and not any(name == site.name and first <= site.line < max(end, first + 1)
                    for name, (first, end) in respelled))
