"""A module's bindings of a root module (:class:`~.names.ImportNames`) read from CPython's
``ast`` instead of fissix's tree: for a file the engine does not parse with fissix at all
(``engine``: no rule that reads the tree has a site in it).

The bindings are those the tree gives, in the same order (a test compares both on every corpus
file and on generated import and assignment shapes): every import, and every assignment
``name = dotted.value`` (or ``name = accessor()``) of a bound name, anywhere in the module, in
source order. Where the two trees differ, fissix's reading is kept: a name or a value in
parentheses is another node there (``x = (tf.nn)`` binds nothing), and a chained or annotated
assignment is no alias.
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from typing import Iterable, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .modules import module_ast, statements
from .names import ACCESSOR_CALL, TF, ImportNames, ast_import_bindings

#: A module of no statement: the tree ``ImportNames`` is built on before the ``ast``'s
#: statements are read into it (it is only read).
_NO_STATEMENTS = pytree.Node(syms.file_input, [pytree.Leaf(token.ENDMARKER, "")])


@functools.cache
def _non_ascii_run() -> re.Pattern[str]:
    """A run of letters, digits, underscores and non-ASCII characters with at least one of the
    latter: where an identifier that is not plain ASCII can be. Compiled on first use, not at
    import: its ranges up to U+10FFFF cost about 90 M instructions (15 ms) to compile, in every
    command's start-up, and only a file with a name that is not NFKC-normal needs it."""
    return re.compile(r"[0-9A-Za-z_\x80-\U0010ffff]*[\x80-\U0010ffff][0-9A-Za-z_\x80-\U0010ffff]*")


def names_read_alike(text: str) -> bool:
    """Do ``ast`` and fissix spell every identifier of ``text`` alike? CPython's ``ast`` gives
    identifiers in NFKC form (PEP 3131: ``ｈorovod`` is ``horovod``, ``e`` and a combining
    accent one ``é``), fissix as written; so a file with such a name is read from neither
    ``ast`` nor its layout, but parsed whole. Words in comments and strings count too (a
    look at the text, not a parse): it only costs such a file its selective parse. Chinese
    comments' full-width punctuation is no identifier character and does not count."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return True
    for run in _non_ascii_run().findall(text):
        word = ""
        for character in run + " ":
            if ("_" + character).isidentifier():
                word += character
                continue
            if not word.isascii() and not unicodedata.is_normalized("NFKC", word):
                return False
            word = ""
    return True


def ast_import_names(text: str, root: str = TF, accessors: Optional[dict[str, str]] = None,
                     repository: Optional[dict[str, str]] = None) -> Optional[ImportNames]:
    """``ImportNames(tree, root, accessors, repository)`` of the fissix tree of ``text`` (a whole module),
    from its ``ast``; None when ``ast`` cannot read it, or would spell a name otherwise
    (:func:`names_read_alike`)."""
    module = module_ast(text)
    if module is None or not names_read_alike(text):
        return None
    return bound_names(binding_steps(text, statements(module)), root, accessors, repository)


#: What a module's statements may bind, in source order (:func:`binding_steps`): the
#: ``(name, target)`` pairs of each import, or the ``(name, dotted value)`` of an assignment.
BindingSteps = tuple["tuple[tuple[str, str], ...] | tuple[str, str]", ...]


def binding_steps(text: str, nodes: Iterable[ast.stmt]) -> BindingSteps:
    """The imports and the assignments ``name = dotted.value`` among ``nodes`` (every
    statement of the ``ast`` of ``text``, as :func:`~.modules.statements` gives them) as
    :class:`ImportNames` reads them, for any root module: plain values that :func:`bound_names`
    turns into the bindings of one (kept without the tree: ``ast_handover``)."""
    steps: list["tuple[tuple[str, str], ...] | tuple[str, str]"] = []
    lines: Optional[list[bytes]] = None
    for node in nodes:  # in source order, as fissix's ``small_statements``
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            steps.append(tuple(ast_import_bindings(node)))
            continue
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 \
                or not isinstance(node.targets[0], ast.Name):
            continue
        spelled = _alias_value(node)
        if spelled:
            lines = lines if lines is not None else text.encode("utf-8").split(b"\n")
            if b"(" not in _gap(lines, node.targets[0], node.value):  # not ``x = (tf.nn)``
                steps.append((node.targets[0].id, spelled))
    return tuple(steps)


def bound_names(steps: BindingSteps, root: str = TF, accessors: Optional[dict[str, str]] = None,
                repository: Optional[dict[str, str]] = None) -> ImportNames:
    """The :class:`ImportNames` of ``root`` that a module's :func:`binding_steps` give: each
    import's bindings, and each assignment whose value starts with a bound name."""
    names = ImportNames(_NO_STATEMENTS, root=root, accessors=accessors, repository=repository)
    for step in steps:
        if step and type(step[0]) is str:  # an assignment
            name, spelled = step
            head = spelled.partition(".")[0].partition("(")[0]
            if head in names.bindings or names.leads_to_accessor(head):
                names._bind_alias(name, spelled)
        else:
            names._bind_import(step)  # type: ignore[arg-type]
    return names


def _alias_value(node: ast.Assign) -> Optional[str]:
    """What ``name = value`` binds ``name`` to as fissix's ``ImportNames`` reads it: the
    dotted name ``value`` spells (``a.b``, or ``a.b()`` for a call without arguments), or None
    (any other value, or a target in parentheses)."""
    target = node.targets[0]
    if (node.lineno, node.col_offset) != (target.lineno, target.col_offset):
        return None  # ``(x) = ...``: not a name there
    value = node.value
    called = isinstance(value, ast.Call)
    chain = value.func if isinstance(value, ast.Call) else value
    if isinstance(value, ast.Call) and (value.args or value.keywords):
        return None
    parts: list[str] = []
    while isinstance(chain, ast.Attribute):
        parts.append(chain.attr)
        chain = chain.value
    if not isinstance(chain, ast.Name) or not _starts_with(value, chain):
        return None
    spelled = ".".join([chain.id, *reversed(parts)])
    return spelled + ACCESSOR_CALL if called else spelled


def _starts_with(value: ast.expr, head: ast.expr) -> bool:
    """Whether every node from ``value`` down to its leading name starts where the name does
    (no parenthesis opens between: ``(tf).nn`` is no dotted name for fissix)."""
    node = value
    while True:
        if (node.lineno, node.col_offset) != (head.lineno, head.col_offset):
            return False
        if node is head:
            return True
        node = node.func if isinstance(node, ast.Call) else node.value  # type: ignore[attr-defined]


def _gap(lines: list[bytes], before: ast.expr, after: ast.expr) -> bytes:
    """The bytes of the module between the end of ``before`` and the start of ``after``."""
    first, start = before.end_lineno or before.lineno, before.end_col_offset or 0
    last, end = after.lineno, after.col_offset
    if first == last:
        return lines[first - 1][start:end]
    return b"\n".join([lines[first - 1][start:], *lines[first:last - 1], lines[last - 1][:end]])
