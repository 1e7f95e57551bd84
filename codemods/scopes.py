"""Names and bindings in a scope: how each occurrence of a name is used, what binds it,
where a value flows.

NPU010 must know whether a session object stays inside its block (then closing it after the
last statement that uses it is safe) or escapes it: :func:`uses` classifies every occurrence
of a name, :func:`classify` answers "does this leaf bind its name?" (the one answer, imports
included), :func:`flow` where a value goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from .names import attribute_name, import_binding_leaves, is_attribute_trailer
from .nodes import child_index, enclosing_scope
from .walk import scope_statements

NESTED_SCOPES = (syms.funcdef, syms.classdef, syms.lambdef)
#: Nodes through which a value flows unchanged: ``(x)``, ``x or y``, ``a if c else x``.
_TRANSPARENT = (syms.or_test, syms.and_test, syms.test)
_CONTAINERS = (syms.testlist_gexp, syms.listmaker, syms.dictsetmaker, syms.testlist,
               syms.exprlist, syms.testlist_star_expr, syms.subscriptlist)
_HARMLESS = (syms.comparison, syms.not_test, syms.if_stmt, syms.while_stmt, syms.assert_stmt,
             syms.simple_stmt, syms.expr_stmt)
_TARGET_PARTS = (syms.atom, syms.testlist_gexp, syms.exprlist, syms.testlist_star_expr,
                 syms.listmaker, syms.star_expr)
_AUGMENTED = frozenset({"+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "^=",
                        "|=", "@="})


@dataclass(frozen=True)
class Use:
    """One occurrence of a name in a scope.

    ``kind`` is one of: ``bind`` (assigned, deleted, a loop/with/import target, a parameter,
    declared global/nonlocal), ``attribute`` (``name.x``, ``name(...)``, ``name[...]``),
    ``argument`` (passed to a call), ``with`` (a context manager: ``with name:``), ``harmless``
    (tested, compared, an expression statement) or ``escape`` (``detail`` says how).
    """

    leaf: pytree.Leaf
    kind: str
    detail: str = ""


def uses(scope: pytree.Node, name: str) -> list[Use]:
    """Every occurrence of ``name`` in ``scope``, nested functions included, in source order.

    A nested function, class or lambda that binds ``name`` itself is skipped; one that only
    reads it makes that occurrence an ``escape`` ("used in a nested function").
    """
    result = []
    for leaf, nested in _occurrences(scope, name):
        use = classify(leaf)
        if nested and use.kind != "bind":
            use = Use(leaf, "escape", "used in a nested function")
        result.append(use)
    return result


def name_leaves(node: pytree.Node) -> dict[str, list[pytree.Leaf]]:
    """The NAME leaves below ``node`` by value, each list in the tree's order. One iterator
    per level, not ``pre_order``'s one yield per node: half the walk."""
    leaves: dict[str, list[pytree.Leaf]] = {}
    stack = [iter(node.children)]
    while stack:
        for child in stack[-1]:
            if child.type == token.NAME:
                leaves.setdefault(child.value, []).append(child)
            elif child.children:
                stack.append(iter(child.children))
                break
        else:
            stack.pop()
    return leaves


class Names:
    """The variable occurrences of a scope (nested scopes included) by name, from one walk:
    ``Names(scope).uses(name)`` is ``uses(scope, name)``, for who asks about many names of
    the same scope (NPU010 follows every object built with a session). A snapshot: ask it
    before the scope is edited.

    The walk only sorts the name leaves by value; whether one is a variable is asked of the
    names looked up (most of a scope's names never are)."""

    def __init__(self, scope: pytree.Node) -> None:
        self.scope = scope
        self.leaves = name_leaves(scope)
        self._local: dict[tuple[int, str], bool] = {}

    def uses(self, name: str) -> list[Use]:
        return _leaf_uses(self.leaves.get(name, ()), name, self.scope, self._local)


class NameIndex:
    """Every name leaf of a tree by its value, from one walk: ``NameIndex(tree).uses(scope,
    name)`` is ``uses(scope, name)`` for any scope of the tree, without a walk of the scope
    per name (NPU002 asks, per batching site, about each function around it and those that
    use it: each a walk of the whole module). The index is a snapshot: leaves the rules add
    later are not in it, and those they take out of the tree are left out."""

    def __init__(self, tree: pytree.Node) -> None:
        self.leaves = name_leaves(tree)
        self._local: dict[tuple[int, str], bool] = {}

    def uses(self, scope: pytree.Node, name: str) -> list[Use]:
        return _leaf_uses([leaf for leaf in self.leaves.get(name, ()) if _is_within(leaf, scope)],
                          name, scope, self._local)


