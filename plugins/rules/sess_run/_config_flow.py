"""Which config objects a name holds when a statement runs, and which NPU lines each one got.

A function may build ``config = tf.ConfigProto()`` in one branch and give it the NpuOptimizer
lines, and build another one in the ``else:`` branch without them; or configure one object and
then bind the name to a new one. "The config has the lines" must hold for the object that
reaches the session on every path: the lines written before the last (re)binding, or in a
branch that path does not take, do not count.

:func:`config_flow` walks the statements of one scope in execution order (both ways of an
``if``, loops zero or more times, ``try`` handlers from any point of the ``try``) and keeps,
for each point, the set of possible (binding, settings done since) pairs: a may-analysis, so
"on every path" is "in every pair". ``custom_optimizers.add()`` is the one NPU line that must
not run twice on one object (each run adds an optimizer); assignments may. A fallback
(``config = config or tf.ConfigProto()``) may keep the object the name held (a caller's, for
a parameter): its pairs go on, next to the new object's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, Callable, Optional

from npu_codemod.api import Base, Leaf, Node, is_none, symbols, tokens
from npu_codemod.api._toolkit import uses

from ._session_config import CUSTOM_OP, NPU_PIECES, ConfigTarget, code, setting_key

#: Binding indexes that are no statement: the value a parameter brings, and no value at all.
PARAMETER, UNBOUND = -1, -2
State = frozenset  # of (binding index, frozenset of settings done on that object since)
_TERMINAL = {symbols.return_stmt: "return", symbols.raise_stmt: "raise",
             symbols.break_stmt: "break", symbols.continue_stmt: "continue"}
_BINDING_STATEMENTS = (symbols.for_stmt, symbols.with_stmt, symbols.except_clause, symbols.funcdef,
                       symbols.classdef)


@dataclass
class Flow:
    """What :func:`config_flow` found for one name at one statement (the anchor)."""

    bindings: list[Base]  # index -> the small statement (or loop, with...) that binds
    reaching: set[tuple[int, frozenset[str]]] = field(default_factory=set)  # at the anchor
    seen: set[tuple[int, frozenset[str]]] = field(default_factory=set)  # at any point
    #: ``custom_optimizers.add()`` statements of an NpuOptimizer for an object that may have
    #: one already (a second entry).
    doubled: list[Base] = field(default_factory=list)

    def lacking(self, piece: str) -> set[int]:
        """Bindings whose object reaches the anchor without ``piece`` on some path."""
        return {binding for binding, done in self.reaching if piece not in done}

    def ever_set(self, binding: int, piece: str) -> bool:
        """Does any path from ``binding`` (anywhere in the scope) set ``piece`` on its object?"""
        return any(index == binding and piece in done for index, done in self.seen)

    def common(self, binding: int) -> frozenset[str]:
        """The settings the object of ``binding`` has on every path to the anchor."""
        sets = [done for index, done in self.reaching if index == binding]
        return frozenset.intersection(*sets) if sets else frozenset()


def target_flow(target: ConfigTarget, initial: Callable[[Base], frozenset[str]],
                pieces: AbstractSet[str] = NPU_PIECES) -> Optional[Flow]:
    """:func:`config_flow` for the object of ``target`` at its anchor; None when the target is
    no local name (an attribute, a global: their settings are looked for in the whole class or
    module, ``ConfigTarget.settings``) or no path binds it before the anchor."""
    if not target.expression.isidentifier() or len(target.regions) != 1:
        return None
    flow = config_flow(target.regions[0][0], target.anchor, target.expression, initial, pieces)
    return flow if flow.reaching else None


def config_flow(scope: Node, anchor: Base, name: str,
                initial: Callable[[Base], frozenset[str]],
                pieces: AbstractSet[str] = NPU_PIECES) -> Flow:
    """The objects the local ``name`` of ``scope`` may hold when ``anchor`` (a statement of a
    block of ``scope``) runs, with the settings among ``pieces`` (``ConfigTarget.settings``
    keys: :data:`NPU_PIECES`, ``allow_soft_placement``) each has there.

    ``initial(value)`` gives the settings an object bound by ``name = value`` has already (a
    function that returns a configured config, a ``ConfigProto(...)`` keyword). Paths on
    which ``name`` is unbound at the anchor are left out (they fail there anyway).
    """
    walker = _Walker(scope, anchor, name, initial, pieces)
    entry = PARAMETER if walker.is_parameter else UNBOUND
    walker.block(scope.children[-1] if scope.type != symbols.file_input else scope,
                 State({(entry, frozenset())}))
    flow = walker.flow
    flow.reaching = {pair for pair in flow.reaching if pair[0] != UNBOUND}
    return flow


class _Walker:
    def __init__(self, scope: Node, anchor: Base, name: str,
                 initial: Callable[[Base], frozenset[str]], pieces: AbstractSet[str]) -> None:
        self.anchor, self.name, self.initial, self.pieces = anchor, name, initial, pieces
        self.flow = Flow([])
        self.binds: dict[int, Base] = {}  # id(statement) -> statement, for each binding
        self.indexes: dict[int, int] = {}  # id(statement) -> its index in flow.bindings
        self.is_parameter = False
        for use in uses(scope, name):
            if use.kind == "bind" and use.detail != "declared":
                statement = _binding_statement(use.leaf, scope)
                if statement is scope:
                    self.is_parameter = True
                elif statement is not None:
                    self.binds[id(statement)] = statement
        self.custom_ops: set[str] = set()
        self.adds: dict[str, Base] = {}  # custom_op name -> its ``.add()`` statement
        self.loops: list[set] = []  # per enclosing loop: states that leave it by break/continue
        self.tries: list[set] = []  # per enclosing try: states at each point of its body

    def block(self, node: Base, state: State) -> State:
        children = node.children if node.type in (symbols.suite, symbols.file_input) else [node]
        for child in children:
            state = self.statement(child, state)
        return state

    def statement(self, node: Base, state: State) -> State:
        if node is self.anchor:
            self.flow.reaching |= state
        if node.type == symbols.simple_stmt:
            for small in node.children:
                if small.type not in (tokens.SEMI, tokens.NEWLINE):
                    state = self.small(small, state)
        elif node.type in (symbols.decorated, symbols.async_stmt, symbols.async_funcdef):
            state = self.statement(node.children[-1], state)
        elif node.type in (symbols.while_stmt, symbols.for_stmt):
            state = self.loop(node, state)
        elif node.type == symbols.try_stmt:
            state = self.attempt(node, state)
        elif node.type in (symbols.if_stmt, symbols.with_stmt):
            state = self.branches(self.bound(node, state), node)
        else:
            state = self.bound(node, state)  # a nested def/class named like the config
        self.record(state)
        return state

    def small(self, node: Base, state: State) -> State:
        kind = _TERMINAL.get(node.type) or (node.value if node.type == tokens.NAME and
                                           node.value in _TERMINAL.values() else None)
        if kind in ("break", "continue") and self.loops:
            self.loops[-1].update(state)
        if kind:
            return State()
        if id(node) in self.binds:
            state = self.bind(node, state)
        elif _copied_into(node, self.name):
            kept = frozenset({CUSTOM_OP}) if _copied_into(node, self.name).startswith("Merge") else frozenset()
            state = State((index, done & kept) for index, done in state)
        else:
            known = set(self.custom_ops)
            piece = setting_key(node, self.name, self.custom_ops)
            for added in self.custom_ops - known:
                self.adds[added] = node
            if piece == CUSTOM_OP and any(piece in done for index, done in state if index != UNBOUND):
                self.twice(self.adds.get(code(node.children[0])[: -len(".name")], node))
            if piece in self.pieces:
                state = State((index, done | {piece}) for index, done in state)
        self.record(state)
        return state

    def twice(self, node: Base) -> None:
        if not any(node is known for known in self.flow.doubled):
            self.flow.doubled.append(node)

    def bind(self, node: Base, state: State) -> State:
        if not state:
            return state
        if node.type == symbols.del_stmt:
            return State({(UNBOUND, frozenset())})
        index = self.indexes.get(id(node))
        if index is None:
            index = self.indexes[id(node)] = len(self.flow.bindings)
            self.flow.bindings.append(node)
        children = node.children
        direct = node.type == symbols.expr_stmt and children[1].type == tokens.EQUAL and any(
            child.type == tokens.NAME and child.value == self.name for child in children[:-1:2])
        others = fallback_values(children[-1], self.name) if direct else None
        if others is not None:  # ``name = name or X``: the object it held, or X's
            return State(state | {(index, self.initial(other)) for other in others})
        return State({(index, self.initial(children[-1]) if direct else frozenset())})

    def bound(self, node: Base, state: State) -> State:
        return self.bind(node, state) if id(node) in self.binds else state

    def branches(self, state: State, node: Node) -> State:
        """``if``/``elif``/``else`` (one branch runs, or none without ``else``), ``with``."""
        bodies = _bodies(node)
        if node.type == symbols.with_stmt:
            return self.block(bodies[0], state)
        has_else = any(child.type == tokens.NAME and child.value == "else" for child in node.children)
        result = set() if has_else else set(state)
        for body in bodies:
            result |= self.block(body, state)
        return State(result)

    def loop(self, node: Node, state: State) -> State:
        """The body zero or more times (to a fixed point), then ``else`` when not broken out."""
        body, *rest = _bodies(node)
        self.loops.append(set())
        head = state
        while True:
            out = self.block(body, self.bound(node, head)) | State(self.loops[-1])
            if out <= head:
                break
            head = head | out
        left = self.loops.pop()
        return (self.block(rest[0], head) if rest else head) | State(left)

    def attempt(self, node: Node, state: State) -> State:
        """``try``: handlers start from any point of the body; ``finally`` after all."""
        clauses = _clauses(node)
        self.tries.append(set(state))
        out = self.block(clauses[0][1], state)
        inside = State(self.tries.pop())
        if self.tries:
            self.tries[-1].update(inside)
        handled: State = State()
        for header, body in clauses[1:]:
            if header.type == symbols.except_clause or header.value == "except":
                handled |= self.block(body, self.bound(header, inside))
            elif header.value == "else":
                out = self.block(body, out)
            elif header.value == "finally":
                out = self.block(body, out | handled)
                handled = State()
        return out | handled

    def record(self, state: State) -> None:
        self.flow.seen.update(state)
        if self.tries:
            self.tries[-1].update(state)


#: Calls that replace a message's fields (``CopyFrom``, ``ParseFromString``: none of the
#: settings made before stays) or merge others into them (a merge keeps the custom
#: optimizers it appends to, and may overwrite any other setting).
_COPIES = ("CopyFrom", "ParseFromString", "MergeFrom", "MergeFromString")


def _copied_into(node: Base, name: str) -> str:
    """The method of ``name.CopyFrom(...)``-like statement ``node`` (:data:`_COPIES`), else ""."""
    children = node.children if node.type == symbols.power else []
    if len(children) == 3 and _is_name(children[0], name) and children[1].type == symbols.trailer \
            and children[1].children[0].type == tokens.DOT and children[1].children[1].value in _COPIES \
            and children[2].type == symbols.trailer and children[2].children[0].type == tokens.LPAR:
        return str(children[1].children[1].value)
    return ""


def _bodies(node: Node) -> list[Base]:
    return [body for _, body in _clauses(node)]


def _clauses(node: Node) -> list[tuple[Base, Base]]:
    """(what precedes the ``:``, the block after it) of each clause of a compound statement."""
    children = node.children
    return [(children[index - 1], children[index + 1]) for index, child in enumerate(children)
            if child.type == tokens.COLON]


def _binding_statement(leaf: Leaf, scope: Node) -> Optional[Base]:
    """The small statement, loop, ``with``, ``except`` clause or nested def that binds with
    ``leaf``; ``scope`` itself for a parameter."""
    node = leaf.parent
    while node is not None and node is not scope:
        if node.type == symbols.comp_for:
            return None  # a comprehension's own variable
        if node.type in _BINDING_STATEMENTS or (node.parent is not None
                                               and node.parent.type == symbols.simple_stmt):
            return node
        node = node.parent
    return node


def made_when_none(function: Node, name: str, anchor: Base) -> bool:
    """Does a statement of ``function`` that surely runs before ``anchor`` give the parameter
    ``name`` an object when it is None: ``if name is None: name = X`` (or ``if not name:``),
    ``name = name or X``, ``name = name if name is not None else X``? Such a statement counts
    in any block around ``anchor`` (before it), and inside a ``with`` or a ``try`` before it
    (:func:`_fills_none_within`)."""
    node = anchor
    while node is not function and node.parent is not None:
        block = node.parent
        if block.type in (symbols.suite, symbols.file_input):
            for child in block.children:
                if child is node:
                    break
                if _fills_none_within(child, name):
                    return True
        node = block
    return False


def _fills_none_within(statement: Base, name: str) -> bool:
    """Does ``statement`` fill ``name`` when None, itself or in a block that has run when it is
    done: a ``with`` body, a ``try`` body whose handlers all leave (``raise``, ``return``: a
    handled error may have stopped the body before the filling), a ``finally`` block? (Not an
    ``if`` branch or a loop body: they may not run.)"""
    if _fills_none(statement, name):
        return True
    if statement.type == symbols.with_stmt:
        return _block_fills_none(statement.children[-1], name)
    if statement.type != symbols.try_stmt:
        return False
    clauses = _clauses(statement)
    handlers = [body for header, body in clauses[1:]
                if header.type == symbols.except_clause or header.value == "except"]
    if all(_leaves(body) for body in handlers) and _block_fills_none(clauses[0][1], name):
        return True
    return any(header.type == tokens.NAME and header.value == "finally" and _block_fills_none(body, name)
               for header, body in clauses[1:])


def _block_fills_none(block: Base, name: str) -> bool:
    lines = block.children if block.type == symbols.suite else [block]
    return any(_fills_none_within(line, name) for line in lines)


def _leaves(block: Base) -> bool:
    """Does ``block`` end in ``raise`` or ``return`` (it never falls through)?"""
    lines = [line for line in (block.children if block.type == symbols.suite else [block])
             if line.type not in (tokens.NEWLINE, tokens.INDENT, tokens.DEDENT)]
    last = lines[-1] if lines else block
    small = last.children[-2] if last.type == symbols.simple_stmt and len(last.children) > 1 else last
    return small.type in (symbols.raise_stmt, symbols.return_stmt) or (
        small.type == tokens.NAME and small.value in ("raise", "return"))


def _fills_none(statement: Base, name: str) -> bool:
    """Is ``statement`` one that binds ``name`` to an object when it is None?"""
    if statement.type == symbols.if_stmt:
        children = statement.children
        return len(children) == 4 and _tests_none(children[1], name) and _binds_object(children[3], name)
    if statement.type != symbols.simple_stmt:
        return False
    for small in statement.children:
        value = _assigned_value(small, name)
        others = fallback_values(value, name) if value is not None else None
        if others and not any(is_none(other) for other in others):
            return True
    return False


def _tests_none(test: Base, name: str) -> bool:
    """Is ``test`` ``name is None`` or ``not name``?"""
    children = test.children if isinstance(test, Node) else []
    if test.type == symbols.comparison and len(children) == 3:
        return _is_name(children[0], name) and children[1].type == tokens.NAME \
            and children[1].value == "is" and is_none(children[2])
    return test.type == symbols.not_test and _is_name(children[1], name)


def _binds_object(block: Base, name: str) -> bool:
    """Does a statement of ``block`` (an ``if``'s body) bind ``name`` to something other than None?"""
    lines = block.children if block.type == symbols.suite else [block]
    for line in lines:
        if line.type != symbols.simple_stmt:
            continue
        for small in line.children:
            value = _assigned_value(small, name)
            if value is not None and not is_none(value):
                return True
    return False


def _assigned_value(small: Base, name: str) -> Optional[Base]:
    """The value of ``name = value`` when ``small`` is that assignment; else None."""
    children = small.children if small.type == symbols.expr_stmt else []
    if len(children) == 3 and children[1].type == tokens.EQUAL and _is_name(children[0], name):
        return children[2]
    return None


def fallback_values(value: Base, name: str) -> Optional[list[Base]]:
    """The values ``name = value`` may bind besides the object ``name`` holds already, when
    ``value`` may keep that object (``name or X``, ``name if name is not None else X``, ``X if
    name is None else name``); None when ``value`` does not read ``name`` so."""
    if value.type == symbols.or_test:
        operands = value.children[::2]
    elif value.type == symbols.test and len(value.children) == 5:
        operands = [value.children[0], value.children[4]]
    else:
        return None
    others = [operand for operand in operands if not _is_name(operand, name)]
    return others if len(others) < len(operands) else None


def _is_name(node: Base, name: str) -> bool:
    return node.type == tokens.NAME and node.value == name
