"""NPU010 session-close: a bare session must be closed, that is where the NPU executor is freed.

``<name>.close()`` goes after the last statement of the block that uses the session or anything
built with it (:mod:`._lifetimes`: ``actor = Actor(sess)`` keeps it, so the close goes
after the last use of ``actor`` too), after the ``join()`` of the threads that run on it, and
before each ``return`` that leaves the function between the session's creation and that point
(a ``return`` on the line of its ``if``/``else``/``for``... first gets a line of its own). A
return before which closing would break something is reported instead: its value uses the
session or a holder (``return sess.run(y)``) or may run it as the default session, a
``finally`` clause after it uses it, threads may still run on it, or the session is made
inside an ``if``/``try`` above it and may not exist. The other clauses of that ``if``/``try``
(``else``, ``except``) are left alone.

No close goes before a ``raise``: it is a failure path, and an ``except`` of the same function
may catch it and go on using the session (``except OutOfRangeError: sess.run(final)``);
closing first would change what that handler does. ``break``/``continue`` do not leave the
function. ``with closing(tf.Session()) as sess:`` and ``with closing(sess):`` (``closing``
from contextlib) close the session, like ``with``. Nothing is inserted after a statement whose
every path ends in a ``return``/``raise``/``break``/``continue`` (``with ...: return x``): the
close goes before its returns, or the session is reported.

A close on some paths only (under an ``if`` without a close in each branch, in a loop or an
``except``: :mod:`._close_paths`) is no close: such a session is reported.

A session made the default outside a ``with`` (``sess.__enter__()``,
``sess.as_default().__enter__()``) or captured by a closure, lambda or ``functools.partial``
that is returned (``return make_fn(sess)`` where ``make_fn`` returns a nested function using
it) escapes (:mod:`._lifetimes`): it is reported, never closed.

A session a function returns (``return sess``, ``return sess, graph``) belongs to its callers:
each call of that function is handled like a session creation (closed there when it qualifies,
else reported there), and the function itself gets no finding. Callers in the same file are
found in the tree; callers in other files through the repository facts of
:mod:`._session_functions` (module-level functions only: :meth:`SessionClose.finish`
handles those calls in the calling file). A method, a function whose name is used otherwise
than in a call, or one that no file calls, is reported where it makes the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Iterable, Optional

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    ImportNames,
    Leaf,
    Node,
    Rule,
    hookimpl,
    insert_after,
    insert_before,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    BLOCKS,
    Use,
    attribute_name,
    block_child,
    block_statements,
    child_index,
    classify,
    compound_body,
    definition_name,
    enclosing_scope,
    fact_names,
    file_imported_names,
    flow,
    is_call_trailer,
    is_terminal,
    main_block,
    memo,
    node_pre_order,
    open_block,
    position,
    prefix_name,
    small_statement,
    uses,
)

from ._close_paths import clause_header, skipping_clause
from ._closing_methods import IMPLICIT, called_method_facts, is_called
from ._config_functions import module_parts
from ._entered_attributes import entering_with
from ._functions import function_returns, is_return
from ._lifetimes import Lifetime, Threads, lifetime
from ._method_results import method_result_facts
from ._session_config import SESSION_MANAGER_METHODS, names_session_manager
from ._session_functions import Position, SessionFunctions, session_function_facts, session_functions
from ._thread_functions import thread_function_facts

SESSIONS = frozenset({
    "tensorflow.Session",
    "tensorflow.InteractiveSession",
    "tensorflow.train.MonitoredSession",
    "tensorflow.train.MonitoredTrainingSession",
    "tensorflow.train.SingularMonitoredSession",
})
_NAMES = " | ".join(f"'{name.rpartition('.')[2]}'" for name in sorted(SESSIONS))
#: ``tf.train.SessionManager``'s methods that return a bare session, as NPU007 takes them.
_MANAGED = " | ".join(f"'{name}'" for name in sorted(SESSION_MANAGER_METHODS))
#: The method of ``tf.train.Supervisor`` (and ``SessionManager``) that returns a bare session:
#: ``sv.stop()`` does not close it (only ``managed_session``, a ``with``, does).
PREPARED = "prepare_or_wait_for_session"
#: Blocks a session's uses may leave: the block runs once, so the session is still the one made.
_CLIMBABLE = (symbols.if_stmt, symbols.with_stmt, symbols.try_stmt)
#: Methods a class may release its resources in, in the order they are suggested.
_CLEANUP = ("close", "__exit__", "__del__")
_MAIN = "'if __name__ == \"__main__\":'"

CLOSE = "call close() on this session when training ends"
RETURN = "close the session before this return"
RELEASES = "(Session.close() releases the NPU graph executor)"
ON_EVERY_PATH = "close it where every path passes (after the branch, or in a finally)"


@dataclass(frozen=True)
class _Made:
    """How a session site came to be: ``helper`` is the function whose result it is (None for
    a TF session call), ``index`` its position in the tuple that function returns (None: the
    session itself)."""

    interactive: bool = False
    helper: Optional[str] = None
    index: Optional[int] = None
    #: The local name of the Supervisor that made it (``sv.prepare_or_wait_for_session()``),
    #: whose services use it until ``sv.stop()``: the close goes after that.
    maker: Optional[str] = None

    def subject(self, name: str) -> str:
        return name if self.helper is None else f"{name} (the session {self.helper}() returns)"


class SessionClose(Rule):
    id = "NPU010"
    name = "session-close"
    pack = "sess-run"
    description = ("Insert sess.close() after the last use of a session, and of what is built "
                   "with it, not created in 'with', and before each earlier return.")
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
               "`K.set_session(tf.Session())`), returns before which a close would break "
               "something, and sessions closed on some paths only (`if done: sess.close()`, a "
               "close in a loop or an `except`: on the other paths the executor is never "
               "released), and sessions used up to an endless loop (`while True:` with no `break`, "
               "after which nothing runs); the message says where the close belongs when the "
               "tool can tell.")
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
    _scope = "linked"
    _site_names = tuple(sorted([name.rpartition(".")[2] for name in SESSIONS] + [PREPARED, *SESSION_MANAGER_METHODS]))
    _tokens = ("Session", "sess")  # "sess": a caller of another file's session function
    pattern = f"""(
        trailer< '.' name=({_NAMES} | '{PREPARED}' | {_MANAGED}) >
      | power< name=({_NAMES}) trailer< '(' [any] ')' > >
    )"""

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # the functions of this repository that make or configure sessions, by name
        return (*super()._site_names_for(facts), *fact_names(facts, ("npu010-session:", "npu010-called:")))

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if node.type == symbols.power:
            power, end = node, 1
        else:
            power, end = node.parent, child_index(node) + 1
        call = power.children[end] if end < len(power.children) else None
        if not is_call_trailer(call):
            return
        method = attribute_name(power.children[end - 1])
        if method == PREPARED:
            self._prepared(power, end, ctx)
            return
        if method in SESSION_MANAGER_METHODS:  # a bare session, whatever becomes of the manager
            if names_session_manager(ctx):
                self._site(power, end, _Made(), ctx)
            return
        qualified = ctx.tf.qualify(prefix_name(power, end))
        if qualified in SESSIONS:
            self._site(power, end, _Made(qualified == "tensorflow.InteractiveSession"), ctx)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        """Calls of another file's session functions (``sess = utils.make_session()``, the
        repository facts say which): each is a session made in this file."""
        functions = _session_functions(ctx)
        if not functions.returns:
            return
        calls = []
        imports = _imports(ctx)
        for node in node_pre_order(tree):
            head = node.children[0] if node.type == symbols.power else None
            if head is None or head.type != tokens.NAME or head.value not in imports:
                continue
            index = next((at for at, trailer in enumerate(node.children) if is_call_trailer(trailer)), 0)
            callee = prefix_name(node, index) if index else None
            target = imports[head.value] + callee[len(head.value):] if callee else None
            found = functions.find(target, ctx.path) if target else None
            if found is not None:
                calls.append((node, index, _Made(helper=callee, index=found[1])))
        start = len(ctx.deferred)
        for node, index, made in calls:
            self._site(node, index, made, ctx)
        for _, edit in ctx.deferred[start:]:  # the traversal is over: edit now, all at once
            edit()
        del ctx.deferred[start:]

    def _prepared(self, power: Node, end: int, ctx: FileContext) -> None:
        """``sess = sv.prepare_or_wait_for_session(...)``: a bare session (``sv.stop()`` stops
        the Supervisor's services, it does not close the session), closed after the last use
        of ``sess`` and of ``sv``. A Supervisor that is not a local name is not followed."""
        receiver = power.children[0]
        if end == 2 and receiver.type == tokens.NAME:
            self._site(power, end, _Made(maker=receiver.value), ctx)
        elif not _is_context_manager(_outside_parentheses(power)):
            supervisor = prefix_name(power, end - 1) or "the Supervisor"
            ctx.report(power, "unmigrated", f"{CLOSE} (the session {supervisor}.{PREPARED}() "
                       f"makes; close it after {supervisor}.stop(): its services use it until then)")

    def _site(self, power: Node, end: int, made: _Made, ctx: FileContext) -> None:
        """A session made by the call ``power.children[:end + 1]``."""
        if len(power.children) > end + 1:
            ctx.report(power, "unmigrated", f"{CLOSE} (the session object is used inline and "
                       "never bound to a name; bind it and close it, or use 'with')")
            return
        outer = _outside_parentheses(power)
        if _is_context_manager(outer) or _closing_argument(outer, ctx):
            return  # ``with tf.Session() as sess:``, ``with closing(tf.Session()) as sess:`` close it
        target = _assigned_name(power, made.index)
        if target is not None:
            self._bare_session(power, target, made, ctx)
            return
        function = _function_of(power)
        returned = _returned_position(outer)
        if function is not None and returned is not False and made.index is None:
            self._returned(power, function, returned, made.subject("the session"), made, ctx)
            return
        owner = _self_attribute(outer)
        entered = entering_with(outer.parent, owner[1]) if owner is not None else None
        if owner is not None and entered is not None:
            ctx.report(power, "migrated", f"self.{owner[1]} is closed by the 'with' that enters it "
                       f"(line {position(entered)[0]}; the NPU graph executor is released)")
            return
        closer = _closing_method(owner) if owner is not None else None
        if owner is None or closer is None:
            ctx.report(power, "unmigrated", f"{CLOSE} ({_where(power, made)}{_hint(outer, owner)})")
        elif is_called(closer, owner[0], ctx):
            ctx.report(power, "migrated", f"self.{owner[1]} is closed in {definition_name(owner[0])}."
                       f"{closer}() (the NPU graph executor is released)")
        else:
            ctx.report(power, "unmigrated", f"{CLOSE} (self.{owner[1]} is closed in "
                       f"{definition_name(owner[0])}.{closer}(), but no file of the repository "
                       f"that imports TensorFlow calls {closer}(): call it when training ends)")

    def _bare_session(self, power: Node, target: Leaf, made: _Made, ctx: FileContext) -> None:
        name = target.value
        statement = _line_of(target)
        scope = enclosing_scope(statement)
        found = uses(scope, name)
        closes = [use.leaf for use in found if _closes(use, ctx)]
        skipping = [skipping_clause(close, statement, closes) for close in closes]
        if closes and not all(skipping):
            ctx.report(power, "migrated", f"{name} is closed (the NPU graph executor is released)")
            return
        if closes:
            clause, close = skipping[0], closes[0]
            ctx.report(power, "unmigrated", f"{CLOSE} ({made.subject(name)} is closed only under "
                       f"'{clause_header(clause, close)}' (line {close.get_lineno()}): on the "
                       f"other paths it is never closed; {ON_EVERY_PATH})")
            return
        problem = _problem(found, target, scope)
        if problem is None and statement.parent.type not in BLOCKS:
            problem = "is created in a one-line block"
        if problem:
            declared = _declaration(found)
            module = scope.parent if declared is not None else None
            while module is not None and module.type != symbols.file_input:
                module = module.parent
            where = _main_hint(module) if declared == "global" and module is not None \
                else _hint(statement, None)
            ctx.report(power, "unmigrated", f"{CLOSE} ({made.subject(name)} {problem}{where})")
            return
        default = made.interactive or _registered_as_default(found)
        returns = [use for use in found if use.kind == "escape" and use.detail == "returned"]
        kept = [use for use in found if not any(use is other for other in returns)]
        life = lifetime(scope, name, kept, target, ctx, default or bool(_as_default_blocks(found)),
                        maker=made.maker)
        if returns and life.escape is None and not life.threads and scope.type == symbols.funcdef \
                and made.index is None:
            self._returned(power, scope, _returned_position_of(returns), made.subject(name), made, ctx)
            return
        if returns and life.escape is None:
            life.escape = f"{name} is returned"
        trouble = _trouble(life, made, found, statement)
        if trouble:
            ctx.report(power, "unmigrated", f"{CLOSE} ({trouble})")
            return
        span, why = _span(statement, name, life.leaves, default)
        if span is None:
            ctx.report(power, "unmigrated", f"{CLOSE} ({made.subject(name)} {why}{_hint(statement, None)})")
            return
        exits = _exits(span, name, life, found, default) if scope.type == symbols.funcdef else []
        _close(power, life, span, exits, ctx)

    def _returned(self, power: Node, function: Node, index: Position, subject: str,
                  made: _Made, ctx: FileContext) -> None:
        """The session is returned by ``function`` (``index``: its position in a returned
        tuple, None: itself, False: positions differ): each caller in the file owns it, and is
        handled like a session creation. The function gets no finding when it has callers."""
        helper = definition_name(function)
        callers = _callers(function)
        done = memo(ctx).setdefault("npu010.helpers", {})
        previous = done.get(id(function))
        if previous is not None and previous[0] is function and previous[1] != index:
            index = False  # two sessions at different places of what it returns
        elif previous is not None and previous[0] is function and callers:
            return  # a second session the same function returns: its callers are handled
        done[id(function)] = (function, index)
        if not callers and index is not False and _owned_elsewhere(function, ctx):
            return  # the callers in other files get the findings
        if not callers or index is False:
            why = ("it is a method, decorated, or its name is used otherwise than in a call, so "
                   "the tool cannot see its callers" if callers is None else
                   "it returns sessions at different positions" if index is False else
                   "it has no caller in this file")
            ctx.report(power, "unmigrated", f"{CLOSE} ({subject} is returned by {helper}(): "
                       f"close it in the callers of {helper}(); {why})")
            return
        for call in callers:
            self._site(call, 1, _Made(made.interactive, helper, index), ctx)


def _session_functions(ctx: FileContext) -> SessionFunctions:
    if "npu010.functions" not in memo(ctx):
        memo(ctx)["npu010.functions"] = session_functions(ctx.facts)
    return memo(ctx)["npu010.functions"]


def _imports(ctx: FileContext) -> dict[str, str]:
    """The file's imported names (``ast``, as the repository facts were made)."""
    return file_imported_names(ctx)  # the analysis's reading, or the file's ast


def _owned_elsewhere(function: Node, ctx: FileContext) -> bool:
    """True when ``function`` is a module-level session function of the facts that another
    file calls: its callers there own the session."""
    if function.parent.type != symbols.file_input:
        return False
    name = definition_name(function)
    functions = _session_functions(ctx)
    return f"{'.'.join(module_parts(ctx.path))}.{name}" in functions.returns \
        and functions.called_elsewhere(name, ctx.path)


def _close(power: Node, life: Lifetime, span: _Span, exits: list[_Exit], ctx: FileContext) -> None:
    """Close the session at the end of ``span`` and before each return it can be closed before;
    report the returns it cannot."""
    name = life.name
    closable = [node.parent for node, problem in exits if problem is None]
    endless = _endless_loop(span.last)
    if endless is not None:
        ctx.report(power, "unmigrated", f"{CLOSE} ({name} {ENDLESS.format(line=position(endless)[0])})")
        return
    endings = _endings(span.last)  # None: the block goes on after it, the close goes there
    after = endings is None
    if endings is not None:
        why = _unclosable_end(span.last, endings, closable)
        if why:
            ctx.report(power, "unmigrated", f"{CLOSE} ({name} {why})")
            return
    ctx.defer(lambda: _insert_closes(f"{name}.close()", span.last if after else None,
                                     closable, ctx.newline))
    holders = [holder for holder in life.holders if holder != name]
    built = f" or what is built with it ({', '.join(holders)})" if holders else ""
    where = [f"after the last statement using the session{built}"] if after else []
    if closable:
        plural = "s" if len(closable) > 1 else ""
        lines = ", ".join(str(position(line)[0]) for line in closable)
        where.append(f"before the return{plural} on line{plural} {lines}")
    ctx.report(power, "migrated", f"inserted '{name}.close()' {' and '.join(where)} {RELEASES}")
    for node, problem in exits:
        if problem is not None:
            ctx.report(node, "unmigrated", f"{RETURN} ({problem})")


def _unclosable_end(last: Base, endings: list[Base], closable: list[Node]) -> str:
    """Why no close can be placed for a span whose ``last`` statement ends every path
    (``endings``: its return/raise/break/continue lines; ``closable``: the returns a close can
    go before), or '' when closing before those returns is enough. Nothing is ever inserted
    after ``last``: it could never run."""
    if is_terminal(last):
        return "" if any(line is last for line in closable) else _DEFAULT_TO_THE_END
    jumps = [line for line in endings if not _returns_or_raises(small_statement(line))]
    if jumps or not any(block_child(line, last) is not None for line in closable):
        return (f"is used up to line {position(last)[0]}, a statement whose every path ends in a "
                "return/raise/break/continue, so no close can follow it; close it before each "
                "of those by hand")
    return ""


def _endless_loop(statement: Base) -> Optional[Node]:
    """The ``while True:`` (any always-true constant) with no ``break`` of its own that
    ``statement`` is or ends with (the last statement of a ``with``): no statement after it
    runs, a close() there never would. None when there is none."""
    if statement.type == symbols.with_stmt:
        statements = block_statements(_clauses(statement)[-1][1])
        return _endless_loop(statements[-1]) if statements else None
    if statement.type != symbols.while_stmt or not _always_true(statement.children[1]):
        return None
    return None if _breaks(statement.children[3]) else statement


def _always_true(test: Base) -> bool:
    """Is ``test`` ``True`` or a nonzero number?"""
    if test.type == tokens.NAME:
        return test.value == "True"
    return test.type == tokens.NUMBER and test.value.strip("0._jJlL") != ""


def _breaks(node: Base) -> bool:
    """Does ``node`` (a loop's body) hold a ``break`` of that loop: not one of a loop nested in
    it (whose ``else:`` clause is the outer loop's again), of a function or class?"""
    for child in node.children if isinstance(node, Node) else ():
        if child.type == tokens.NAME and child.value == "break":
            return True
        if child.type in (symbols.for_stmt, symbols.while_stmt):
            if any(keyword == "else" and _breaks(body) for keyword, body in _clauses(child)):
                return True
        elif child.type not in _OWN_SCOPES and _breaks(child):
            return True
    return False


def _endings(statement: Base) -> Optional[list[Base]]:
    """The return/raise/break/continue lines that end every path through ``statement`` (a
    line, ``with``, ``if`` with an ``else``, ``try``), or None when a path runs past it."""
    if statement.type == symbols.simple_stmt:
        return [statement] if is_terminal(statement) else None
    clauses = _clauses(statement)
    if statement.type == symbols.with_stmt:
        return _body_endings(clauses[-1][1])
    if statement.type == symbols.if_stmt and clauses[-1][0] == "else":
        return _all_end([body for _, body in clauses])
    if statement.type != symbols.try_stmt:
        return None
    bodies = dict(clauses)
    if "finally" in bodies and _body_endings(bodies["finally"]) is not None:
        return _body_endings(bodies["finally"])
    normal = _body_endings(bodies["try"])
    if normal is None and "else" in bodies:
        normal = _body_endings(bodies["else"])
    handlers = _all_end([body for keyword, body in clauses if keyword == "except"])
    return None if normal is None or handlers is None else normal + handlers


def _clauses(statement: Node) -> list[tuple[str, Base]]:
    """(keyword, body) of each clause of a compound statement; ``except`` for a handler."""
    children = statement.children
    result = []
    for index, child in enumerate(children):
        if child.type == tokens.COLON and index + 1 < len(children):
            keyword = children[index - 1]
            if keyword.type == tokens.NAME and keyword.value in ("try", "else", "finally", "except"):
                word = keyword.value
            else:
                word = "except" if keyword.type == symbols.except_clause else children[0].value
            result.append((word, children[index + 1]))
    return result


def _all_end(bodies: list[Base]) -> Optional[list[Base]]:
    endings: list[Base] = []
    for body in bodies:
        found = _body_endings(body)
        if found is None:
            return None
        endings.extend(found)
    return endings


def _body_endings(body: Base) -> Optional[list[Base]]:
    """:func:`_endings` of the last statement of a clause's body."""
    statements = block_statements(body)
    return _endings(statements[-1]) if statements else None


def _outside_parentheses(node: Base) -> Base:
    while node.parent is not None and node.parent.type == symbols.atom and \
            node.parent.children[0].type == tokens.LPAR and len(node.parent.children) == 3:
        node = node.parent
    return node


def _assigned_name(power: Node, index: Optional[int] = None) -> Optional[Leaf]:
    """``name`` of ``name = <power>`` (a plain, single assignment), else None; with ``index``,
    the name at that position of ``a, name = <power>``."""
    statement = _outside_parentheses(power).parent
    if statement is None or statement.type != symbols.expr_stmt or len(statement.children) != 3:
        return None
    target, operator, value = statement.children
    if value is not _outside_parentheses(power) or operator.type != tokens.EQUAL:
        return None
    if index is not None:
        if target.type == symbols.atom and len(target.children) == 3:
            target = target.children[1]
        tuples = (symbols.testlist_star_expr, symbols.exprlist, symbols.testlist_gexp)
        items = target.children[::2] if target.type in tuples and len(target.children) % 2 == 1 else []
        target = items[index] if index < len(items) else None
    if target is None or target.type != tokens.NAME or statement.parent.type != symbols.simple_stmt:
        return None
    return target


def _line_of(target: Leaf) -> Base:
    """The simple statement (line) of an assignment target."""
    node = target
    while node.type != symbols.simple_stmt:
        node = node.parent
    return node


def _where(power: Node, made: _Made) -> str:
    outer = _outside_parentheses(power)
    parent = outer.parent
    it = "it" if made.helper is None else f"the session {made.helper}() returns"
    if made.index is not None and parent.type == symbols.expr_stmt and parent.children[-1] is outer:
        return (f"the session is item {made.index} of what {made.helper}() returns; unpack it "
                "into names (a, b = ...) so that the tool can close it, or close it by hand")
    if parent.type == symbols.expr_stmt and parent.children[-1] is outer:
        return (f"{it} is stored in an attribute, subscript or several names, so the tool cannot "
                "see when training ends")
    if parent.type == symbols.return_stmt or _returned_position(outer) is not False:
        return f"{it} is returned to the caller, which must close it"
    if parent.type in (symbols.argument, symbols.arglist, symbols.trailer):
        return f"{it} is created inline as an argument; bind it to a name first"
    return f"{it} is not bound to a local name" if made.helper else "the session is not bound to a local name"


def _is_context_manager(node: Base) -> bool:
    """True for the expression of ``with <node>:`` or ``with <node> as x:``."""
    owner = node.parent
    return owner.type == symbols.with_stmt or (owner.type == symbols.with_item and owner.children[0] is node)


def _closing_argument(node: Base, ctx: FileContext) -> bool:
    """True for ``with closing(<node>):``, ``closing`` from contextlib in any spelling."""
    trailer = node.parent
    if not is_call_trailer(trailer) or len(trailer.children) != 3:
        return False
    power = trailer.parent
    if power.children[-1] is not trailer or not _is_context_manager(_outside_parentheses(power)):
        return False
    contextlib = memo(ctx).get("npu010.contextlib")
    if contextlib is None:  # few files get here: only for a session in a with's call
        contextlib = memo(ctx)["npu010.contextlib"] = ImportNames(ctx.tree, root="contextlib")
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
        and following.type == symbols.trailer and following.children[0].type == tokens.DOT
        and following.children[1].value == "close" and is_call_trailer(following.next_sibling)
    )


