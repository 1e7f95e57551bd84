"""The hooks (callbacks) a training call hands ``npu_hooks_append`` (``npu_callbacks_append``):
as the spec writes it, or as a copy, ``list(<hooks>)``.

npu_bridge's append functions append the NPU's broadcast hook to the list they are given, in
place, and put anything that is not a list aside for a new one. So a list the script reads
again after the call (``training_hooks[-1].total_time``), one that outlives it (an attribute),
or one a loop hands over again, would hold the NPU's hook (one more per call), and a tuple's
hooks would never run. Those go in as a copy; a new list (``[hook]``, ``hooks + [hook]``) and
what is not shown to be a list or tuple go in as they are.

The append functions append the NPU's broadcast of the variables: hooks (callbacks) that
already hold one (:func:`holds`) get no second.
"""

from __future__ import annotations

from typing import Callable, Optional

from npu_codemod.api import Base, dotted_name, symbols, tokens
from npu_codemod.api._toolkit import bound_values, called_function, enclosing_scope, returned_values, uses

from ._reaching import reaching

APPENDS = "it appends to the list it is given, and "
#: The loops a call may run in again.
LOOPS = (symbols.for_stmt, symbols.while_stmt)
#: The list methods that add to a list, and the argument that is added (-1: a list of them).
ADDERS = {"append": 0, "insert": 1, "extend": -1}
#: How many names (functions) :func:`holds` follows, one bound to (returning) the next.
NAME_HOPS = 3


def copy_reason(value: Base, keyword: str) -> Optional[str]:
    """Why ``value``, the ``keyword`` (hooks or callbacks) of a training call, goes to the append
    function as a copy, or None when it goes as it is."""
    if _display(value) == "tuple":
        return f"it drops {keyword} that are not in a list"
    name = dotted_name(value)
    values = bound_values(value, name) if name is not None else None
    kinds = {_display(bound) for bound in values or ()}
    if not kinds or None in kinds:
        return None  # not shown to be a list or a tuple (it may be None): as the spec writes it
    if "tuple" in kinds:
        return f"it drops {keyword} that are not in a list"
    if "." in str(name):
        return f"{APPENDS}{name} outlives this call"
    if _read_after(value, str(name)):
        return f"{APPENDS}{name} is used after this call"
    if _in_loop(value):
        return f"{APPENDS}this call runs in a loop"
    return None


def _display(value: Base) -> Optional[str]:
    """``"list"`` for a list display or comprehension, ``"tuple"`` for a tuple display or a
    generator expression (not a list either), else None."""
    if value.type != symbols.atom or value.children[0].type not in (tokens.LSQB, tokens.LPAR):
        return None
    if value.children[0].type == tokens.LSQB:
        return "list"
    inside = value.children[1] if len(value.children) == 3 else None
    if inside is None:
        return "tuple"  # ``()``
    if inside.type == symbols.testlist_gexp and any(
            child.type in (tokens.COMMA, symbols.comp_for) for child in inside.children):
        return "tuple"
    return _display(inside)  # ``([hook])``


def _read_after(value: Base, name: str) -> bool:
    """Is the local name ``value`` (spelled ``name``) read again after it, in its scope?"""
    seen = False
    for use in uses(enclosing_scope(value), name):
        if use.leaf is value:
            seen = True
        elif seen and use.kind != "bind":
            return True
    return False


def _in_loop(value: Base) -> bool:
    """Does ``value`` sit in a loop of its scope (the call may run again)?"""
    scope, node = enclosing_scope(value), value.parent
    while node is not None and node is not scope:
        if node.type in LOOPS:
            return True
        node = node.parent
    return False


