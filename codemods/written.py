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

import ast
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import AbstractSet, Generic, Optional, Sequence, TypeVar

from .ast_references import ast_references
from .modules import module_ast
from .names import ImportNames
from .qualified import ReferenceSite
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
    lines mapped to the original's; None when no rule changed it."""
    before = _lines(ctx.parsed or ctx.original)
    after = _lines(tree_text(ctx.tree))
    if after == before:
        return None
    source = _lines(ctx.original)
    result = Written("")
    lines: list[str] = []
    result.origin.append(None)
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    for tag, first, end, new_first, new_end in matcher.get_opcodes():
        if tag == "equal":
            for number in range(first, end):
                lines.append(source[number] if number < len(source) else before[number])
                result.origin.append(number + 1)
            continue
        for number in range(new_first, new_end):
            lines.append(after[number])
            result.origin.append(None)
            result.block[len(lines)] = (first + 1, end + 1)
    result.text = "\n".join(lines)
    return result


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


def npu_form(text: str) -> NpuForm:
    """The code of the tool's own shapes in ``text`` (a module)."""
    if not any(sign in text for sign in SHAPE_SIGNS):
        return NpuForm()
    module = module_ast(text)
    if module is None:
        return NpuForm()
    lines: set[int] = set()
    configs: set[int] = set()
    for node in ast.walk(module):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list):
                lines.update(_shaped(statements))
        if isinstance(node, ast.Call) and _wrapped_fresh_config(node):
            configs.add(node.keywords[0].value.lineno)
    return NpuForm(frozenset(lines), frozenset(configs))


def _shaped(statements: list[ast.stmt]) -> set[int]:
    lines: set[int] = set()
    for index, statement in enumerate(statements):
        following = statements[index + 1] if index + 1 < len(statements) else None
        if _npu_off_line(statement) or _fresh_config(statement, following) \
                or _custom_op_parameter(statement):
            lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def _npu_off_line(statement: ast.stmt) -> bool:
    """``X.graph_options.rewrite_options.remapping = RewriterConfig.OFF`` (or
    ``memory_optimization``)."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target, value = statement.targets[0], statement.value
    return (isinstance(target, ast.Attribute) and target.attr in NPU_OFF_OPTIONS
            and _ends(target.value, REWRITE_OPTIONS) and isinstance(value, ast.Attribute)
            and value.attr == "OFF" and _ends(value.value, ("RewriterConfig",)))


def _fresh_config(statement: ast.stmt, following: Optional[ast.stmt]) -> bool:
    """``config = tf.ConfigProto()`` (see :func:`_empty_config`) right before ``custom_op = config.graph_options.
    rewrite_options.custom_optimizers.add()``: the config NPU007 creates for a session."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and _empty_config(statement.value)):
        return False
    if not (isinstance(following, ast.Assign) and isinstance(following.value, ast.Call)):
        return False
    adder = following.value.func
    name = statement.targets[0].id
    return (isinstance(adder, ast.Attribute) and adder.attr == "add"
            and _ends(adder.value, (name, *REWRITE_OPTIONS, "custom_optimizers")))


def _custom_op_parameter(statement: ast.stmt) -> bool:
    """``custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes(...)``."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0]
    return (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Subscript)
            and isinstance(target.value.value, ast.Attribute)
            and target.value.value.attr == "parameter_map")


def _wrapped_fresh_config(node: ast.Call) -> bool:
    """``npu_config_proto(config_proto=tf.ConfigProto())``: NPU007's helper style."""
    return (isinstance(node.func, ast.Name)
            and node.func.id == "npu_config_proto" and not node.args and len(node.keywords) == 1
            and node.keywords[0].arg == "config_proto" and _empty_config(node.keywords[0].value))


def _empty_config(value: ast.expr) -> bool:
    """``tf.ConfigProto()``, or with the ``allow_soft_placement=True`` NPU008 adds to it."""
    return (isinstance(value, ast.Call) and not value.args
            and all(_soft_placement(keyword) for keyword in value.keywords)
            and isinstance(value.func, ast.Attribute) and value.func.attr == "ConfigProto")


def _soft_placement(keyword: ast.keyword) -> bool:
    return (keyword.arg == "allow_soft_placement" and isinstance(keyword.value, ast.Constant)
            and keyword.value.value is True)


def _ends(node: ast.expr, names: tuple[str, ...]) -> bool:
    """Does the dotted expression ``node`` end with ``names`` (``a.b.graph_options.rewrite_options``
    ends with ``("graph_options", "rewrite_options")``)?"""
    for name in reversed(names):
        if isinstance(node, ast.Attribute) and node.attr == name:
            node = node.value
        elif isinstance(node, ast.Name) and node.id == name and name == names[0]:
            return True
        else:
            return False
    return True


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
    sites = None if out is None else ast_references(out.text, resolvers)
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