def _problem(found: list[Use], target: Leaf, scope: Node) -> Optional[str]:
    """Why the session's name cannot be followed to one close(): a class attribute, or a name
    bound again (the rest, escapes and holders, is :func:`lifetime`'s)."""
    if scope.type == symbols.classdef:
        return "is a class attribute"
    declared = _declaration(found)
    if declared is not None:
        where = definition_name(scope) if scope.type == symbols.funcdef else "the module"
        if declared == "global" and scope.type != symbols.funcdef:  # legal at module level, a no-op
            return (f"is declared 'global {found[0].leaf.value}' at module level: it is a module "
                    "global, which the module's functions and its importers may still use")
        if declared == "global":
            return (f"is declared 'global {found[0].leaf.value}' in {where}(): it escapes through "
                    "the module global, which code outside that function may still use")
        return (f"is declared 'nonlocal {found[0].leaf.value}' in {where}(): it belongs to the "
                "enclosing function, which may still use it")
    for use in found:
        if use.leaf is not target and use.kind == "bind":
            return f"is {use.detail} again in the same scope, so one close() cannot be placed"
    return None


def _declaration(found: list[Use]) -> Optional[str]:
    """``global`` or ``nonlocal`` when the session's name is declared so in its scope (the
    session then lives in another scope: the module's, the enclosing function's), else None."""
    for use in found:
        if use.kind == "bind" and use.detail == "declared":
            return "nonlocal" if use.leaf.parent.children[0].value == "nonlocal" else "global"
    return None