def _leaf_uses(leaves: Iterable[pytree.Leaf], name: str, scope: pytree.Node,
               local: dict[tuple[int, str], bool]) -> list[Use]:
    """The uses among ``leaves`` (the name ``name``'s leaves within ``scope``) of the variable
    ``name`` of ``scope``, as :func:`uses` classifies them; ``local`` caches :func:`_nesting`."""
    result = []
    for leaf in leaves:
        if not (_is_variable(leaf) or _is_nested_def_name(leaf, scope)):
            continue
        nested = _nesting(leaf, name, scope, local)
        if nested is None:
            continue
        use = classify(leaf)
        if nested and use.kind != "bind":
            use = Use(leaf, "escape", "used in a nested function")
        result.append(use)
    return result


def _is_within(leaf: pytree.Leaf, scope: pytree.Node) -> bool:
    node = leaf.parent
    while node is not None and node is not scope:
        node = node.parent
    return node is scope


def _nesting(leaf: pytree.Leaf, name: str, scope: pytree.Node,
             local: dict[tuple[int, str], bool]) -> Optional[bool]:
    """True when ``leaf`` is in a function/class/lambda nested in ``scope``, None when one of
    those binds ``name`` itself (another variable), else False. ``local`` keeps whether a
    nested scope binds a name, by (id, name)."""
    node = leaf.parent
    if _is_nested_def_name(leaf, scope):
        node = node.parent  # a def's name is bound where the def is
    nested = False
    while node is not scope:
        if node.type in NESTED_SCOPES:
            key = (id(node), name)
            if key not in local:
                local[key] = _binds_locally(node, name)
            if local[key]:
                return None
            nested = True
        node = node.parent
    return nested


def _is_nested_def_name(leaf: pytree.Leaf, scope: pytree.Node) -> bool:
    parent = leaf.parent
    return parent.type == syms.funcdef and parent is not scope and parent.children[1] is leaf


#: An occurrence held in a nested scope: the leaf, whether it is nested (relative to the walk's
#: start), and whether it is the scope's own (not in a scope nested in it).
_Held = tuple[pytree.Leaf, bool, bool]


def _occurrences(node: pytree.Base, name: str, nested: bool = False) -> Iterator[tuple[pytree.Leaf, bool]]:
    """Each leaf of ``node`` that is the variable ``name``, in source order, and whether it is
    in a nested function, class or lambda (one that binds ``name`` itself is left out; a
    def's name counts where the def is).

    One walk of the tree: a nested scope's occurrences are held until its end, when its own
    (not those of scopes nested in it) say whether it binds ``name`` (:func:`_binds`), and
    then dropped or passed on. Asking that first walked every nested scope once more per level
    of nesting. One loop with a stack, not a generator per level: a leaf deep in the tree is
    not passed up every level."""
    # A frame: the children being walked, whether they are nested, the nested scope's held
    # occurrences (leaf, nested, the scope's own) or None outside one (yielded), and whether
    # the frame is that scope's (settled when it ends).
    stack: list[tuple[Iterator[pytree.Base], bool, Optional[list[_Held]], bool]] = [
        (iter(node.children), nested, None, False)]
    while stack:
        children, inside, held, _ = stack[-1]
        for child in children:
            found = None
            if child.type == token.NAME:
                if child.value == name and _is_variable(child):
                    found = child
            elif child.type in NESTED_SCOPES:
                if child.type == syms.funcdef and child.children[1].value == name:
                    found = child.children[1]
            elif child.children:
                stack.append((iter(child.children), inside, held, False))
                break
            if found is not None:
                if held is None:
                    yield found, inside
                else:
                    held.append((found, inside, True))
            if child.type in NESTED_SCOPES:
                stack.append((iter(child.children), True, [], True))
                break
        else:
            _, _, ended, scope = stack.pop()
            if not scope or ended is None or _binds(leaf for leaf, _, own in ended if own):
                continue
            outer = stack[-1][2]
            if outer is None:
                yield from ((leaf, inner) for leaf, inner, _ in ended)
            else:
                outer.extend((leaf, inner, False) for leaf, inner, _ in ended)


