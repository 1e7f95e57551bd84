"""Sites the migration made dead code on the NPU: ``not-needed``, not work left.

NPU012 switches every TPUEstimator off (``use_tpu=False``), and a TPUEstimator then passes its
model function ``params["use_tpu"] = False``. A TPU-only call NPU012 reports inside
``if params["use_tpu"]:`` (``CrossShardOptimizer``, ``TPUClusterResolver``...) never runs on
the NPU: its finding is settled ``not-needed``, with the reason, and is not counted as left.
The engine settles a file's findings; the lines come from the record the analysis handed over
(``ast_handover``), which read them from its ``ast``, else from a parse of a file that has such
a finding.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import AbstractSet, Callable, Iterator, Optional, Sequence

from .findings import Finding
from .modules import ModuleIndex, module_ast

#: The rule that switches the TPU off, and the ``params`` key TPUEstimator sets from it.
TPU_RULE = "NPU012"
SWITCH = "use_tpu"
DEAD = (" (not needed: it is under if params[\"use_tpu\"]:, which TPUEstimator sets False once "
        "NPU012 switched use_tpu off)")


def settle_dead(findings: Sequence[Finding], dead: Callable[[], AbstractSet[int]]) -> list[Finding]:
    """``findings`` of one file with NPU012's ``unmigrated`` ones in dead TPU branches as
    ``not-needed``; ``dead()`` gives the file's :func:`dead_lines`, asked only when there is
    such a finding."""
    candidates = [f for f in findings if f.rule_id == TPU_RULE and f.status == "unmigrated"]
    if not candidates:
        return list(findings)
    lines = dead()
    return [dataclasses.replace(f, status="not-needed", message=f.message + DEAD)
            if f in candidates and f.line in lines else f for f in findings]


def dead_lines(source: str) -> frozenset[int]:
    """The lines of the bodies of ``if params["use_tpu"]:`` (or ``params.get("use_tpu")``;
    not their ``else``) in the decoded file ``source``; none for a file ``ast`` cannot read.

    A file that spells no ``params`` has none and is not parsed: ``ast`` normalises names
    (NFKC), so a non-ASCII file is parsed whatever it spells."""
    if not may_have_dead_lines(source):
        return frozenset()
    module = module_ast(source)
    return frozenset() if module is None else tree_dead_lines(module)


def may_have_dead_lines(source: str) -> bool:
    """Can ``source`` have :func:`dead_lines`? Not an ASCII text that never spells ``params``."""
    return not source.isascii() or "params" in source


def tree_dead_lines(module: ast.Module, index: Optional[ModuleIndex] = None) -> frozenset[int]:
    """:func:`dead_lines` of a file parsed as ``module``. Only statement lists are walked: an
    ``if`` is a statement, never inside an expression; with ``index`` (``module``'s: the
    analysis's), none is: it holds the ``if`` statements."""
    lines: set[int] = set()
    for node in _statements(module.body) if index is None else index.nodes(ast.If):
        if type(node) is ast.If and _reads_switch(node.test):
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return frozenset(lines)


#: The fields of a node that hold statement lists (``ExceptHandler`` and ``match_case`` too).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement of ``body`` and of the blocks nested in it, in pre-order (and the
    ``except`` clauses and ``case`` blocks that hold some)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if block:
                stack.extend(reversed(block))


def _reads_switch(test: ast.expr) -> bool:
    """``params["use_tpu"]``, ``params.get("use_tpu")``, or one of them joined by ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_reads_switch(value) for value in test.values)
    return _is_switch(test)


def _is_switch(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        key = node.slice
        return _is_params(node.value) and isinstance(key, ast.Constant) and key.value == SWITCH
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return (_is_params(node.func.value) and bool(node.args)
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == SWITCH)
    return False


def _is_params(node: ast.expr) -> bool:
    """``params`` or ``self.params``: the model function's parameters."""
    return (isinstance(node, ast.Name) and node.id == "params") or \
        (isinstance(node, ast.Attribute) and node.attr == "params")