def _trouble(life: Lifetime, made: _Made, found: list[Use], statement: Base) -> Optional[str]:
    """Why the session cannot be closed in its scope, and where its close belongs, or None."""
    origin = f"; it is the session {made.helper}() returns" if made.helper else ""
    if life.escape is not None:
        return f"{life.escape}{origin}{_hint(statement, _stored_on_self(found))}"
    for threads in life.threads:
        if threads.joined is None:
            return f"{_unjoined(made.subject(life.name), threads)}{origin}"
    return None


def _unjoined(subject: str, threads: Threads) -> str:
    started = f"{subject} is used by {threads.what} created on line {position(threads.start)[0]}"
    join = threads.conditional
    if join is not None:
        return (f"{started}; close it after {str(join).strip()} (line {position(join)[0]}) once "
                "that join surely runs: it is inside an if, a loop or a try body, so the tool "
                "does not close it there")
    return f"{started}, never joined in the same block; {_join_hint(threads)}"


def _join_hint(threads: Threads) -> str:
    names = threads.names
    if threads.coordinator is not None and (names or threads.registered):
        return f"close it after {threads.coordinator}.join({names[-1] if names else ''})"
    if names:
        example = f"{names[0]}.join()" if len(names) == 1 else f"for t in {names[-1]}: t.join()"
        return f"close it after the threads are joined ({example})"
    if threads.what == "queue-runner threads":
        return ("keep the threads (threads = tf.train.start_queue_runners(sess=..., coord=coord)) "
                "and close it after coord.request_stop() and coord.join(threads)")
    return "keep the thread, join it, and close it after the threads are joined"