def _is_variable(leaf: pytree.Leaf) -> bool:
    """False for ``obj.name`` and the keyword of ``f(name=...)``."""
    previous = leaf.prev_sibling
    if previous is not None and previous.type == token.DOT:
        return False
    parent = leaf.parent
    if parent is not None and parent.type == syms.argument and parent.children[0] is leaf:
        return not (len(parent.children) == 3 and parent.children[1].type == token.EQUAL)
    if parent is not None and parent.type in (syms.funcdef, syms.classdef):
        return False  # the def/class name binds in the outer scope, handled by the caller
    return True


def _binds_locally(scope: pytree.Node, name: str) -> bool:
    """True when ``name`` is local to the nested ``scope`` (a parameter or assigned there)."""
    return _binds(leaf for leaf, nested in _occurrences(scope, name) if not nested)


def _binds(own: Iterable[pytree.Leaf]) -> bool:
    """Whether a scope whose own occurrences of a name are ``own`` binds it (see
    :func:`_binds_locally`)."""
    declared = bound = False
    for leaf in own:
        use = classify(leaf)
        if use.kind == "bind":
            if use.detail == "declared":
                declared = True
            else:
                bound = True
    return bound and not declared


def classify(leaf: pytree.Leaf) -> Use:
    """What one occurrence of a name does with the object it names."""
    bound = binding(leaf)
    if bound:
        return Use(leaf, "bind", bound)
    following = leaf.next_sibling
    if following is not None and following.type == syms.trailer:
        return Use(leaf, "attribute")
    node = leaf
    while True:
        parent = node.parent
        if parent is None:
            return Use(leaf, "harmless")
        if parent.type == syms.atom and parent.children[0].type == token.LPAR \
                and len(parent.children) == 3:
            node = parent
            continue
        if parent.type in _TRANSPARENT and not (parent.type == syms.test and
                                                 child_index(node) == 2):
            node = parent
            continue
        break
    kind, detail = _value_flow(node, parent)
    return Use(leaf, kind, detail)


def _value_flow(node: pytree.Base, parent: pytree.Node) -> tuple[str, str]:
    if parent.type == syms.argument or parent.type == syms.arglist or (
        parent.type == syms.trailer and parent.children[0].type == token.LPAR
    ):
        return "argument", ""
    if parent.type == syms.trailer:  # x[name]
        return "harmless", ""
    if parent.type in (syms.with_item, syms.with_stmt):
        return "with", ""
    if parent.type == syms.return_stmt:
        return "escape", "returned"
    if parent.type in (syms.yield_expr, syms.yield_arg):
        return "escape", "yielded"
    if parent.type in _CONTAINERS or parent.type == syms.atom:
        outer = _outside_containers(parent).parent
        if outer is not None and outer.type == syms.return_stmt:
            return "escape", "returned"
        if outer is not None and outer.type in (syms.yield_expr, syms.yield_arg):
            return "escape", "yielded"
        return "escape", "stored in a container"
    if parent.type == syms.expr_stmt:
        if parent.children[-1] is node and len(parent.children) > 1:
            return "escape", "assigned to another name"
        return "harmless", ""
    if parent.type in _HARMLESS:
        return "harmless", ""
    return "escape", "used as a value"


def _outside_containers(node: pytree.Base) -> pytree.Base:
    """The outermost tuple/list/dict display or parentheses that ``node`` is an item of."""
    while node.parent is not None and (node.parent.type in _CONTAINERS or node.parent.type == syms.atom):
        node = node.parent
    return node


#: The calls a value was passed to on the way (see :attr:`Flow.calls`).
Calls = tuple[tuple[pytree.Node, int], ...]


