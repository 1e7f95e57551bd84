"""The ``ast`` form of NPU006's sites: a ``tanh`` or ``erf`` call whose argument is arithmetic.

NPU006 reports or rewrites an expression only when ``_formulas.match_gelu`` compiles it (numbers,
``+ - * / **``, known math functions, one operand) to a function that agrees with GELU. A GELU
applies ``tanh`` or ``erf`` (the rule's site names already say so: a formula without either
cannot agree with the references), so a match compiles one such call, and with it that call's
argument, as the compiler reads it: the first positional (or ``x=``/``value=``) of a one-operand
function, both positionals of a two-operand one. :func:`may_compute_gelu` is False only for a
call whose compilation must fail: its argument holds, where the compiler reads, a node it
rejects whatever the file binds (a call of ``matmul``, a comparison, a ``//``...). A ``tanh`` of
an LSTM's gates (``tf.tanh(tf.matmul(x, w) + b)``) is then no site, and the unit that only holds
such calls is not parsed for the rule. A name or a dotted name may be anything (an operand, a
constant, an expanded variable): never a reason to say no.
"""

from __future__ import annotations

import ast
from functools import partial
from typing import Optional

from npu_codemod.api._toolkit import ast_dotted_name

from ._formulas import _BINARY, _UNARY, FUNCTIONS

#: The kind of function each last name of :data:`FUNCTIONS` names (``tanh`` of
#: ``tensorflow.math.tanh``): a dotted call qualifies to a name with the same last part.
LAST_KINDS: dict[str, str] = {name.rpartition(".")[2]: kind for name, kind in FUNCTIONS.items()}
#: The kinds whose calls NPU006 starts from (``_functions_and_calls``).
STARTS = ("tanh", "erf")
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def gelu_marks() -> tuple[tuple[type, str, partial[bool]], ...]:
    """NPU006's ``_ast_sites``: ``@tanh`` and ``@erf`` for the calls that may compute a GELU."""
    return tuple((ast.Call, "@" + kind, partial(may_compute_gelu, kind)) for kind in STARTS)


def may_compute_gelu(kind: str, node: ast.Call) -> bool:
    """Could ``match_gelu`` compile this call as one of ``kind`` (``tanh``)? False for a call of
    another name, and for one whose compilation fails whatever the file binds."""
    callee = node.func
    name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
    return name == kind and not _call_fails(node, _UNARY_ARITY)


_UNARY_ARITY, _BINARY_ARITY = 1, 2


def _fails(node: ast.expr) -> bool:
    """Must the compiler reject ``node`` (see the module's doc)?"""
    if isinstance(node, ast.Name):
        return False
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool) or not isinstance(node.value, (int, float))
    if isinstance(node, ast.BinOp):
        return not isinstance(node.op, _OPERATORS) or _fails(node.left) or _fails(node.right)
    if isinstance(node, ast.UnaryOp):
        return not isinstance(node.op, (ast.UAdd, ast.USub)) or _fails(node.operand)
    if isinstance(node, ast.Attribute):
        return _dotted_base(node) is None  # ``f().x``, ``a[0].x``
    if isinstance(node, ast.Subscript):
        return _dotted_base(node) is None  # ``x[0]``: an operand, read without its index
    if isinstance(node, ast.Call):
        return _call_fails(node, _arity(node.func))
    return True  # a comparison, a tuple, a string, ``x if c else y``...


def _arity(callee: ast.expr) -> Optional[int]:
    """How many operands the compiler reads of a call of ``callee``, when the call's spelling
    says which function it may be (a dotted name keeps its last part when qualified); None
    for a bare name (a file may bind it to anything)."""
    if not isinstance(callee, ast.Attribute):
        return None
    kind = LAST_KINDS.get(callee.attr)
    if kind is None:
        return 0  # no function the compiler knows: it rejects the call
    return _UNARY_ARITY if kind in _UNARY else _BINARY_ARITY if kind in _BINARY else 0


def _call_fails(node: ast.Call, arity: Optional[int]) -> bool:
    """Must the compiler reject this call of a function of ``arity`` operands (0: none it
    knows; None: not known)?"""
    if isinstance(node.func, ast.Attribute):
        if ast_dotted_name(node.func) is None:
            return True  # ``f().tanh(x)``, ``a[0].tanh(x)``: no dotted name to qualify
    elif not isinstance(node.func, ast.Name):
        return True  # ``f(x)(y)``, ``(lambda: y)()``
    if arity is None:
        return False
    if arity == 0:
        return True
    if any(isinstance(argument, ast.Starred) for argument in node.args) \
            or any(keyword.arg is None for keyword in node.keywords):
        return True  # ``*args``, ``**kwargs``
    if arity == _UNARY_ARITY:
        operands = node.args[:1] or [keyword.value for keyword in node.keywords
                                     if keyword.arg in ("x", "value")]
    else:
        operands = list(node.args)
    return len(operands) != arity or any(_fails(operand) for operand in operands)


def _dotted_base(node: ast.expr) -> Optional[ast.expr]:
    """The name under ``node``'s attributes and subscripts when its subscripts all come last
    (``a.b[0][1]``: what the compiler reads as a dotted name and an operand), else None."""
    while isinstance(node, ast.Subscript):
        node = node.value
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None