def _function_of(node: Base) -> Optional[Node]:
    scope = enclosing_scope(node)
    return scope if scope.type == symbols.funcdef else None


def _returned_position(node: Base) -> Position:
    """None when ``node`` is what its function returns, its index when it is an item of a
    returned tuple (``return sess, graph``), else False."""
    node = _outside_parentheses(node)
    parent = node.parent
    if parent.type == symbols.return_stmt:
        return None
    if parent.type not in (symbols.testlist_star_expr, symbols.testlist, symbols.exprlist, symbols.testlist_gexp):
        return False
    items = parent.children[::2]
    outer = _outside_parentheses(parent.parent if parent.type == symbols.testlist_gexp else parent)
    if outer.parent.type != symbols.return_stmt or any(child.type == symbols.comp_for for child in parent.children):
        return False
    return next((index for index, item in enumerate(items) if item is node), False)


def _returned_position_of(returns: list[Use]) -> Position:
    """The position (see :func:`_returned_position`) of every ``return`` of the session, or
    False when they differ."""
    positions = {_returned_position(use.leaf) for use in returns}
    return positions.pop() if len(positions) == 1 else False


def _callers(function: Node) -> Optional[list[Node]]:
    """The calls (power nodes) of ``function`` in the file; None when it may be reached
    otherwise: a method, a decorated function, a name passed around or bound again."""
    owner = enclosing_scope(function)
    if owner.type == symbols.classdef or function.parent.type == symbols.decorated:
        return None
    name = function.children[1]
    calls = []
    for use in uses(owner, name.value):
        if use.leaf is name:
            continue
        power = use.leaf.parent
        if classify(use.leaf).kind != "attribute" or power.children[0] is not use.leaf \
                or not is_call_trailer(power.children[1]):
            return None
        calls.append(power)
    return calls