@dataclass(frozen=True)
class Flow:
    """Where the value of an expression goes (see :func:`flow`).

    ``kind`` is ``kept`` (bound to the NAME leaves ``targets``; ``contained`` when it gets
    there inside a list/tuple/dict display or a comprehension), ``stored`` (``into`` an
    ``attribute``, a ``subscript``, or a ``container`` through a method such as ``lst.append``;
    ``store`` is the NAME that receives it when there is one, ``detail`` says how), ``escape`` (``detail``:
    returned, yielded, used in a lambda or a def line, used as a value) or ``dropped``.
    ``calls`` are the calls it was passed to on the way, innermost first, each as (its power
    node, the index of its ``(...)`` trailer there).
    """

    kind: str
    detail: str = ""
    targets: tuple[pytree.Leaf, ...] = ()
    contained: bool = False
    into: str = ""
    store: Optional[pytree.Leaf] = None
    calls: tuple[tuple[pytree.Node, int], ...] = ()


#: Methods that keep their argument in the receiver: ``lst.append(x)``, ``queue.put(x)``.
STORING_METHODS = frozenset({"append", "appendleft", "extend", "insert", "add", "put",
                             "put_nowait", "setdefault"})
#: Nodes a value goes through into a bigger value that still holds it (or derives from it).
_DERIVED = (syms.arith_expr, syms.term, syms.shift_expr, syms.and_expr, syms.xor_expr, syms.expr,
            syms.factor, syms.power, syms.argument, syms.arglist, syms.subscript,
            syms.subscriptlist, syms.sliceop)
_ITEMS = (*_CONTAINERS, syms.star_expr, syms.comp_for, syms.comp_if, syms.comp_iter)
_NO_VALUE = (syms.comparison, syms.not_test, syms.if_stmt, syms.while_stmt, syms.assert_stmt,
             syms.del_stmt, syms.simple_stmt, syms.with_stmt, syms.print_stmt)
_DEF_LINE = (syms.lambdef, syms.old_lambdef, syms.parameters, syms.typedargslist,
             syms.varargslist, syms.tname, syms.funcdef, syms.classdef, syms.decorator)


def flow(node: pytree.Base) -> Flow:
    """Where the value of the expression ``node`` goes, up to the statement holding it.

    Through parentheses, ``or``/``and``/``if-else`` and arithmetic it stays the same value;
    through a call it is an argument (the result may hold it: the walk goes on with the
    result); through a display or a comprehension it is an item.
    """
    calls: list[tuple[pytree.Node, int]] = []
    contained = False
    while True:
        parent = node.parent
        kind = parent.type if parent is not None else None
        if kind == syms.trailer:
            if parent.children[0].type != token.LPAR:
                return Flow("dropped", calls=tuple(calls))  # an index: x[node]
            power, index = parent.parent, child_index(parent)
            calls.append((power, index))
            stored = _stored_by_method(power, index, tuple(calls))
            if stored is not None:
                return stored
            node = power
        elif kind == syms.atom and _is_parenthesised(parent):
            node = parent
        elif kind in _ITEMS or kind == syms.atom:
            target = _unpacked(parent, node)
            if target is not None:
                return _bound_to([target], contained, tuple(calls))
            contained, node = True, parent
        elif kind in _TRANSPARENT:
            if kind == syms.test and child_index(node) == 2:
                return Flow("dropped", calls=tuple(calls))  # the condition of a if b else c
            node = parent
        elif kind in _DERIVED:
            node = parent
        else:
            return _flow_at(node, parent, contained, tuple(calls))


def _is_parenthesised(atom: pytree.Node) -> bool:
    return atom.children[0].type == token.LPAR and len(atom.children) == 3 and \
        atom.children[1].type not in (syms.testlist_gexp,)


def _stored_by_method(power: pytree.Node, index: int, calls: Calls) -> Optional[Flow]:
    """``lst.append(<value>)``: the value is stored in ``lst``."""
    method = power.children[index - 1] if index > 1 else None
    if method is None or attribute_name(method) not in STORING_METHODS:
        return None
    receiver = "".join(str(part).strip() for part in power.children[:index - 1])
    head = power.children[0]
    store = head if index == 2 and head.type == token.NAME else None
    return Flow("stored", f"stored in a container ({receiver}.{attribute_name(method)})",
                into="container", store=store, calls=calls)