def holds(value: Base, wanted: Callable[[Base], bool], depth: int = 0,
          returns: Callable[[Base], bool] = lambda call: False) -> bool:
    """Do the hooks ``value`` hold a ``wanted`` item: ``value`` a list or tuple display holding
    one, a sum with such a part (``hooks + [bcast_hook]``), a name each of whose values in its
    scope holds one, a call of a function of the file each of whose returns holds one
    (``called_function``: ``training_hooks()``), or a name one is added to before ``value``
    (``training_hooks.append(bcast_hook)``, often under ``if hvd.size() > 1:``, the script's
    own test of when to broadcast)? An item that is a name counts when each value it is bound
    to is ``wanted`` (``bcast_hook = hvd.BroadcastGlobalVariablesHook(0)``). A call of another
    module's function counts when ``returns`` says so (``utils.make_hooks()``: the repository's
    facts). Names are followed and functions :data:`NAME_HOPS` deep (``hooks = hooks + [...]``
    names itself)."""
    def item_wanted(item: Base) -> bool:
        if item.type != tokens.NAME:
            return wanted(item)
        reaches = reaching(item)
        if reaches is not None:
            return all(reach.value is not None and wanted(reach.value) for reach in reaches)
        bound = bound_values(item, str(item.value))
        return bool(bound) and all(wanted(value) for value in bound or ())

    if value.type == symbols.arith_expr and all(sign.value == "+" for sign in value.children[1::2]):
        return any(holds(part, wanted, depth, returns) for part in value.children[::2])
    function = called_function(value) if depth < NAME_HOPS else None
    if function is not None:
        returned = returned_values(function)
        return bool(returned) and all(holds(item, wanted, depth + 1, returns) for item in returned or ())
    if value.type != tokens.NAME:
        return returns(value) or any(item_wanted(item) for item in _items(value) or ())
    if depth == NAME_HOPS:
        return False
    reaches = reaching(value)
    if reaches is not None:  # each binding that may reach the read, with what is added after it
        return all(reach.value is not None and holds(reach.value, wanted, depth + 1, returns)
                   or any(item_wanted(item) for leaf in reach.after for item in _added(leaf)) for reach in reaches)
    bound = bound_values(value, str(value.value))
    return bool(bound) and all(holds(display, wanted, depth + 1, returns) for display in bound or ()) or any(
        item_wanted(item) for item in _added_before(value))


def _items(display: Base) -> Optional[list[Base]]:
    """The items of a list or tuple display (``[a, b]``, ``(a,)``), or None."""
    if _display(display) is None or len(display.children) != 3:
        return None if _display(display) is None else []
    inside = display.children[1]
    if inside.type in (symbols.listmaker, symbols.testlist_gexp):
        if any(child.type == symbols.comp_for for child in inside.children):
            return None
        return [child for child in inside.children if child.type != tokens.COMMA]
    return _items(inside) if inside.type == symbols.atom else [inside]


def _added_before(value: Base) -> list[Base]:
    """What the local name ``value`` reads is given, in its scope, before ``value``:
    ``name.append(x)``, ``name.insert(i, x)``, ``name.extend([x, ...])``, ``name += [x, ...]``."""
    added: list[Base] = []
    for use in uses(enclosing_scope(value), str(value.value)):
        if use.leaf is value:
            break
        added.extend(_added(use.leaf))
    return added


def _added(leaf: Base) -> list[Base]:
    """What the statement at ``leaf`` (a name) adds to its list, if it adds any."""
    parent = leaf.parent
    if parent is not None and parent.type == symbols.expr_stmt and len(parent.children) == 3 \
            and parent.children[0] is leaf and parent.children[1].value == "+=":
        return _items(parent.children[2]) or []
    if parent is None or parent.type != symbols.power or parent.children[0] is not leaf \
            or len(parent.children) != 3:
        return []
    method, call = parent.children[1], parent.children[2]
    place = ADDERS.get(method.children[-1].value) if method.children[0].type == tokens.DOT else None
    if place is None or call.children[0].type != tokens.LPAR or len(call.children) != 3:
        return []
    given = call.children[1]
    arguments = [child for child in given.children if child.type != tokens.COMMA] \
        if given.type == symbols.arglist else [given]
    if place == -1:
        return _items(arguments[0]) or [] if len(arguments) == 1 else []
    return [arguments[place]] if len(arguments) == place + 1 else []