def _self_attribute(outer: Base) -> Optional[tuple[Node, str]]:
    """(class, attribute) for ``self.<attribute> = <outer>`` in a method of that class."""
    statement = outer.parent
    if statement.type != symbols.expr_stmt or statement.children[-1] is not outer:
        return None
    target = statement.children[0]
    if target.type != symbols.power or target.children[0].type != tokens.NAME:
        return None
    return _owner(target.children[0])


def _owner(head: Leaf) -> Optional[tuple[Node, str]]:
    """(class, attribute) when ``head`` is the ``self`` of ``self.<attribute>`` in a method."""
    trailer = head.next_sibling
    if head.value != "self" or trailer is None or trailer.type != symbols.trailer \
            or trailer.children[0].type != tokens.DOT or trailer.next_sibling is not None:
        return None
    function = enclosing_scope(head)
    classdef = enclosing_scope(function) if function.type == symbols.funcdef else None
    if classdef is None or classdef.type != symbols.classdef:
        return None
    return classdef, trailer.children[1].value


def _stored_on_self(found: list[Use]) -> Optional[tuple[Node, str]]:
    """(class, attribute) of a ``self.<attribute> = sess`` among the session's uses."""
    for use in found:
        if use.kind == "escape":
            value = flow(use.leaf)
            if value.kind == "stored" and value.store is not None:
                owner = _owner(value.store)
                if owner is not None:
                    return owner
    return None