def _flow_at(node: pytree.Base, parent: Optional[pytree.Node], contained: bool, calls: Calls) -> Flow:
    """Where a value goes from the statement (or clause) that holds it."""
    if parent is None:
        return Flow("dropped", calls=calls)
    kind = parent.type
    if kind == syms.annassign and parent.children[-1] is node:
        return _bound_to([parent.parent.children[0]], contained, calls)
    if kind == syms.expr_stmt and parent.children[-1] is node:
        return _bound_to(parent.children[:-1:2], contained, calls)  # also a = b = v, x += v
    if kind == syms.namedexpr_test and parent.children[-1] is node:
        return _bound_to([parent.children[0]], contained, calls)
    if kind == syms.for_stmt and child_index(node) == 3:
        return _bound_to([parent.children[1]], contained, calls)
    if kind == syms.with_item and parent.children[0] is node:
        return _bound_to([parent.children[2]], contained, calls)
    if kind == syms.return_stmt:
        return Flow("escape", "returned", calls=calls)
    if kind in (syms.yield_expr, syms.yield_arg):
        return Flow("escape", "yielded", calls=calls)
    if kind in _DEF_LINE:
        return Flow("escape", "used in a nested function or a def line", calls=calls)
    if kind in _NO_VALUE or kind in (syms.expr_stmt, syms.annassign):
        return Flow("dropped", calls=calls)
    return Flow("escape", "used as a value", calls=calls)


def _unpacked(items: pytree.Node, node: pytree.Base) -> Optional[pytree.Base]:
    """``a, b = x, y``: the target that the item ``node`` of the value ``x, y`` goes to."""
    statement = items.parent
    if items.type not in (syms.testlist_star_expr, syms.testlist, syms.exprlist) \
            or statement.type != syms.expr_stmt or len(statement.children) != 3 \
            or statement.children[2] is not items or statement.children[1].type != token.EQUAL:
        return None
    target = statement.children[0]
    if target.type != items.type:
        return None
    values, targets = items.children[::2], target.children[::2]
    if len(values) != len(targets) or len(items.children) != len(target.children):
        return None
    return next((target for value, target in zip(values, targets) if value is node), None)


def _bound_to(targets: list[pytree.Base], contained: bool, calls: Calls) -> Flow:
    """The value is assigned to ``targets``: kept by their names, or stored on an attribute or
    in a subscript when one of them is ``x.a`` or ``x[k]``."""
    names: list[pytree.Leaf] = []
    for target in targets:
        for part in _target_parts(target):
            if part.type == token.NAME:
                names.append(part)
                continue
            head = part.children[0] if part.type == syms.power else None
            store = head if head is not None and head.type == token.NAME else None
            into = "attribute" if is_attribute_trailer(part.children[-1]) else "subscript"
            how = "on an attribute" if into == "attribute" else "in a subscript"
            return Flow("stored", f"stored {how} ({str(part).strip()})", into=into, store=store,
                        calls=calls)
    return Flow("kept", targets=tuple(names), contained=contained, calls=calls)


def _target_parts(target: pytree.Base) -> Iterator[pytree.Base]:
    """The single targets of an assignment target: ``a``, ``x.y``, ``x[k]`` in ``a, (x.y, *x[k])``."""
    if target.type in _TARGET_PARTS or target.type in (syms.testlist, syms.testlist_gexp):
        for child in target.children:
            if child.type not in (token.COMMA, token.LPAR, token.RPAR, token.LSQB, token.RSQB,
                                  token.STAR):
                yield from _target_parts(child)
    else:
        yield target


def bound_names(scope: pytree.Node) -> set[str]:
    """Names a function, class or module binds itself (assigned, a loop/with/except target,
    imported, a parameter, a nested def/class, deleted), less those it declares global or
    nonlocal: any other name it reads comes from an enclosing scope. Statements only (no
    walk of expressions): ``:=`` targets are not seen."""
    bound, declared = set(), set()
    for node in scope_statements(scope):
        for leaf in _binding_leaves(node, scope):
            kind = binding(leaf)
            if kind == "declared":
                declared.add(leaf.value)
            elif kind:
                bound.add(leaf.value)
    return bound - declared


def assigned_values(node: pytree.Base, name: str) -> Optional[list[pytree.Base]]:
    """The values the variable ``name``, as read at ``node``, is given: the right-hand side of
    every ``name = value`` of the scope it comes from (the enclosing function when that binds
    it, else the module), in source order. None when that scope binds it in another way too
    (a parameter, a loop or ``with`` target, a tuple target, ``+=``, an import...), declares
    it global, or not at all: what it holds is not known from here."""
    found = assigned_elements(node, name)
    if found is None or any(position is not None for _, position in found):
        return None
    return [value for value, _ in found]


