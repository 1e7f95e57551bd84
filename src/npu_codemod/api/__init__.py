"""The public API for migration rules: everything a third-party rule imports comes from here.

A rule is a :class:`Rule` subclass registered by a plugin's :func:`hookimpl`-decorated
``npu_codemod_rules()`` hook. It declares what it looks for (qualified names in
:attr:`Rule.calls`/:attr:`Rule.uses`, or a lib2to3 :attr:`Rule.pattern`), edits the syntax tree
with the helpers below and reports through :class:`FileContext`. The engine owns parsing,
Bowler, import placement (:meth:`FileContext.add_import`), what to parse, crash isolation and
the compile check. Tests use :mod:`npu_codemod.testing`.

The names are grouped by question; ``docs/api.md`` is generated from their docstrings and
``docs/writing-rules.md`` teaches them. Names not listed in ``__all__`` are internal and may
change. The built-in rule packs also use ``npu_codemod.api._toolkit``: the
analyses they share, which are not public and change with the packs.
"""

from __future__ import annotations

from fissix import pytree as _pytree
from fissix.fixer_util import (
    #: A NAME leaf: ``Name("npu_ops", prefix=" ")`` (fissix ``fixer_util.Name``).
    Name,
)
from fissix.pgen2 import (
    #: The token types of leaves (fissix ``pgen2.token``): ``leaf.type == tokens.NAME``,
    #: ``tokens.STRING``, ``tokens.COMMA``, ``tokens.LPAR``...
    token as tokens,
)
from fissix.pygram import (
    #: The grammar's node types (fissix ``pygram.python_symbols``): ``node.type ==
    #: symbols.power``, ``symbols.trailer``, ``symbols.arglist``, ``symbols.expr_stmt``...
    python_symbols as symbols,
)

from npu_codemod.codemods.calls import (
    Argument,
    add_keyword,
    arguments,
    find_argument,
    has_unpacking,
    #: Whether an expression node is the literal ``None``: ``is_none(argument.value)``.
    is_none,
    #: Whether an expression node is the literal ``True``: ``is_true(argument.value)``.
    is_true,
)
from npu_codemod.codemods.edits import (
    insert_after,
    insert_before,
    remove_statement,
    rename_argument,
    replace_callee,
    set_keyword,
    set_positional,
    wrap_argument,
)
from npu_codemod.codemods.findings import (
    #: What a finding says of its site: ``"migrated"`` (done: rewritten, or already in NPU
    #: form), ``"unmigrated"`` (a person must act: the message says what to do) or
    #: ``"error"`` (the rule or the file could not be handled).
    Status,
)
from npu_codemod.codemods.names import ImportNames, dotted_name
from npu_codemod.codemods.nodes import enclosing_statement
from npu_codemod.codemods.qualified import Reference, name_reference, references_under
from npu_codemod.codemods.rule import (
    #: The named parts of a :attr:`Rule.pattern` match, as :meth:`Rule.visit` gets them:
    #: ``call=trailer< ... >`` gives ``capture["call"]`` (a list for ``name=any*``), and
    #: ``capture["node"]`` is the matched node itself.
    Capture,
    FileContext,
    Rule,
)
from npu_codemod.codemods.snippets import parse_expression, parse_statements
from npu_codemod.codemods.tf_versions import (
    #: The files a rule runs on by default (:attr:`Rule.file_kinds`): TF 1.x code (``"tf1"``),
    #: and TF 1.x code run on TF 2.x through ``tf.compat.v1`` (``"tf2-compat"``).
    TF1_CODE,
    #: The files of TF 2.x code (``"tf2"``: eager, ``tf.function``, Keras ``fit``; and
    #: ``"tf-neutral"``: no sign of either version, in a TF 2.x repository): a rule for TF 2.x
    #: code says ``file_kinds = TF2_NATIVE``.
    TF2_NATIVE,
)
from npu_codemod.plugins.hookspecs import (
    #: The decorator of a plugin's hook implementations (pluggy's marker for ``npu_codemod``):
    #: ``@hookimpl`` over ``def npu_codemod_rules(): return [MyRule()]``; every hook is
    #: described in ``npu_codemod/plugins/hookspecs.py``.
    hookimpl,
)

#: A syntax tree node with children (fissix ``pytree.Node``).
Node = _pytree.Node
#: A token of the syntax tree (fissix ``pytree.Leaf``): ``.value``, ``.prefix`` (whitespace and
#: comments before it), ``.lineno``/``.column`` (0 for code a rule created).
Leaf = _pytree.Leaf
#: Either of the two (fissix ``pytree.Base``).
Base = _pytree.Base

__all__ = [
    # The rule and its context
    "Rule", "FileContext", "Capture", "Status", "hookimpl", "TF1_CODE", "TF2_NATIVE",
    # Qualified names
    "Reference", "ImportNames", "name_reference", "references_under", "dotted_name",
    # Reading calls
    "Argument", "arguments", "find_argument", "has_unpacking", "is_true", "is_none",
    # Edits
    "replace_callee", "rename_argument", "set_keyword", "set_positional", "add_keyword",
    "wrap_argument", "enclosing_statement", "insert_before", "insert_after", "remove_statement",
    "parse_expression", "parse_statements",
    # The syntax tree vocabulary
    "Node", "Leaf", "Base", "symbols", "tokens", "Name",
]