def _closing_method(owner: tuple[Node, str]) -> Optional[str]:
    """The name of the method of the class that runs ``self.<attribute>.close()`` (one that
    Python calls itself first, :data:`._closing_methods.IMPLICIT`), or None. The session is
    closed only if that method is called (:func:`._closing_methods.is_called`)."""
    classdef, attribute = owner
    found = []
    for node in node_pre_order(classdef):
        if node.type == symbols.power and len(node.children) == 4 and str(node).strip().replace(" ", "") \
                == f"self.{attribute}.close()":
            found.append(definition_name(enclosing_scope(node)))
    return next((name for name in found if name in IMPLICIT), found[0] if found else None)


def _hint(node: Base, owner: Optional[tuple[Node, str]]) -> str:
    """``; close it ...``: where the close of a session that outlives its scope belongs, when
    that can be told: in the owning class's cleanup method, or at the end of the
    ``if __name__ == "__main__":`` block for a module's session; else ''."""
    if owner is not None:
        classdef, attribute = owner
        name = definition_name(classdef)
        methods = {child.children[1].value for child in classdef.children[-1].children
                   if child.type == symbols.funcdef}
        method = next((method for method in _CLEANUP if method in methods), None)
        if method is not None:
            return f"; close it in {name}.{method}(): self.{attribute}.close()"
        return (f"; add a close() method to {name} that calls self.{attribute}.close(), and call "
                "it when training ends")
    module = enclosing_scope(node)
    return _main_hint(module) if module.type == symbols.file_input else ""