def assigned_elements(node: pytree.Base, name: str) -> Optional[list[tuple[pytree.Base, Optional[int]]]]:
    """:func:`assigned_values`, where an unpacking of names (``model, pred = build()``,
    ``(model, pred) = ...``) binds ``name`` too: ``(value, None)`` for ``name = value``,
    ``(value, i)`` when ``name`` is the target at position ``i`` of the unpacking."""
    scope = enclosing_scope(node)
    while scope.type != syms.file_input and name not in bound_names(scope):
        scope = enclosing_scope(scope)
    values: list[tuple[pytree.Base, Optional[int]]] = []
    for statement in scope_statements(scope):
        for leaf in _binding_leaves(statement, scope):
            if leaf.value != name or not binding(leaf):
                continue
            if statement.type != syms.expr_stmt or len(statement.children) != 3 \
                    or statement.children[1].type != token.EQUAL:
                return None
            target = statement.children[0]
            position = None if target is leaf else _unpacked_position(target, leaf)
            if target is not leaf and position is None:
                return None
            values.append((statement.children[2], position))
    return values or None


def _unpacked_position(target: pytree.Base, leaf: pytree.Leaf) -> Optional[int]:
    """The position of ``leaf`` among the names of the flat unpacking ``target`` (``a, b``,
    ``(a, b)``, ``[a, b]``), or None for any other target (starred, nested, attributes)."""
    if target.type == syms.atom and len(target.children) == 3:
        target = target.children[1]
    if target.type not in (syms.testlist_star_expr, syms.testlist_gexp, syms.exprlist, syms.listmaker):
        return None
    names = [child for child in target.children if child.type != token.COMMA]
    if not all(child.type == token.NAME for child in names) or leaf not in names:
        return None
    return names.index(leaf)


def _binding_leaves(node: pytree.Base, scope: pytree.Node) -> Iterator[pytree.Leaf]:
    """The NAME leaves of statement ``node`` that may bind a name of ``scope``."""
    kind = node.type
    if kind == syms.expr_stmt:
        parts = node.children[:-1]
    elif kind == syms.for_stmt:
        parts = node.children[1:2]
    elif kind == syms.with_stmt:
        parts = [item.children[2] for item in node.children if item.type == syms.with_item]
    elif kind == syms.try_stmt:
        parts = [clause for clause in node.children if clause.type == syms.except_clause]
    elif kind in (syms.import_name, syms.import_from, syms.global_stmt, syms.del_stmt):
        parts = [node]
    elif kind == syms.funcdef:
        parts = [node.children[2]] if node is scope else [node.children[1]]  # parameters / name
    elif kind == syms.classdef:
        parts = [] if node is scope else [node.children[1]]
    else:
        return
    for part in parts:
        for leaf in part.leaves():
            if leaf.type == token.NAME and not (
                part.type == syms.parameters and _is_default_or_annotation(leaf)
            ):
                yield leaf


def _is_default_or_annotation(leaf: pytree.Leaf) -> bool:
    """``b`` or ``T`` in ``def f(a=b, c: T)``: read in the enclosing scope, not parameters."""
    node = leaf
    while node.parent.type not in (syms.parameters, syms.typedargslist, syms.tname):
        node = node.parent
    previous = node.prev_sibling
    return previous is not None and previous.type in (token.EQUAL, token.COLON)


