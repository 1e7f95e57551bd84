"""Recognising the GELU activation in an expression, however it is arranged.

An expression is compiled (never ``eval``-ed) into a function of its one free operand, built
only from numbers, ``+ - * / **``, known math functions (``tanh``, ``erf``, ``sqrt``, ``pow``,
``square``, TF/NumPy spellings) and ``pi``; it then is compared with the reference formulas at
a handful of points. Two formulas that agree at all of them are, for such expressions, the
same: this accepts ``tf.pow(x, 3)``, ``x * x * x``, ``x ** 3``, ``np.sqrt(2 / np.pi)``,
``math.sqrt(2 / math.pi)`` or ``0.7978845608``, factors in any order, and intermediate
variables, while anything with another operand, operator or function is rejected.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Mapping, Optional

from npu_codemod.api import (
    Base,
    ImportNames,
    Leaf,
    Node,
    arguments,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    canonical,
    is_attribute_trailer,
    is_call_trailer,
    spelled_name,
)

Value = Callable[[float], float]

GELU_TANH = "gelu-tanh"
GELU_ERF = "gelu-erf"


def _gelu_tanh(x: float) -> float:
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _gelu_erf(x: float) -> float:
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


#: (kind, whole activation or only its ``cdf`` factor) -> reference function.
REFERENCES: dict[tuple[str, bool], Value] = {
    (GELU_TANH, False): _gelu_tanh,
    (GELU_TANH, True): lambda x: _gelu_tanh(x) / x,
    (GELU_ERF, False): _gelu_erf,
    (GELU_ERF, True): lambda x: _gelu_erf(x) / x,
}
#: Points where tanh-GELU and erf-GELU differ by far more than the tolerance (never 0).
SAMPLES = (-3.3, -2.1, -1.2, -0.45, 0.3, 0.8, 1.5, 2.2, 3.1)
TOLERANCE = 2e-6  # a hand-written 0.7978845608 or 0.79788456 still matches

_UNARY = {
    "tanh": math.tanh, "erf": math.erf, "sqrt": math.sqrt,
    "square": lambda v: v * v, "identity": lambda v: v,
}
_BINARY = {
    "pow": lambda a, b: a ** b, "multiply": lambda a, b: a * b, "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b, "divide": lambda a, b: a / b,
}
_TF_MATH = ("tensorflow.", "tensorflow.math.", "numpy.", "math.")
FUNCTIONS: dict[str, str] = {
    **{prefix + name: name for prefix in _TF_MATH for name in ("tanh", "sqrt")},
    **{prefix + "erf": "erf" for prefix in ("tensorflow.", "tensorflow.math.", "math.",
                                            "scipy.special.", "torch.")},
    "tensorflow.nn.tanh": "tanh", "tensorflow.keras.activations.tanh": "tanh",
    "tensorflow.square": "square", "tensorflow.math.square": "square", "numpy.square": "square",
    "tensorflow.pow": "pow", "tensorflow.math.pow": "pow", "numpy.power": "pow",
    "math.pow": "pow", "pow": "pow",
    **{prefix + name: name for prefix in ("tensorflow.", "tensorflow.math.", "numpy.")
       for name in ("multiply", "add", "subtract", "divide")},
    "tensorflow.truediv": "divide", "tensorflow.math.truediv": "divide",
    **{name: "identity" for name in (
        "tensorflow.cast", "tensorflow.constant", "tensorflow.convert_to_tensor",
        "tensorflow.identity", "numpy.float32", "numpy.float64", "numpy.asarray",
        "numpy.array", "float",
    )},
}
CONSTANTS = {"numpy.pi": math.pi, "math.pi": math.pi, "numpy.e": math.e, "math.e": math.e}
_ROOTS = frozenset(("tensorflow", "numpy", "math", "scipy", "torch"))
_MAX_DEPTH = 60


class ModuleNames(ImportNames):
    """Like :class:`ImportNames`, for the modules a formula may use (TF, NumPy, math, SciPy)."""

    def _bind(self, name: str, target: str) -> None:
        if target.split(".")[0] in _ROOTS:
            self.bindings[name] = target

    def qualify(self, dotted: Optional[str]) -> Optional[str]:
        qualified = super().qualify(dotted)
        if qualified is None and dotted in _BUILTINS:
            return dotted  # builtins, unless the file binds the name to a module
        return qualified

    def may_qualify(self, head: str) -> bool:
        """False when no dotted name starting with ``head`` qualifies: a cheap first test."""
        return head in self.bindings or head in _BUILTINS


_BUILTINS = ("pow", "float")


@dataclass(frozen=True)
class Match:
    """An expression that computes GELU of ``operand`` (or only its cdf factor)."""

    kind: str  # GELU_TANH or GELU_ERF
    cdf_only: bool
    operand: str  # the free operand's code without whitespace: ``x``, ``self.h``


class _NotArithmetic(Exception):
    pass


def match_gelu(
    expression: Base, names: ModuleNames, env: Mapping[str, Base] = {}
) -> Optional[Match]:
    """How ``expression`` computes GELU, or None. ``env``: single-assignment local variables."""
    compiler = _Compiler(names, env)
    try:
        value = compiler.compile(expression)
    except (_NotArithmetic, RecursionError):
        return None
    if len(compiler.operands) != 1:
        return None
    (operand,) = compiler.operands
    for (kind, cdf_only), reference in REFERENCES.items():
        if _agrees(value, reference):
            return Match(kind, cdf_only, operand)
    return None


def _agrees(value: Value, reference: Value) -> bool:
    for x in SAMPLES:
        try:
            got = value(x)
        except (ArithmeticError, ValueError, TypeError):
            return False
        if not isinstance(got, float) or abs(got - reference(x)) > TOLERANCE * max(1.0, abs(got)):
            return False
    return True


class _Compiler:
    def __init__(self, names: ModuleNames, env: Mapping[str, Base]) -> None:
        self.names = names
        self.env = env
        self.operands: set[str] = set()
        self._expanding: list[str] = []

    def compile(self, node: Base) -> Value:
        if len(self._expanding) > _MAX_DEPTH:
            raise _NotArithmetic()
        handler = _HANDLERS.get(node.type)
        if handler is None:
            raise _NotArithmetic()
        return handler(self, node)

    def number(self, leaf: Leaf) -> Value:
        number = _number(leaf.value)
        if number is None:
            raise _NotArithmetic()
        return lambda x: number

    def name(self, leaf: Leaf) -> Value:
        name = leaf.value
        if name in self.env and name not in self._expanding:
            operands = set(self.operands)
            self._expanding.append(name)
            try:
                return self.compile(self.env[name])
            except _NotArithmetic:
                self.operands = operands  # ``y = dense(x)``: y itself is the operand
            finally:
                self._expanding.pop()
        return self._dotted(name)

    def _dotted(self, dotted: str) -> Value:
        qualified = self.names.qualify(dotted)
        if qualified in CONSTANTS:
            constant = CONSTANTS[qualified]
            return lambda x: constant
        if qualified is not None or dotted in ("True", "False", "None"):
            raise _NotArithmetic()  # a module or an unknown TF object, not an operand
        return self.operand(dotted)

    def operand(self, code: str) -> Value:
        self.operands.add(code)
        return lambda x: x

    def atom(self, node: Node) -> Value:
        children = node.children
        if children[0].type != tokens.LPAR or len(children) != 3 or children[1].type == symbols.testlist_gexp:
            raise _NotArithmetic()
        return self.compile(children[1])

    def arith(self, node: Node) -> Value:
        result = self.compile(node.children[0])
        for operator, operand in zip(node.children[1::2], node.children[2::2]):
            result = _apply(operator.value, result, self.compile(operand))
        return result

    def factor(self, node: Node) -> Value:
        sign, operand = node.children
        value = self.compile(operand)
        if sign.value == "-":
            return lambda x: -value(x)
        if sign.value == "+":
            return value
        raise _NotArithmetic()

    def power(self, node: Node) -> Value:
        children = node.children
        if children[-2].type == tokens.DOUBLESTAR:
            base_parts, exponent = children[:-2], self.compile(children[-1])
            base = self.compile(base_parts[0]) if len(base_parts) == 1 else self._trailers(base_parts)
            return lambda x: base(x) ** exponent(x)
        return self._trailers(children)

    def _trailers(self, parts: list[Base]) -> Value:
        """``np.pi``, ``self.h``, ``tf.tanh(...)``, ``x[0]``: a constant, operand or call."""
        head = parts[0]
        if head.type != tokens.NAME:
            raise _NotArithmetic()
        attributes = 1
        while attributes < len(parts) and is_attribute_trailer(parts[attributes]):
            attributes += 1
        dotted = spelled_name(parts[:attributes]) or ""
        rest = parts[attributes:]
        if not rest:
            if attributes == 1:
                return self.name(head)
            return self._dotted(dotted)
        if len(rest) == 1 and is_call_trailer(rest[0]):
            return self._call(dotted, rest[0])
        if all(t.type == symbols.trailer and t.children[0].type == tokens.LSQB for t in rest):
            if self.names.qualify(dotted) is not None:
                raise _NotArithmetic()
            return self.operand("".join("".join(str(p).split()) for p in parts))
        raise _NotArithmetic()

    def _call(self, dotted: str, call: Node) -> Value:
        function = FUNCTIONS.get(canonical(self.names.qualify(dotted) or ""))
        given = arguments(call)
        positional = [a.value for a in given if a.keyword is None and not a.star]
        if function is None or any(a.star for a in given):
            raise _NotArithmetic()
        if function in _UNARY:
            operand = positional[:1] or [a.value for a in given if a.keyword in ("x", "value")]
            if len(operand) != 1:
                raise _NotArithmetic()
            inner, apply = self.compile(operand[0]), _UNARY[function]
            return lambda x: apply(inner(x))
        if len(positional) != 2:
            raise _NotArithmetic()
        left, right = self.compile(positional[0]), self.compile(positional[1])
        apply2 = _BINARY[function]
        return lambda x: apply2(left(x), right(x))


@lru_cache(maxsize=1024)
def _number(code: str) -> Optional[float]:
    """The value of the number literal ``code`` (``0.044715``), None for a complex one; each
    GELU spells the same few (``ast.literal_eval`` parses them)."""
    try:
        value = ast.literal_eval(code)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(value, (int, float)):
        return None
    return float(value)


def _apply(operator: str, left: Value, right: Value) -> Value:
    if operator == "+":
        return lambda x: left(x) + right(x)
    if operator == "-":
        return lambda x: left(x) - right(x)
    if operator == "*":
        return lambda x: left(x) * right(x)
    if operator == "/":
        return lambda x: left(x) / right(x)
    raise _NotArithmetic()


_HANDLERS = {
    tokens.NUMBER: _Compiler.number,
    tokens.NAME: _Compiler.name,
    symbols.atom: _Compiler.atom,
    symbols.arith_expr: _Compiler.arith,
    symbols.term: _Compiler.arith,
    symbols.factor: _Compiler.factor,
    symbols.power: _Compiler.power,
}