def _main_hint(module: Node) -> str:
    """``; close it at the end of the if __name__ == "__main__": block (line n)`` for a session
    of the ``module`` (a module-level name), or '' when it has no such block."""
    main = main_block(module)
    if main is None:
        return ""
    statements = block_statements(compound_body(main))
    text = f"; close it at the end of the {_MAIN} block (line {_end_line(statements[-1])})"
    joins = [statement for statement in statements if _is_join(statement)]
    if joins:
        text += f", after {str(joins[-1]).strip()} (line {position(joins[-1])[0]})"
    return text


def _returns_or_raises(small: Base) -> bool:
    return is_return(small) or small.type == symbols.raise_stmt \
        or (small.type == tokens.NAME and small.value == "raise")


def _is_join(statement: Base) -> bool:
    """A line that only calls ``<name>.join(...)`` (``COORD.join(worker_threads)``)."""
    call = small_statement(statement)
    if statement.type != symbols.simple_stmt or call.type != symbols.power:
        return False
    return len(call.children) == 3 and call.children[0].type == tokens.NAME and \
        str(call.children[1]).strip() == ".join" and is_call_trailer(call.children[2])


def _end_line(statement: Base) -> int:
    """The last line of ``statement`` that has code."""
    return max(leaf.lineno for leaf in statement.leaves()
               if leaf.lineno and leaf.type not in (tokens.NEWLINE, tokens.INDENT, tokens.DEDENT))


def _registered_as_default(found: list[Use]) -> bool:
    """True when the session is handed to ``set_session``: Keras then uses it without its name."""
    for use in found:
        if use.kind == "argument":
            call = _called_function(use.leaf)
            if call is not None and call.endswith("set_session"):
                return True
    return False


def _called_function(leaf: Leaf) -> Optional[str]:
    """Dotted name of the function that ``leaf`` is an argument of, when it has one."""
    node = leaf
    while node is not None and not (node.type == symbols.trailer and node.children[0].type == tokens.LPAR):
        node = node.parent
    if node is None or node.parent is None:
        return None
    power = node.parent
    return prefix_name(power, child_index(node))


ENDLESS = ("is used up to an endless loop (line {line}: while True with no break), after which "
           "nothing runs: close it where the program stops (in a finally: around the loop, or "
           "before each return that leaves the loop)")
_OWN_SCOPES = (symbols.funcdef, symbols.classdef, symbols.lambdef, symbols.async_funcdef)
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

    levels: tuple[tuple[Node, Base], ...]
    last: Base


