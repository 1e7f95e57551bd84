"""Whether a method that closes a class's session is ever called (NPU010).

``self.sess = tf.Session()`` is closed when a method of its class runs ``self.sess.close()``:
only if that method runs. A method Python calls itself (``__del__``, ``__exit__``) does; any
other counts when the program calls it: a reference ``x.<method>`` in the session's own file
(``self.close_session()``, ``model.close_session()``, ``atexit.register(self.close)``), or a
call in another file of the repository, from the repository facts gathered with ``ast`` before
any rewrite:

- ``npu010-method-called:<method>``: a file calls ``<something>.<method>()`` with no argument,
  its result dropped (how a cleanup method is called), or registers ``<something>.<method>``
  with ``atexit.register``.

A method a framework calls on instances of the class's base counts too: unittest runs a
``TestCase``'s ``tearDown()`` after every test (bilm-tf's tests close ``self.sess`` there), a
``MonitoredSession`` calls every ``SessionRunHook``'s ``end()`` when training stops. The base is
told by its last name (``unittest.TestCase``, ``tf.test.TestCase``, ``tf.train.SessionRunHook``).

Not seen: a call in a file that imports no TensorFlow (no analysis runs there), one with
arguments or whose result is kept, or a method reached otherwise (``getattr``, a callback
handed to a library). The session is then reported, which a person can check.
"""

from __future__ import annotations

import ast
import re
from typing import FrozenSet

from npu_codemod.api import FileContext, Node, symbols, tokens
from npu_codemod.api._toolkit import memo, module_index

from ._config_functions import parse

CALLED = "npu010-method-called:"
#: Methods Python calls itself: when the object is collected, when a ``with`` block ends.
IMPLICIT = frozenset({"__del__", "__exit__"})
#: A base class (its last name) -> the methods its framework calls on every instance.
FRAMEWORK_CALLED = {"TestCase": frozenset({"tearDown", "doCleanups"}),
                    "SessionRunHook": frozenset({"end"})}


def called_method_facts(text: str) -> set[str]:
    """The ``npu010-method-called:`` facts of one file (see the module docstring)."""
    tree = parse(text)
    if tree is None:
        return set()
    index = module_index(tree)
    facts = set()
    for statement in index.nodes(ast.Expr):
        call = statement.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and not call.args and not call.keywords:
            facts.add(CALLED + call.func.attr)
    for call in index.nodes(ast.Call):
        if isinstance(call.func, ast.Attribute) and call.func.attr == "register":
            facts.update(CALLED + value.attr for value in call.args if isinstance(value, ast.Attribute))
    return facts


def is_called(method: str, classdef: Node, ctx: FileContext) -> bool:
    """Is the method named ``method`` of the class ``classdef`` called: by Python, by the
    framework of the class's base, in this file, or by another file of the repository (as far
    as the facts tell)?"""
    return method in IMPLICIT or _called_by_a_base(method, classdef) or method in _referenced(ctx) \
        or method in _called_elsewhere(ctx)


def _called_by_a_base(method: str, classdef: Node) -> bool:
    """Does a base of ``classdef`` (:data:`FRAMEWORK_CALLED`) have its framework call ``method``?"""
    return any(method in FRAMEWORK_CALLED.get(base, ()) for base in _base_names(classdef))


def _base_names(classdef: Node) -> list[str]:
    """The last names of the bases ``class C(a.B, D):`` spells (``B``, ``D``), keywords left out."""
    children = classdef.children
    if len(children) < 4 or children[2].type != tokens.LPAR or children[3].type == tokens.RPAR:
        return []
    bases = children[3].children if children[3].type == symbols.arglist else [children[3]]
    return [str(base).strip().rpartition(".")[2] for base in bases
            if base.type != tokens.COMMA and base.type != symbols.argument]


def _referenced(ctx: FileContext) -> FrozenSet[str]:
    """The attribute names the file's original text spells (``x.<name>``): from its ``ast``,
    or, for a file that is not Python 3, from the text (a ``.name`` in a comment counts too)."""
    found = memo(ctx).get("npu010.referenced")
    if found is None:
        tree = parse(ctx.original)
        if tree is None:
            found = frozenset(re.findall(r"\.\s*([A-Za-z_]\w*)", ctx.original))
        else:
            found = frozenset(node.attr for node in module_index(tree).nodes(ast.Attribute))
        memo(ctx)["npu010.referenced"] = found
    return found


def _called_elsewhere(ctx: FileContext) -> FrozenSet[str]:
    found = memo(ctx).get("npu010.called_methods")
    if found is None:
        found = memo(ctx)["npu010.called_methods"] = frozenset(
            fact[len(CALLED):] for fact in ctx.facts if fact.startswith(CALLED))
    return found
