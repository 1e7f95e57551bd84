"""What NPU052 removes with a GPU memory setting: its line, or the ``for``/``try``/``if`` around it
that the removal leaves empty when removing that is clearly safe.

TensorFlow's GPU guide writes ``gpus = ...list_physical_devices('GPU')`` / ``if gpus:`` /
``try:`` / ``for gpu in gpus:`` / ``set_memory_growth(gpu, True)`` / ``except RuntimeError as e:
print(e)``; without the setting, the loop, the ``try`` and the ``if`` hold nothing. Each goes
when nothing else can happen in it: a ``for`` with no ``else`` over a name, a device list or a
``range`` of them (``range(len(gpus))``) whose variable is used nowhere else (at module level: not
read by a function or class as the module's), a ``try`` whose body is emptied and that has no ``else`` or
``finally`` (its handlers can no longer run), an ``if`` with one branch and a test without calls
(but ``len(...)`` and the device lists). A function or class body left empty gets ``pass``. Any
other statement left empty (``while``, ``with``, an ``if`` with other branches, a loop whose
variable is used later...) keeps the setting: a person removes both.
"""

from __future__ import annotations

import re
import symtable
from dataclasses import dataclass
from typing import Iterator, Optional

from npu_codemod.api import Base, symbols, tokens
from npu_codemod.api._toolkit import block_statements, compound_body, tree_text

#: Calls that read the device list (no side effect) and ``len``: allowed in a test or iterable.
_PURE_CALL = re.compile(r"\b(?:[\w.]*\blist_(?:physical|logical)_devices|len)\(\s*(?:[\w.]+|(?:device_type\s*=\s*)?"
                        r"(['\"])\w+\1)?\s*\)")
#: ``range(...)`` of such values, or of names and numbers (``range(len(gpus))``), once they are replaced.
_RANGE_CALL = re.compile(r"\brange\(\s*[\w.]+(?:\s*,\s*[\w.]+){0,2}\s*\)")
_KINDS = {symbols.for_stmt: "for loop", symbols.try_stmt: "try statement", symbols.if_stmt: "if statement",
          symbols.while_stmt: "while loop", symbols.with_stmt: "with block"}


@dataclass(frozen=True)
class Removal:
    """The statement to remove (``None``: keep the setting, for the reason ``why``)."""

    statement: Optional[Base]
    why: str = ""


def removal(line: Base, settings: set[int]) -> Removal:
    """What goes with the setting ``line``, when every statement whose id is in ``settings`` (the
    file's other settings NPU052 removes) goes too."""
    statement = line
    while True:
        holder, body = _holder(statement)
        if holder is None or any(id(other) not in settings and other is not statement for other in body):
            return Removal(statement)  # the block keeps other statements (or it is the module)
        if holder.type in (symbols.funcdef, symbols.classdef) or _in_handler(holder, statement):
            return Removal(statement)  # the body gets ``pass``
        why = _unsafe(holder)
        if why:
            return Removal(None, why)
        settings.add(id(holder))
        statement = holder


def _holder(statement: Base) -> tuple[Optional[Base], list[Base]]:
    """The compound statement whose body holds ``statement``, and that body's statements."""
    parent = statement.parent
    if parent is None or parent.type == symbols.file_input:
        return None, []
    if parent.type == symbols.suite:
        return parent.parent, block_statements(parent)
    return parent, [statement]  # a one-line body: ``for gpu in gpus: set_memory_growth(...)``


def _in_handler(holder: Base, statement: Base) -> bool:
    """Is ``statement`` in a ``try``'s ``except``/``else``/``finally`` body (``pass`` is fine
    there), not in its ``try`` body?"""
    return holder.type == symbols.try_stmt and _body_of(statement, holder) is not compound_body(holder)


def _body_of(statement: Base, holder: Base) -> Base:
    return statement.parent if statement.parent is not holder else statement


def _unsafe(holder: Base) -> str:
    """Why removing the emptied compound ``holder`` is not clearly safe, or ``""``."""
    leaves = [child.value for child in holder.children if child.type == tokens.NAME]
    if holder.type == symbols.for_stmt:
        iterable, target = holder.children[3], holder.children[1]
        if "else" in leaves:
            return "the loop has an else clause"
        if not _pure(iterable):
            return "the loop iterates over a value that may have side effects"
        if _used_outside(holder, {leaf.value for leaf in target.leaves() if leaf.type == tokens.NAME}):
            return "its loop variable is used outside the loop"
        return ""
    if holder.type == symbols.try_stmt:
        return "the try statement has an else or finally clause" if {"else", "finally"} & set(leaves) else ""
    if holder.type == symbols.if_stmt:
        if len(holder.children) != 4:
            return "the if statement has other branches"
        return "" if _pure(holder.children[1]) else "the if test may have side effects"
    return f"a {_KINDS.get(holder.type, 'block')} may do more than hold it"


def _used_outside(statement: Base, names: set[str]) -> bool:
    """Is one of ``names`` spelled (as a name, not in a string) in the function, class or module
    that holds ``statement``, outside it? At module level, a function or class body counts only
    where it reads the module's name (not a local of its own: ``for i in ...`` in a helper)."""
    scope = statement.parent
    while scope is not None and scope.type not in (symbols.funcdef, symbols.classdef, symbols.file_input):
        scope = scope.parent
    if scope is None:
        return False
    inside = {id(leaf) for leaf in statement.leaves()}
    if scope.type != symbols.file_input:
        return any(leaf.type == tokens.NAME and leaf.value in names and id(leaf) not in inside
                   for leaf in scope.leaves())
    return any(leaf.value in names and id(leaf) not in inside for leaf in _module_level_names(scope)) \
        or _read_as_globals(tree_text(scope), names)


def _module_level_names(module: Base) -> Iterator[Base]:
    """The name leaves of ``module`` outside its functions' and classes' bodies."""
    stack = list(reversed(module.children))
    while stack:
        node = stack.pop()
        if node.type in (symbols.funcdef, symbols.classdef):
            continue
        if node.type == tokens.NAME:
            yield node
        stack.extend(reversed(node.children))


def _read_as_globals(text: str, names: set[str]) -> bool:
    """Does a function or class of the module ``text`` read one of ``names`` as the module's
    (Python's own scoping: ``symtable``)? A module it cannot compile: yes (keep the setting)."""
    try:
        table = symtable.symtable(text, "<module>", "exec")
    except (SyntaxError, ValueError):
        return True
    nested = list(table.get_children())
    while nested:
        block = nested.pop()
        nested.extend(block.get_children())
        if any(block.lookup(name).is_global() for name in names if name in block.get_identifiers()):
            return True
    return False


def _pure(expression: Base) -> bool:
    """An expression without calls (but ``len``, the device lists and a ``range`` of
    them), ``:=``, ``await`` or ``yield``: evaluating it or not changes nothing."""
    text = _RANGE_CALL.sub("_", _PURE_CALL.sub("_", tree_text(expression)))
    return "(" not in text and ":=" not in text and not re.search(r"\b(?:await|yield|lambda)\b", text)