def _span(statement: Base, name: str, leaves: list[Leaf], default: bool):
    """(the session's :class:`_Span`, None) or (None, why it cannot be closed at one place).
    ``leaves`` are the uses of the session ``name`` and of its holders."""
    block, anchor = statement.parent, statement
    levels = []
    while True:
        levels.append((block, anchor))
        start = child_index(anchor)
        holders = [block_child(leaf, block) for leaf in leaves]
        if all(holder is not None for holder in holders):
            break
        owner = block.parent if block.type == symbols.suite else None
        if owner is None or owner.type not in _CLIMBABLE or owner.parent.type not in BLOCKS:
            outside = [leaf for leaf, holder in zip(leaves, holders) if holder is None]
            return None, (f"is used{_through(outside, name)} outside the block it is created in "
                          "(a loop or function body)")
        block, anchor = owner.parent, owner
    indices = [child_index(holder) for holder in holders]
    last = max([start, *(index for index in indices if index >= start)])
    if default:
        statements = [child for child in block.children
                      if child.type not in (tokens.INDENT, tokens.DEDENT, tokens.NEWLINE, tokens.ENDMARKER)]
        last = child_index(statements[-1])
        reason = _DEFAULT_TO_THE_END
    final = block.children[last]
    if not default:
        users = [leaf for leaf, holder in zip(leaves, holders) if holder is final]
        through = _through(users, name)
        advice = ("it leaves with them: close it where the caller is done with them" if through else
                  "store what it computes in a variable and close the session before that line")
        reason = (f"is last used{through} in a return/raise/break/continue statement "
                  f"(line {position(final)[0]}); {advice}")
    if is_terminal(final) and not (default and is_return(final.children[0])):
        return None, reason
    return _Span(tuple(levels), final), None


def _through(leaves: list[Leaf], name: str) -> str:
    """`` through agent (built with it)`` when none of ``leaves`` is the session itself."""
    names = sorted({leaf.value for leaf in leaves})
    if not names or name in names:
        return ""
    return f" through {', '.join(names)} (built with it)"


#: A ``return`` that leaves the function while the session is open, and why no close() can go
#: right before it (None: it can).
_Exit = tuple[Base, Optional[str]]


def _exits(span: _Span, name: str, life: Lifetime, found: list[Use], default: bool) -> list[_Exit]:
    """The returns that leave the function while the session is open, in source order. Only
    the statements of the span are walked, and not their expressions."""
    leaves = life.leaves
    as_default = _as_default_blocks(found)
    running = [(threads.start, threads.joined) for threads in life.threads]
    result = []
    unsure = False  # past an if/try holding the creation: the session may not exist
    outermost = span.levels[-1][0]
    for depth, (block, anchor) in enumerate(span.levels):
        unsure = unsure or (depth > 0 and anchor.type != symbols.with_stmt)
        children = block.children
        end = child_index(span.last) + 1 if block is outermost else len(children)
        for statement in children[child_index(anchor) + 1:end]:
            if statement.type in (symbols.funcdef, symbols.classdef):
                continue
            for node in function_returns(statement):
                problem = _return_problem(node, name, leaves, default or _under(node, as_default))
                if problem is None and any(position(start) < position(node) < position(join)
                                           for start, join in running):
                    problem = (f"threads using {name} may still be running here; join them before "
                               "this return")
                if problem is None and unsure:
                    problem = f"{name} is created inside an if/try above, so it may not exist here"
                result.append((node, problem))
    return result


def _return_problem(node: Base, name: str, leaves: list[Leaf], default: bool) -> Optional[str]:
    """Why closing the session right before the return ``node`` is not safe, or None."""
    line = node.parent
    if line.children[0] is not node:
        return "it follows other statements after ';' on its line"
    used = next((leaf.value for leaf in leaves if block_child(leaf, line) is node), None)
    if used is not None:
        held = "" if used == name else f", which holds {name}"
        return f"its value uses {used}{held}; store the value in a variable first"
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
        if use.kind == "attribute" and attribute_name(trailer) == "as_default":
            outer = _outside_parentheses(use.leaf.parent)
            if _is_context_manager(outer):
                owner = outer.parent
                blocks.add(id(owner if owner.type == symbols.with_stmt else owner.parent))
    return blocks


def _under(node: Base, blocks: set[int]) -> bool:
    while node.parent is not None and node.type != symbols.funcdef:
        node = node.parent
        if id(node) in blocks:
            return True
    return False


def _finally_uses(node: Base, leaves: list[Leaf]) -> bool:
    """True when a ``finally`` clause that runs after the return ``node`` uses the session."""
    child = node
    while child.parent is not None and child.type != symbols.funcdef:
        statement = child.parent
        if statement.type == symbols.try_stmt:
            keywords = [leaf for leaf in statement.children if leaf.type == tokens.NAME]
            if keywords[-1].value == "finally":
                clause = statement.children[child_index(keywords[-1]) + 2]
                if child is not clause and any(block_child(leaf, clause) for leaf in leaves):
                    return True
        child = statement
    return False


def _insert_closes(code: str, after: Optional[Base], before: list[Node], newline: str) -> None:
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


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    return (session_function_facts(path, text) | called_method_facts(text)
            | thread_function_facts(path, text) | method_result_facts(path, text)) or None
