"""Settings of the process environment in code: ``os.environ[name] = value``,
``os.environ.setdefault(name, value)`` and ``os.putenv(name, value)``; and several at once,
``os.environ.update({name: value, ...})`` or ``os.environ.update(NAME=value)``.

TensorFlow reads switches from the environment (``TF_ENABLE_AUTO_MIXED_PRECISION``,
``TF_XLA_FLAGS``), which training scripts set in code: rules that report such a switch match
:data:`ENVIRONMENT_PATTERN` and read the match with :func:`environment_setting`, and
:data:`ENVIRONMENT_UPDATE_PATTERN` with :func:`environment_updates`.
"""

from __future__ import annotations

import ast
from typing import Any, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .calls import unparenthesised
from .names import prefix_name
from .scopes import assigned_values

#: A fissix pattern (an alternative of a rule's pattern) for each way to set a variable:
#: ``key`` captures its name, ``value`` what it is set to; ``method`` the call's method.
ENVIRONMENT_PATTERN = """
        expr_stmt< power< any* trailer< '[' key=any ']' > > '=' value=any >
      | power< any* trailer< '.' method=('setdefault' | 'putenv') >
               trailer< '(' arglist< key=any ',' value=any > ')' > >"""
#: A fissix pattern for ``<...>.environ.update(...)``: ``updated`` captures its arguments.
ENVIRONMENT_UPDATE_PATTERN = """
        power< any* trailer< '.' 'update' > trailer< '(' updated=any ')' > >"""
#: The names the code of such a setting has (a rule's ``_site_names``).
ENVIRONMENT_NAMES = ("environ", "putenv")


def environment_setting(node: pytree.Base, capture: dict[str, Any]) -> Optional[tuple[str, pytree.Base]]:
    """(variable, value) when the match ``node`` of :data:`ENVIRONMENT_PATTERN` sets the
    process environment and names the variable with a string (or a name bound to one only);
    else None."""
    if "key" not in capture or not _sets_environment(node, capture):
        return None
    name = string_value(capture["key"])
    return (name, unparenthesised(capture["value"])) if name is not None else None


def string_value(node: pytree.Base) -> Optional[str]:
    """The text of the string literal ``node`` (or of a name bound to one only), else None."""
    node = unparenthesised(node)
    if node.type == token.NAME:
        bound = assigned_values(node, node.value) or []
        node = bound[0] if len(bound) == 1 else node
    if node.type != token.STRING:
        return None
    try:
        text = ast.literal_eval(node.value)
    except (SyntaxError, ValueError):
        return None
    return text if isinstance(text, str) else None


def _sets_environment(node: pytree.Base, capture: dict[str, Any]) -> bool:
    """Is the match ``node`` a setting of the process environment: an item of ``environ``
    assigned or ``environ.setdefault(...)``, or a call of ``putenv``?"""
    method = capture.get("method")
    method = method[0] if isinstance(method, list) else method  # a group's match is a list
    if method is None:
        target = node.children[0]
        receiver = prefix_name(target, len(target.children) - 1) or ""
    elif method.value == "setdefault":
        receiver = prefix_name(node, len(node.children) - 2) or ""
    else:
        return True
    return receiver.rpartition(".")[2] == "environ"


def environment_updates(node: pytree.Base, capture: dict[str, Any]) -> list[tuple[str, pytree.Base]]:
    """(variable, value) of each variable the match ``node`` of
    :data:`ENVIRONMENT_UPDATE_PATTERN` sets, when it updates the process environment: the
    string keys of a dict display (``{"TF_XLA_FLAGS": "--tf_xla_auto_jit=2"}``), keywords
    (``update(TF_XLA_FLAGS=...)``), the keywords of a ``dict(...)`` argument."""
    receiver = prefix_name(node, len(node.children) - 2) or ""
    if "updated" not in capture or receiver.rpartition(".")[2] != "environ":
        return []
    return _updates(capture["updated"])


def _updates(arguments: pytree.Base) -> list[tuple[str, pytree.Base]]:
    found: list[tuple[str, pytree.Base]] = []
    for argument in arguments.children[::2] if arguments.type == syms.arglist else [arguments]:
        argument = unparenthesised(argument)
        if argument.type == syms.argument and argument.children[1].type == token.EQUAL:
            found.append((argument.children[0].value, unparenthesised(argument.children[2])))
        elif argument.type == syms.atom and argument.children[0].value == "{" and len(argument.children) == 3:
            found.extend(_displayed(argument.children[1]))
        elif argument.type == syms.power and argument.children[0].value == "dict" \
                and len(argument.children) == 2 and len(argument.children[1].children) == 3:
            found.extend(_updates(argument.children[1].children[1]))
    return found


def _displayed(items: pytree.Base) -> list[tuple[str, pytree.Base]]:
    """The string-keyed items of a dict display's ``dictsetmaker`` (one item: the key, ``:``,
    the value)."""
    children = items.children if items.type == syms.dictsetmaker else []
    found = []
    for index in range(0, len(children) - 2, 4):
        if children[index + 1].type == token.COLON:
            key = string_value(children[index])
            if key is not None:
                found.append((key, unparenthesised(children[index + 2])))
    return found