def binding(leaf: pytree.Leaf) -> str:
    """How the NAME ``leaf`` is bound (``assigned``: a target of an assignment, a loop, a
    comprehension, ``with``/``except ... as``; ``deleted``, ``declared``, ``imported``,
    ``parameter``, ``defined``), or '' when it does not bind its name (a ``:=`` target is not
    seen)."""
    node = leaf
    while node.parent is not None and node.parent.type in _TARGET_PARTS:
        if node.parent.type == syms.atom and node.parent.children[0].type not in (token.LPAR, token.LSQB):
            break
        node = node.parent
    parent = node.parent
    if parent is None:
        return ""
    following = node.next_sibling
    if parent.type == syms.expr_stmt and following is not None and (
        following.type == token.EQUAL or str(following).strip() in _AUGMENTED
        or following.type == syms.annassign
    ):
        return "assigned"
    if parent.type in (syms.for_stmt, syms.comp_for) and child_index(node) == 1:
        return "assigned"
    if parent.type == syms.with_item and child_index(node) == 2:
        return "assigned"
    if parent.type == syms.del_stmt:
        return "deleted"
    if parent.type == syms.global_stmt:  # also ``nonlocal``
        return "declared"
    if parent.type in _IMPORT_PARTS:
        return "imported" if _is_imported_name(node, parent) else ""
    if parent.type in (syms.parameters, syms.typedargslist, syms.varargslist, syms.tname) or (
        parent.type == syms.lambdef and child_index(node) == 1
    ):
        return "parameter"
    if parent.type in (syms.funcdef, syms.classdef):
        return "defined"
    if parent.type == syms.except_clause and node.prev_sibling is not None \
            and node.prev_sibling.type == token.NAME and node.prev_sibling.value == "as":
        return "assigned"
    return ""


_IMPORT_PARTS = (syms.import_as_name, syms.dotted_as_name, syms.import_as_names,
                 syms.dotted_as_names, syms.import_from, syms.import_name, syms.dotted_name)


def _is_imported_name(leaf: pytree.Base, parent: pytree.Node) -> bool:
    """Does the import ``leaf`` sits in bind it (:func:`~.names.import_binding_leaves`)? ``y``
    of ``from X import y``, ``Y`` of ``X as Y`` and ``a`` of ``import a.b`` do; ``X`` and ``b``
    do not; nor does a decorator's dotted name (``@flags.validator(...)``: no import)."""
    statement: Optional[pytree.Base] = parent
    while statement is not None and statement.type not in (syms.import_name, syms.import_from):
        statement = statement.parent
    return statement is not None and any(bound is leaf for bound, _ in import_binding_leaves(statement))


def is_terminal(statement: pytree.Base) -> bool:
    """True for a ``return``/``raise``/``break``/``continue`` line: nothing after it runs.

    A bare ``return`` or ``raise`` is a NAME leaf, like ``break``: fissix collapses a node of
    one child into that child.
    """
    if statement.type != syms.simple_stmt:
        return False
    terminals = (syms.return_stmt, syms.raise_stmt, syms.break_stmt, syms.continue_stmt)
    return any(child.type in terminals or (child.type == token.NAME and child.value in
               ("return", "raise", "break", "continue")) for child in statement.children)


def function_returns(node: pytree.Base) -> list[pytree.Base]:
    """The ``return`` statements of ``node`` (a def: of its body), not those of the functions
    and classes nested in it; a bare ``return`` is a NAME leaf."""
    return [statement for statement in scope_statements(node) if is_return(statement)]


def is_return(node: pytree.Base) -> bool:
    """A ``return`` statement, with or without a value."""
    return node.type == syms.return_stmt or (node.type == token.NAME and str(node.value) == "return")


def called_function(call: pytree.Base) -> Optional[pytree.Node]:
    """The file's own function that ``call`` calls: for ``f(...)`` (a bare name and one call),
    the module-level, undecorated ``def f`` when nothing else binds ``f`` in the module nor in
    a scope around the call; None otherwise (a method, an import, a rebound name)."""
    if call.type != syms.power or len(call.children) != 2 or call.children[0].type != token.NAME \
            or call.children[1].children[0].type != token.LPAR:
        return None
    name = call.children[0].value
    scope = enclosing_scope(call)
    while scope.type != syms.file_input:
        if name in bound_names(scope):
            return None
        scope = enclosing_scope(scope)
    bindings = [leaf for statement in scope_statements(scope)
                for leaf in _binding_leaves(statement, scope) if leaf.value == name and binding(leaf)]
    if len(bindings) != 1 or bindings[0].parent.type != syms.funcdef:
        return None
    function = bindings[0].parent
    return function if function.parent.type == syms.file_input else None


def returned_values(function: pytree.Node) -> Optional[list[pytree.Base]]:
    """The value of each ``return`` of ``function``, in source order; None when one returns
    nothing (a bare ``return``) or it has no ``return``."""
    returns = function_returns(function)
    if not returns or any(node.type != syms.return_stmt for node in returns):
        return None
    return [node.children[1] for node in returns]
