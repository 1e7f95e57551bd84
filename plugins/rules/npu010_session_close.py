"""NPU010 session-close: a bare session must be closed, that is where the NPU executor is freed."""

from __future__ import annotations

from typing import Optional

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.rule import Capture, FileContext, Rule
from npu_codemod.codemods.scopes import Use, insert_after, is_terminal, uses
from npu_codemod.codemods.statements import BLOCKS, block_child, enclosing_scope
from npu_codemod.codemods.tfnames import is_call_trailer, prefix_name
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


class SessionClose(Rule):
    id = "NPU010"
    name = "session-close"
    description = "Insert sess.close() after the last use of a session not created in 'with'."
    guide_section = "执行训练: sess.close()"
    tokens = ("Session",)
    pattern = f"""(
        trailer< '.' name=({_NAMES}) >
      | power< name=({_NAMES}) trailer< '(' [any] ')' > >
    )"""

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if node.type == syms.power:
            power, end = node, 1
        else:
            power, end = node.parent, node.parent.children.index(node) + 1
        call = power.children[end] if end < len(power.children) else None
        qualified = ctx.tf.qualify(prefix_name(power, end))
        if not is_call_trailer(call) or qualified not in SESSIONS:
            return
        if len(power.children) > end + 1:
            ctx.report(power, "unmigrated", f"{CLOSE} (the session object is used inline and "
                       "never bound to a name; bind it and close it, or use 'with')")
            return
        outer = _outside_parentheses(power)
        owner = outer.parent
        if owner.type == syms.with_stmt or (owner.type == syms.with_item and owner.children[0] is outer):
            return  # ``with tf.Session() as sess:`` closes it
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
        if any(_closes(use) for use in found):
            ctx.report(power, "migrated", f"{name} is closed (the NPU graph executor is released)")
            return
        problem = _problem(found, target, scope)
        if problem is None and statement.parent.type not in BLOCKS:
            problem = "it is created in a one-line block"
        if problem:
            ctx.report(power, "unmigrated", f"{CLOSE} ({name} {problem})")
            return
        default = interactive or _registered_as_default(found)
        last, why = _last_statement(statement, [use.leaf for use in found], default)
        if last is None:
            ctx.report(power, "unmigrated", f"{CLOSE} ({name} {why})")
            return
        ctx.defer(lambda: insert_after(last, f"{name}.close()", ctx.newline))
        ctx.report(power, "migrated", f"inserted '{name}.close()' after the last statement using "
                   "the session (Session.close() releases the NPU graph executor)")


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


def _closes(use: Use) -> bool:
    """``name.close()`` or ``with name:`` (``with name.as_default():`` does not close)."""
    if use.kind == "with":
        return True
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
    return prefix_name(power, power.children.index(node))


def _last_statement(statement: pytree.Base, leaves: list[pytree.Leaf], default: bool):
    """(statement after which to close, None) or (None, why there is no such statement)."""
    block, anchor = statement.parent, statement
    while True:
        start = block.children.index(anchor)
        holders = [block_child(leaf, block) for leaf in leaves]
        if all(holder is not None for holder in holders):
            break
        owner = block.parent if block.type == syms.suite else None
        if owner is None or owner.type not in _CLIMBABLE or owner.parent.type not in BLOCKS:
            return None, "is used outside the block it is created in (a loop or function body)"
        block, anchor = owner.parent, owner
    indices = [block.children.index(holder) for holder in holders]
    last = max([start, *(index for index in indices if index >= start)])
    if default:
        statements = [child for child in block.children if child.type not in (token.INDENT, token.DEDENT, token.NEWLINE, token.ENDMARKER)]
        last = block.children.index(statements[-1])
        reason = ("is the default session, used without its name until the end of the block, "
                  "which ends in a return/raise")
    else:
        reason = "is last used in a return/raise/break/continue statement"
    if is_terminal(block.children[last]):
        return None, reason
    return block.children[last], None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SessionClose()]
