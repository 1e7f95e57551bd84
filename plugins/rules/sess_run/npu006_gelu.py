"""NPU006 gelu: a function computing the tanh GELU becomes ``return npu_unary_ops.gelu(x)``."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    dotted_name,
    hookimpl,
    parse_statements,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    NPU_INIT_IMPORT,
    assignment,
    block_statements,
    child_index,
    compound_body,
    enclosing_scope,
    is_attribute_trailer,
    is_call_trailer,
    is_docstring,
    is_inside,
    last_leaf,
    node_pre_order,
    position,
    prefix_name,
)

from ._formulas import FUNCTIONS, GELU_TANH, Match, ModuleNames, match_gelu
from ._functions import parameters
from ._gelu_sites import STARTS, gelu_marks

NPU_GELU = "npu_unary_ops.gelu"
#: Nodes through which an arithmetic expression continues upwards.
_ARITHMETIC = (symbols.arith_expr, symbols.term, symbols.factor, symbols.power, symbols.atom)


class Gelu(Rule):
    id = "NPU006"
    name = "gelu"
    pack = "sess-run"
    description = "Replace the body of a tanh-GELU function with npu_unary_ops.gelu(x)."
    guide_section = "模型搭建/计算Loss/梯度更新: gelu"
    guide_section_en = "Model building, loss computation and gradient update: gelu"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("A function whose body computes the tanh approximation of GELU, `0.5 * x * (1 + "
                "tanh(sqrt(2 / pi) * (x + 0.044715 * x ** 3)))` in any arrangement and under any "
                "name, gets its body replaced by `return npu_unary_ops.gelu(x)`, `x` being its "
                "first parameter after `self`/`cls`; its docstring and its callers stay.")
    reports = ("The tanh GELU (or its cdf factor) computed inline outside such a function, and "
               "the exact erf form `0.5 * x * (1 + erf(x / sqrt(2)))`, which "
               "`npu_unary_ops.gelu` only approximates.")
    example = """
        import numpy as np
        import tensorflow as tf


        def gelu(x):
            cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
            return x * cdf


        def feed_forward(x, width):
            h = tf.layers.dense(x, width)
            return h * 0.5 * (1.0 + tf.erf(h / np.sqrt(2.0)))
    """
    _scope = "site"  # a GELU is computed within one function (module-level code: all of it)
    # A GELU calls tanh or erf on an arithmetic argument (its constants vary: 0.044715, or
    # 0.0356774 folded in; see ``_gelu_sites``), or a name the file binds to one of them; a
    # migrated one spells npu_unary_ops.
    _site_names = (*("@" + kind for kind in STARTS), NPU_GELU.partition(".")[0])
    _ast_sites = gelu_marks()
    _tokens = ("tanh", "erf", NPU_GELU)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        names = ModuleNames(tree)
        # One walk for both: the calls are taken before bodies are replaced, so the ones that
        # were in a replaced body are left out below (those in the new bodies are in ``done``).
        functions, calls = _functions_and_calls(tree, names, ("tanh", "erf"))
        done = []
        for funcdef in functions:
            body = _body(funcdef)
            small = _small_statements(body)
            parameter = _input_parameter(funcdef) if small else None  # most bodies hold blocks
            if parameter is None or small is None:
                continue
            if _is_migrated(small, parameter):
                ctx.report(funcdef, "migrated", f"the body is {NPU_GELU}({parameter})")
                done.append(funcdef)
            elif _computes_gelu(small, parameter, names):
                line, column = position(funcdef)
                _replace_body(funcdef, body, f"return {NPU_GELU}({parameter})", ctx.newline)
                ctx.add_import(NPU_INIT_IMPORT)  # binds npu_unary_ops
                ctx.report_at(line, column, "migrated", f"replaced the tanh GELU formula with "
                              f"{NPU_GELU}({parameter}); callers are unchanged")
                done.append(funcdef)
        self._report_inline([call for call in calls if is_inside(call, tree)], names, done, ctx)

    def _report_inline(self, calls: list, names: ModuleNames, done: list, ctx: FileContext) -> None:
        seen = set()
        for call in calls:
            root = _arithmetic_root(call, names)
            if id(root) in seen or any(is_inside(root, funcdef) for funcdef in done):
                continue
            seen.add(id(root))
            match = match_gelu(root, names, _single_assignments(enclosing_scope(root), root))
            if match is not None:
                ctx.report(root, "unmigrated", _inline_message(match))


def _inline_message(match: Match) -> str:
    x = match.operand
    if match.kind == GELU_TANH and match.cdf_only:
        return (f"this is the cdf factor of the tanh GELU of {x}: replace {x} times this factor "
                f"with {NPU_GELU}({x})")
    if match.kind == GELU_TANH:
        return f"GELU (tanh approximation) computed inline: replace it with {NPU_GELU}({x})"
    return (f"GELU in its exact erf form: {NPU_GELU} computes the tanh approximation; if the "
            f"model's accuracy allows, replace the GELU of {x} with {NPU_GELU}({x})")


def _input_parameter(funcdef: Node) -> Optional[str]:
    """The first parameter after ``self``/``cls`` when it is a plain one, else None."""
    names = [leaf.value for kind, leaf in parameters(funcdef) if kind == "positional"]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names[0] if names else None



def _body(funcdef: Node) -> list[Base]:
    """The statements of a function body after its docstring."""
    statements = block_statements(compound_body(funcdef))
    if statements and is_docstring(statements[0]):
        statements = statements[1:]
    return statements


def _small_statements(body: list[Base]) -> Optional[list[Base]]:
    """The ``;``-separated statements of a body made only of simple lines, else None."""
    result: list[Base] = []
    for statement in body:
        if statement.type != symbols.simple_stmt:
            return None
        result.extend(c for c in statement.children if c.type not in (tokens.SEMI, tokens.NEWLINE))
    return result


def _is_migrated(small: list[Base], parameter: str) -> bool:
    """Is the body, its small statements ``small``, ``return npu_unary_ops.gelu(parameter)``?"""
    if not small or len(small) != 1 or small[0].type != symbols.return_stmt:
        return False
    value = small[0].children[1]
    return (
        value.type == symbols.power and len(value.children) == 3
        and prefix_name(value, 2) == NPU_GELU and is_call_trailer(value.children[2])
        and dotted_name(value.children[2].children[1]) == parameter
    )


def _computes_gelu(small: list[Base], parameter: str, names: ModuleNames) -> bool:
    """True when the body, its small statements ``small``, is ``name = ...`` lines and a
    ``return`` of tanh-GELU(parameter)."""
    if not small or small[-1].type != symbols.return_stmt or len(small[-1].children) != 2:
        return False
    env = {}
    for statement in small[:-1]:
        assignment = _assignment(statement)
        if assignment is None or assignment[0] in env:
            return False
        env[assignment[0]] = assignment[1]
    match = match_gelu(small[-1].children[1], names, env)
    return match is not None and match.kind == GELU_TANH and not match.cdf_only \
        and match.operand == parameter


def _assignment(statement: Base) -> Optional[tuple[str, Base]]:
    assigned = assignment(statement)
    if assigned is None or assigned[0].type != tokens.NAME:
        return None
    return assigned[0].value, assigned[1]


def _single_assignments(scope: Node, before: Base) -> dict[str, Base]:
    """``name = value`` of ``scope`` (nested functions excluded) for names assigned once,
    when that assignment ends before ``before`` starts."""
    order = {id(leaf): index for index, leaf in enumerate(scope.leaves())}
    start = order.get(id(next(before.leaves())), 0)
    found: dict[str, list[Base]] = {}
    stack = list(scope.children)
    while stack:
        node = stack.pop()
        if node.type in (symbols.funcdef, symbols.classdef, symbols.lambdef):
            continue
        assignment = _assignment(node) if node.type == symbols.expr_stmt else None
        if assignment is not None:
            found.setdefault(assignment[0], []).append(assignment[1])
        stack.extend(getattr(node, "children", ()))
    return {
        name: values[0] for name, values in found.items()
        if len(values) == 1 and order.get(id(last_leaf(values[0])), start) < start
    }


def _replace_body(funcdef: Node, body: list[Base], code: str, newline: str) -> None:
    (new,) = parse_statements(code, newline)
    first = body[0]
    new.prefix = first.prefix
    first.replace(new)
    for statement in body[1:]:
        statement.remove()


def _functions_and_calls(
    tree: Node, names: ModuleNames, functions: tuple[str, ...]
) -> tuple[list[Node], list[Node]]:
    """In source order: every ``def``, and every power node ``f(...)`` where ``f`` is one of
    the math ``functions`` (any spelling)."""
    found: tuple[list[Node], list[Node]] = ([], [])
    for node in node_pre_order(tree):
        if node.type == symbols.funcdef:
            found[0].append(node)
        elif node.type == symbols.power and _calls_one_of(node, names, functions):
            found[1].append(node)
    return found


def _calls_one_of(power: Node, names: ModuleNames, functions: tuple[str, ...]) -> bool:
    head = power.children[0]
    if head.type != tokens.NAME or not names.may_qualify(head.value):
        return False  # most calls of a file
    for end, trailer in enumerate(power.children[1:], start=1):
        if is_call_trailer(trailer):
            called = power.children[end - 1]
            if end > 1 and not (is_attribute_trailer(called)
                                and called.children[1].value in _last_names(functions)):
                return False  # ``tf.reshape(...)``: most calls through a module, no need to qualify
            return FUNCTIONS.get(names.qualify(prefix_name(power, end)) or "") in functions
    return False


@lru_cache(maxsize=None)
def _last_names(functions: tuple[str, ...]) -> frozenset[str]:
    """The last part of every dotted name of ``functions`` (``tanh`` of ``tensorflow.nn.tanh``):
    a dotted call qualifies to the same last part."""
    return frozenset(name.rpartition(".")[2] for name, kind in FUNCTIONS.items() if kind in functions)


def _arithmetic_root(node: Base, names: ModuleNames) -> Base:
    """The largest arithmetic expression around ``node`` (through math calls' arguments)."""
    while node.parent is not None:
        parent = node.parent
        if parent.type in _ARITHMETIC and not (parent.type == symbols.atom and parent.children[0].type != tokens.LPAR):
            node = parent
            continue
        call = _math_call_of_argument(node, names)
        if call is None:
            break
        node = call
    return node


def _math_call_of_argument(node: Base, names: ModuleNames) -> Optional[Node]:
    parent = node.parent
    if parent.type == symbols.arglist:
        parent = parent.parent
    if parent is None or not is_call_trailer(parent) or parent.parent is None:
        return None
    power = parent.parent
    index = child_index(parent)
    if index != len(power.children) - 1 and power.children[index + 1].type != tokens.DOUBLESTAR:
        return None
    return power if FUNCTIONS.get(names.qualify(prefix_name(power, index)) or "") else None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [Gelu()]
