"""NPU010 session-close: a bare session must be closed, that is where the NPU executor is freed.

``<name>.close()`` goes after the last statement of the block that uses the session, and before
each ``return`` that leaves the function between the session's creation and that point (a
``return`` on the line of its ``if``/``else``/``for``... first gets a line of its own). A return
before which closing would break something is reported instead: its value uses the session
(``return sess.run(y)``) or may run it as the default session, a ``finally`` clause after it
uses the session, or the session is made inside an ``if``/``try`` above it and may not exist.
The other clauses of that ``if``/``try`` (``else``, ``except``) are left alone.

No close goes before a ``raise``: it is a failure path, and an ``except`` of the same function
may catch it and go on using the session (``except OutOfRangeError: sess.run(final)``);
closing first would change what that handler does. ``break``/``continue`` do not leave the
function. ``with closing(tf.Session()) as sess:`` and ``with closing(sess):`` (``closing``
from contextlib) close the session, like ``with``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.blocks import open_block
from npu_codemod.codemods.rule import Capture, FileContext, Rule, position
from npu_codemod.codemods.scopes import Use, insert_after, is_terminal, uses
from npu_codemod.codemods.statements import (
    BLOCKS, block_child, child_index, enclosing_scope, insert_before,
)
from npu_codemod.codemods.tfnames import TfNames, is_call_trailer, prefix_name
from npu_codemod.codemods.walk import node_pre_order, scope_statements
from npu_codemod.plugins.hookspecs import hookimpl

SESSIONS = frozenset({
    "tensorflow.Session",
    "tensorflow.InteractiveSession",
    "tensorflow.train.MonitoredSession",
    "tensorflow.train.MonitoredTrainingSession",
    "tensorflow.train.SingularMonitoredSession",
})
_NAMES = " | ".join(f"'{name.rpartition('.')[2]}'" for name in sorted(SESSIONS))
#: Blocks a session's uses may leave: the block runs once, so the session is still the one made.
_CLIMBABLE = (syms.if_stmt, syms.with_stmt, syms.try_stmt)
#: Session methods whose result keeps using the session after the call returns.
_KEEPS_SESSION = frozenset({"make_callable", "partial_run_setup"})
_BOUND_METHODS = frozenset({"run", "partial_run", "make_callable", "as_default", "close"})

CLOSE = "call close() on this session when training ends"
RETURN = "close the session before this return"
RELEASES = "(Session.close() releases the NPU graph executor)"


class SessionClose(Rule):
    id = "NPU010"
    name = "session-close"
    description = ("Insert sess.close() after the last use of a session not created in 'with' "
                   "and before each earlier return.")
    guide_section = "执行训练: sess.close()"
    guide_section_en = "Running the training: sess.close()"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("A session bound to a name, not made in `with`, never closed and not escaping "
                "gets `<name>.close()` after the last statement of its block that uses it or an "
                "object built with it (`actor = Actor(sess)`), after the `join()` of the threads "
                "that use it, and before each earlier `return` of the function: "
                "`Session.close()` releases the NPU graph executor, as leaving `with` does.")
    reports = ("Sessions that escape (stored on `self`, returned to a caller that does not close "
               "them, handed to threads joined elsewhere, used inline as in "
               "`K.set_session(tf.Session())`), and returns before which a close would break "
               "something; the message says where the close belongs when the tool can tell.")
    example = """
        import tensorflow as tf


        def train(train_op, init, num_steps):
            sess = tf.Session()
            sess.run(init)
            for step in range(num_steps):
                sess.run(train_op)
            saver.save(sess, "model.ckpt")


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.sess = tf.Session()
    """
    tokens = ("Session",)
    pattern = f"""(
        trailer< '.' name=({_NAMES}) >
      | power< name=({_NAMES}) trailer< '(' [any] ')' > >
    )"""

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if node.type == syms.power:
            power, end = node, 1
        else:
            power, end = node.parent, child_index(node) + 1
        call = power.children[end] if end < len(power.children) else None
        qualified = ctx.tf.qualify(prefix_name(power, end))
        if not is_call_trailer(call) or qualified not in SESSIONS:
            return
        if len(power.children) > end + 1:
            ctx.report(power, "unmigrated", f"{CLOSE} (the session object is used inline and "
                       "never bound to a name; bind it and close it, or use 'with')")
            return
        outer = _outside_parentheses(power)
        if _is_context_manager(outer) or _closing_argument(outer, ctx):
            return  # ``with tf.Session() as sess:``, ``with closing(tf.Session()) as sess:`` close it
        target = _assigned_name(power)
        if target is None:
            ctx.report(power, "unmigrated", f"{CLOSE} ({_where(power)})")
            return
        self._bare_session(power, target, qualified == "tensorflow.InteractiveSession", ctx)

    def _bare_session(
        self, power: pytree.Node, target: pytree.Leaf, interactive: bool, ctx: FileContext
    ) -> None:
        name = target.value
        statement = target.parent.parent
        scope = enclosing_scope(statement)
        found = uses(scope, name)
        if any(_closes(use, ctx) for use in found):
            ctx.report(power, "migrated", f"{name} is closed (the NPU graph executor is released)")
            return
        problem = _problem(found, target, scope)
        if problem is None and statement.parent.type not in BLOCKS:
            problem = "it is created in a one-line block"
        if problem:
            ctx.report(power, "unmigrated", f"{CLOSE} ({name} {problem})")
            return
        default = interactive or _registered_as_default(found)
        span, why = _span(statement, [use.leaf for use in found], default)
        if span is None:
            ctx.report(power, "unmigrated", f"{CLOSE} ({name} {why})")
            return
        exits = _exits(span, name, found, default) if scope.type == syms.funcdef else []
        _close(power, name, span, exits, ctx)


def _close(power: pytree.Node, name: str, span: _Span, exits: list[_Exit], ctx: FileContext) -> None:
    """Close the session at the end of ``span`` and before each return it can be closed before;
    report the returns it cannot."""
    closable = [node.parent for node, problem in exits if problem is None]
    after = not is_terminal(span.last)  # else it is a default session's final return
    if not after and not any(line is span.last for line in closable):
        ctx.report(power, "unmigrated", f"{CLOSE} ({name} {_DEFAULT_TO_THE_END})")
        return
    ctx.defer(lambda: _insert_closes(f"{name}.close()", span.last if after else None,
                                     closable, ctx.newline))
    where = ["after the last statement using the session"] if after else []
    if closable:
        plural = "s" if len(closable) > 1 else ""
        lines = ", ".join(str(position(line)[0]) for line in closable)
        where.append(f"before the return{plural} on line{plural} {lines}")
    ctx.report(power, "migrated", f"inserted '{name}.close()' {' and '.join(where)} {RELEASES}")
    for node, problem in exits:
        if problem is not None:
            ctx.report(node, "unmigrated", f"{RETURN} ({problem})")


def _outside_parentheses(node: pytree.Base) -> pytree.Base:
    while node.parent is not None and node.parent.type == syms.atom and \
            node.parent.children[0].type == token.LPAR and len(node.parent.children) == 3:
        node = node.parent
    return node


def _assigned_name(power: pytree.Node) -> Optional[pytree.Leaf]:
    """``name`` of ``name = <power>`` (a plain, single assignment), else None."""
    statement = power.parent
    if statement is None or statement.type != syms.expr_stmt or len(statement.children) != 3:
        return None
    target, operator, value = statement.children
    if value is not power or operator.type != token.EQUAL or target.type != token.NAME:
        return None
    if statement.parent.type != syms.simple_stmt:
        return None
    return target


def _where(power: pytree.Node) -> str:
    parent = _outside_parentheses(power).parent
    if parent.type == syms.expr_stmt and parent.children[-1] is _outside_parentheses(power):
        return "it is stored in an attribute, subscript or several names, so the tool cannot see when training ends"
    if parent.type == syms.return_stmt:
        return "it is returned to the caller, which must close it"
    if parent.type in (syms.argument, syms.arglist, syms.trailer):
        return "it is created inline as an argument; bind it to a name first"
    return "the session is not bound to a local name"


def _is_context_manager(node: pytree.Base) -> bool:
    """True for the expression of ``with <node>:`` or ``with <node> as x:``."""
    owner = node.parent
    return owner.type == syms.with_stmt or (owner.type == syms.with_item and owner.children[0] is node)


def _closing_argument(node: pytree.Base, ctx: FileContext) -> bool:
    """True for ``with closing(<node>):``, ``closing`` from contextlib in any spelling."""
    trailer = node.parent
    if not is_call_trailer(trailer) or len(trailer.children) != 3:
        return False
    power = trailer.parent
    if power.children[-1] is not trailer or not _is_context_manager(_outside_parentheses(power)):
        return False
    contextlib = ctx.memo.get("npu010.contextlib")
    if contextlib is None:  # few files get here: only for a session in a with's call
        contextlib = ctx.memo["npu010.contextlib"] = TfNames(ctx.tree, root="contextlib")
    return contextlib.resolve(prefix_name(power, len(power.children) - 1)) == "contextlib.closing"


def _closes(use: Use, ctx: FileContext) -> bool:
    """``name.close()``, ``with name:`` or ``with closing(name):`` (``with name.as_default():``
    does not close)."""
    if use.kind == "with":
        return True
    if use.kind == "argument":
        return _closing_argument(use.leaf, ctx)
    following = use.leaf.next_sibling
    return (
        use.kind in ("attribute", "escape") and following is not None
        and following.type == syms.trailer and following.children[0].type == token.DOT
        and following.children[1].value == "close" and is_call_trailer(following.next_sibling)
    )


def _problem(found: list[Use], target: pytree.Leaf, scope: pytree.Node) -> Optional[str]:
    """Why closing the session after its last use is not safe, or None."""
    if scope.type == syms.classdef:
        return "is a class attribute"
    for use in found:
        if use.leaf is target:
            continue
        if use.kind == "bind":
            return f"is {use.detail} again in the same scope, so one close() cannot be placed"
        if use.kind == "escape":
            return f"is {use.detail}"
        if use.kind == "attribute":
            escape = _attribute_escape(use.leaf)
            if escape:
                return escape
    return None


def _attribute_escape(leaf: pytree.Leaf) -> Optional[str]:
    trailer = leaf.next_sibling
    if trailer.children[0].type != token.DOT:
        return None
    method = trailer.children[1].value
    called = is_call_trailer(trailer.next_sibling)
    if called and method in _KEEPS_SESSION:
        return f"is kept by the callable {method}() returns"
    if not called and method in _BOUND_METHODS:
        return f"is kept by its bound method {method}"
    return None


def _registered_as_default(found: list[Use]) -> bool:
    """True when the session is handed to ``set_session``: Keras then uses it without its name."""
    for use in found:
        if use.kind == "argument":
            call = _called_function(use.leaf)
            if call is not None and call.endswith("set_session"):
                return True
    return False


def _called_function(leaf: pytree.Leaf) -> Optional[str]:
    """Dotted name of the function that ``leaf`` is an argument of, when it has one."""
    node = leaf
    while node is not None and not (node.type == syms.trailer and node.children[0].type == token.LPAR):
        node = node.parent
    if node is None or node.parent is None:
        return None
    power = node.parent
    return prefix_name(power, child_index(node))


_DEFAULT_TO_THE_END = ("is the default session, used without its name until the end of the "
                       "block, which ends in a return/raise")


@dataclass(frozen=True)
class _Span:
    """Where a session is open: from its creation statement to ``last``.

    ``levels`` are (block, statement of it) pairs: the creation statement in its block, then
    each ``if``/``with``/``try`` climbed out of because uses follow it; ``last`` is a child of
    the outermost block: the statement after which to close, or a default session's final
    ``return``, before which to close.
    """

    levels: tuple[tuple[pytree.Node, pytree.Base], ...]
    last: pytree.Base


def _span(statement: pytree.Base, leaves: list[pytree.Leaf], default: bool):
    """(the session's :class:`_Span`, None) or (None, why it cannot be closed at one place)."""
    block, anchor = statement.parent, statement
    levels = []
    while True:
        levels.append((block, anchor))
        start = child_index(anchor)
        holders = [block_child(leaf, block) for leaf in leaves]
        if all(holder is not None for holder in holders):
            break
        owner = block.parent if block.type == syms.suite else None
        if owner is None or owner.type not in _CLIMBABLE or owner.parent.type not in BLOCKS:
            return None, "is used outside the block it is created in (a loop or function body)"
        block, anchor = owner.parent, owner
    indices = [child_index(holder) for holder in holders]
    last = max([start, *(index for index in indices if index >= start)])
    if default:
        statements = [child for child in block.children
                      if child.type not in (token.INDENT, token.DEDENT, token.NEWLINE, token.ENDMARKER)]
        last = child_index(statements[-1])
        reason = _DEFAULT_TO_THE_END
    else:
        reason = "is last used in a return/raise/break/continue statement"
    final = block.children[last]
    if is_terminal(final) and not (default and _is_return(final.children[0])):
        return None, reason
    return _Span(tuple(levels), final), None


def _is_return(node: pytree.Base) -> bool:
    return node.type == syms.return_stmt or (node.type == token.NAME and node.value == "return")


#: A ``return`` that leaves the function while the session is open, and why no close() can go
#: right before it (None: it can).
_Exit = tuple[pytree.Base, Optional[str]]


def _exits(span: _Span, name: str, found: list[Use], default: bool) -> list[_Exit]:
    """The returns that leave the function while the session is open, in source order. Only
    the statements of the span are walked, and not their expressions."""
    leaves = [use.leaf for use in found]
    as_default = _as_default_blocks(found)
    result = []
    unsure = False  # past an if/try holding the creation: the session may not exist
    outermost = span.levels[-1][0]
    for depth, (block, anchor) in enumerate(span.levels):
        unsure = unsure or (depth > 0 and anchor.type != syms.with_stmt)
        children = block.children
        end = child_index(span.last) + 1 if block is outermost else len(children)
        for statement in children[child_index(anchor) + 1:end]:
            for node in _returns(statement):
                problem = _return_problem(node, name, leaves, default or _under(node, as_default))
                if problem is None and unsure:
                    problem = f"{name} is created inside an if/try above, so it may not exist here"
                result.append((node, problem))
    return result


def _returns(statement: pytree.Base) -> Iterator[pytree.Base]:
    """The returns of ``statement`` that leave its function (not those of a nested def)."""
    if statement.type in (syms.funcdef, syms.classdef):
        return
    for node in scope_statements(statement):
        if _is_return(node):
            yield node


def _return_problem(node: pytree.Base, name: str, leaves: list[pytree.Leaf], default: bool) -> Optional[str]:
    """Why closing the session right before the return ``node`` is not safe, or None."""
    line = node.parent
    if line.children[0] is not node:
        return "it follows other statements after ';' on its line"
    if any(block_child(leaf, line) is node for leaf in leaves):
        return f"its value uses {name}; store the value in a variable first"
    if default and any(is_call_trailer(part) for part in node_pre_order(node)):
        return f"its value may run {name} as the default session; store the value in a variable first"
    if _finally_uses(node, leaves):
        return f"a finally clause after it still uses {name}"
    return None


def _as_default_blocks(found: list[Use]) -> set[int]:
    """ids of the ``with <name>.as_default():`` statements: calls in them may run the session."""
    blocks = set()
    for use in found:
        trailer = use.leaf.next_sibling
        if use.kind == "attribute" and trailer.children[0].type == token.DOT \
                and trailer.children[1].value == "as_default":
            outer = _outside_parentheses(use.leaf.parent)
            if _is_context_manager(outer):
                owner = outer.parent
                blocks.add(id(owner if owner.type == syms.with_stmt else owner.parent))
    return blocks


def _under(node: pytree.Base, blocks: set[int]) -> bool:
    while node.parent is not None and node.type != syms.funcdef:
        node = node.parent
        if id(node) in blocks:
            return True
    return False


def _finally_uses(node: pytree.Base, leaves: list[pytree.Leaf]) -> bool:
    """True when a ``finally`` clause that runs after the return ``node`` uses the session."""
    child = node
    while child.parent is not None and child.type != syms.funcdef:
        statement = child.parent
        if statement.type == syms.try_stmt:
            keywords = [leaf for leaf in statement.children if leaf.type == token.NAME]
            if keywords[-1].value == "finally":
                clause = statement.children[child_index(keywords[-1]) + 2]
                if child is not clause and any(block_child(leaf, clause) for leaf in leaves):
                    return True
        child = statement
    return False


def _insert_closes(code: str, after: Optional[pytree.Base], before: list[pytree.Node], newline: str) -> None:
    """``code`` after the statement ``after`` (when given) and before each return line."""
    if after is not None:
        insert_after(after, code, newline)
    for line in before:
        if line.parent.type not in BLOCKS:
            open_block(line, newline)
        insert_before(line, code, newline)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SessionClose()]
