"""How long an object named in a scope lives: the objects built with it and the threads using it.

A session must stay open while anything built with it may still run it. A call whose result
is kept and that took the object (``actor = Actor(sess, n)``, ``agent = make_agent(sess=sess)``)
may keep it: the result is a *holder*, and the object lives as long as its holders, and theirs
(``trainer = Trainer(agent)``). A holder that leaves the scope (returned, yielded, stored on an
attribute or in a container, used in a nested function) takes the object with it: that is an
*escape*. Threads given the object or a holder (``threading.Thread(target=w.work)``,
``tf.train.start_queue_runners(sess=sess, coord=coord)``) use it until they are joined
(``coord.join(threads)``, ``t.join()``, ``for t in threads: t.join()``).

A call is not a holder when its result is known not to keep that argument: a function or class
of the same file whose parameter does not outlive the call (worked out with this same
analysis, on the parameter), TF functions that return plain values (``tf.train.global_step``,
``Saver.save``/``restore``), and builtins such as ``print`` and ``len``. Method results of a
holder (``a = actor.choose_action(s)``) and attribute reads (``actor.epsilon``) are values,
not holders, unless a thread gets them (``target=worker.work``) or a call whose result is kept
(``hook = Hook(agent.step)``): a bound method holds its object.

A session made the default outside a ``with`` (``sess.__enter__()``,
``sess.as_default().__enter__()``, ``ctx = sess.as_default()`` then ``ctx.__enter__()``, or
``as_default()`` handed to a call such as ``stack.enter_context``) escapes: code anywhere may
fetch it through ``tf.get_default_session()``. So does a session captured by a closure or a
partial that leaves the scope: ``return make_fn(sess)`` when ``make_fn`` returns a lambda or a
nested function using its parameter, ``fn = functools.partial(run, sess)`` then ``return fn``.

A method of an object that is given the object (``samples = model.generate(sess)``) gives
a value when every method of the repository with that name only runs it
(:mod:`._method_results`); any other call of another module's code is a holder.

A class of the file that subclasses ``threading.Thread`` (and one of another file, by the
repository facts) starts threads on what it is given: its instance may run the session on its
own thread once started.

Not seen: what a method of a holder returns (``runner = agent.make_runner()`` is a value),
functions of other modules (their results are holders; what they store elsewhere is not seen,
but threads they start on a parameter and do not join are: :mod:`._thread_functions`),
an object stored on a local's attribute (``model.sess = sess``) is an escape rather than a
holder, and executors (``pool.submit(f, sess)``) are not threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    ImportNames,
    Leaf,
    Node,
    arguments,
    dotted_name,
    find_argument,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    BLOCKS,
    Flow,
    Names,
    Use,
    attribute_name,
    block_child,
    bound_names,
    callee_name,
    child_index,
    definition_name,
    flow,
    is_call_trailer,
    memo,
    node_pre_order,
    per_node,
    position,
    prefix_name,
    scope_statements,
    small_statements,
    uses,
)

from ._functions import parameters
from ._method_results import only_runs
from ._thread_functions import starts_threads

#: Session methods whose result keeps using the session after the call returns.
KEEPS_SESSION = frozenset({"make_callable", "partial_run_setup"})
#: Session methods that, taken unbound (``run = sess.run``), keep the session.
BOUND_METHODS = frozenset({"run", "partial_run", "make_callable", "as_default", "close"})
QUEUE_RUNNERS = frozenset({"tensorflow.train.start_queue_runners",
                           "tensorflow.train.queue_runner.start_queue_runners"})
#: Methods that start queue-runner threads on their session argument (QueueRunner,
#: Supervisor), whatever their receiver.
_THREAD_METHODS = frozenset({"start_queue_runners", "create_threads"})
_THREADS = frozenset({"threading.Thread", "threading.Timer"})
#: TF functions whose result does not keep the session they are given.
_TF_VALUES = frozenset({
    "tensorflow.train.global_step", "tensorflow.train.write_graph", "tensorflow.io.write_graph",
    "tensorflow.graph_util.convert_variables_to_constants", "tensorflow.saved_model.loader.load",
    "tensorflow.saved_model.load", "tensorflow.saved_model.simple_save",
    "tensorflow.keras.backend.set_session",
})
_SAVER = "tensorflow.train.Saver"
_COORDINATOR = "tensorflow.train.Coordinator"
_SAVER_METHODS = frozenset({"save", "restore"})
#: Calls whose result keeps their arguments for later calls.
_PARTIALS = frozenset({"functools.partial"})
_BUILTIN_VALUES = frozenset({"print", "len", "isinstance", "issubclass", "id", "hash", "repr",
                             "str", "format", "bool", "int", "float", "callable", "hasattr"})
_LOOPS = (symbols.for_stmt, symbols.while_stmt)
#: Builtins that hand the local names of the scope they run in to their caller (``vars`` with
#: no argument, ``globals`` at module level: :meth:`_Tracker.namespace_handed`).
_NAMESPACES = frozenset({"locals", "vars", "globals", "exec", "eval"})
ENTERED = ("is made the default session outside a 'with', so code anywhere may still fetch it "
           "through tf.get_default_session()")


@dataclass
class Threads:
    """Threads that use the object: started by ``start`` (a call), reachable through ``names``
    (``t``, ``threads``, in the order found). ``coordinator``: the ``tf.train.Coordinator`` they were given;
    ``registered``: ``coordinator.join()`` joins them (queue runners given ``coord=``)."""

    start: Base
    what: str
    names: list[str] = field(default_factory=list)
    coordinator: Optional[str] = None
    registered: bool = False
    #: The first ``join`` that surely runs after ``start`` in the same block, if any.
    joined: Optional[Node] = None
    #: A join that may not run (inside an ``if``, a loop, a ``try`` body), if no sure one.
    conditional: Optional[Node] = None


@dataclass
class Lifetime:
    """What keeps the object ``name`` in use: ``leaves``, every occurrence of it and of its
    holders; ``holders``, each holder's name -> where it gets the object; the ``threads``
    using it; ``escape``, why it outlives the scope (None: it does not)."""

    name: str
    leaves: list[Leaf] = field(default_factory=list)
    holders: dict[str, Leaf] = field(default_factory=dict)
    threads: list[Threads] = field(default_factory=list)
    escape: Optional[str] = None
    #: Where it escapes to, for ``as_parameter``: ``elsewhere`` (a global, an attribute of
    #: another object, a subscript or container that may outlive the call, a thread) or
    #: ``result`` (returned, stored on the object a constructor makes, or in a local that a
    #: return may hand out: the call's result may keep it).
    escape_to: str = ""
    #: The escape is a capture: a closure, lambda or partial keeps the object to run it later.
    captured: bool = False


def lifetime(scope: Node, name: str, found: list[Use], origin: Leaf,
             ctx: FileContext, default: bool = False, as_parameter: str = "",
             maker: Optional[str] = None) -> Lifetime:
    """The :class:`Lifetime` of the object bound to ``name`` at the NAME leaf ``origin``
    (``found``: ``uses(scope, name)``). ``default``: the object is the default session, so
    ``tf.train.start_queue_runners()`` without a session starts threads on it.

    For NPU010 a ``return`` of a holder is not an escape: that return is a use of the session
    like any other, so no close goes before it (it is reported) and the session stays open on
    that path. ``as_parameter`` is for a parameter of a function being called (its value:
    the name of the object a constructor makes, ``self``, or any non-empty string): then such a
    return, or storing it on that object, keeps it in the call's result, and an alias of it
    (``s = sess``) is a holder like any other. ``maker``: a local name whose object made the
    object and keeps using it (``sess = sv.prepare_or_wait_for_session()``: the Supervisor's
    services run the session until ``sv.stop()``), a holder from ``origin`` on."""
    tracker = _Tracker(scope, name, ctx, as_parameter)
    tracker.follow(name, found, origin)
    tracker.namespace_handed(origin)
    if maker is not None:
        tracker.follow(maker, tracker.uses(maker), origin)
    if default:
        tracker.default_queue_runners(origin)
    tracker.run()
    if tracker.life.escape is None:
        for threads in tracker.life.threads:
            tracker.find_joins(threads)
    return tracker.life


def _only_looked_into(power: Node) -> bool:
    """Is the namespace call ``power`` (``globals()``) only read where it is: a name looked up
    in it (``'x' in globals()``, ``globals()['x']``, ``globals().get('x')``)? Such a call hands
    the namespace to no one."""
    if len(power.children) > 2:
        return True  # a trailer after the call: a subscript or a method of the dict
    parent = power.parent
    return parent is not None and parent.type == symbols.comparison  # 'x' not in globals()


class _Tracker:
    """Walks the uses of an object and of each holder it finds, once per name."""

    def __init__(self, scope: Node, name: str, ctx: FileContext, as_parameter: str) -> None:
        self.scope, self.ctx, self.as_parameter = scope, ctx, as_parameter
        self.life = Lifetime(name)
        self.pending: list[tuple[str, list[Use], Leaf]] = []
        self.found: dict[str, list[Use]] = {}
        self.thread_of: dict[str, Threads] = {}
        #: Holders that are closures or partials (``fn = partial(run, sess)``).
        self.closures: set[str] = set()
        #: The call that captured the value last given to :meth:`_released`, if any.
        self.capture: Optional[str] = None
        self._names: Optional[Names] = None

    def uses(self, name: str) -> list[Use]:
        if self._names is None:
            self._names = Names(self.scope)
        return self._names.uses(name)

    def flow(self, node: Base) -> Flow:
        """:func:`flow`, where a TF function named like a storing method (``tf.add(l1, l2)``,
        not ``tensors.add(l1)``) is a call like any other: it stores nothing in ``tf``, its
        result (a tensor) may hold the value."""
        value = flow(node)
        while value.kind == "stored" and value.into == "container" and value.calls:
            power, index = value.calls[-1]
            if self.ctx.tf.qualify(prefix_name(power, index)) is None:
                break
            rest = flow(power)
            value = replace(rest, calls=value.calls + rest.calls)
        return value

    def namespace_handed(self, origin: Leaf) -> None:
        """The object escapes when its scope hands every local name to a call: ``locals()``,
        ``vars()``, ``exec``/``eval`` (which may read any of them), ``globals()`` at module
        level, after ``origin`` or in a loop with it (``td = Data(locals())`` then
        ``td.sess.run``: the uses through that dict are not seen)."""
        for word in sorted(_NAMESPACES):
            if word in _module_names(self.ctx):
                continue  # not the builtin
            for use in self.uses(word):
                power = use.leaf.parent
                if use.kind != "attribute" or power.children[0] is not use.leaf \
                        or not is_call_trailer(power.children[1]):
                    continue
                if word == "vars" and len(power.children[1].children) > 2:
                    continue  # vars(obj): that object's attributes
                if word == "globals" and self.scope.type != symbols.file_input:
                    continue  # a function's locals are not its module's globals
                if word in ("locals", "vars", "globals") and _only_looked_into(power):
                    continue  # 'x' in globals(), globals().get('x'): read, handed to no one
                if position(use.leaf) > position(origin) or _in_a_loop_with(use.leaf, origin, self.scope):
                    self.escapes(self.life.name, f"is handed over with every local name by {word}() "
                                 f"(line {use.leaf.lineno}), so its uses through it are not seen",
                                 to="elsewhere")
                    return

    def follow(self, name: str, found: list[Use], origin: Leaf) -> None:
        if name not in self.found:
            self.found[name] = found
            self.life.holders.setdefault(name, origin)
            self.pending.append((name, found, origin))

    def hold(self, target: Leaf, threads: Optional[Threads] = None) -> None:
        """``target`` (a NAME leaf) gets the object, or the ``threads`` using it."""
        if threads is not None and target.value not in self.thread_of:
            threads.names.append(target.value)
            self.thread_of[target.value] = threads
        self.follow(target.value, self.uses(target.value), target)

    def run(self) -> None:
        while self.pending and self.life.escape is None:
            name, found, origin = self.pending.pop(0)
            for use in found:
                if self.life.escape is not None:
                    return
                if use.leaf is not origin and position(use.leaf) < position(origin) and \
                        use.detail not in ("used in a nested function", "declared"):
                    self._earlier(name, use)
                    continue
                self.life.leaves.append(use.leaf)
                if use.leaf is not origin:
                    self._use(name, use)

    def subject(self, name: str) -> str:
        return name if name == self.life.name else f"{name} (built with {self.life.name})"

    def escapes(self, name: str, how: str, to: str = "result", captured: bool = False) -> None:
        if self.life.escape is None:
            self.life.escape, self.life.escape_to = f"{self.subject(name)} {how}", to
            self.life.captured = captured

    def _earlier(self, name: str, use: Use) -> None:
        """A use before the name gets the object is of another object (``agent = None``),
        unless a loop that makes the object runs it again later: then it may be a holder of
        the previous iteration's object, which is closed at the end of that iteration. (Uses
        in nested functions run when they are called, and ``global`` holds for the whole
        scope: those are never earlier.)"""
        made = self.life.holders[self.life.name]
        if use.kind != "bind" and _in_a_loop_with(use.leaf, made, self.scope):
            self.escapes(name, f"is used on line {use.leaf.lineno} before it gets "
                         f"{self.life.name} in the loop that makes it, so it may still hold "
                         "the one of the previous iteration")

    def _use(self, name: str, use: Use) -> None:
        if use.kind == "bind":
            if use.detail == "declared":
                self.escapes(name, "is declared global/nonlocal", to="elsewhere")
        elif use.kind == "attribute":
            self._attribute(name, use.leaf)
        elif use.kind == "escape" and use.detail == "used in a nested function":
            self.escapes(name, "is used in a nested function", captured=True)
        elif use.kind in ("argument", "escape"):
            self._value(name, use.leaf, self.flow(use.leaf))

    def _attribute(self, name: str, leaf: Leaf) -> None:
        """``name.x``, ``name.m(...)``: a value, unless a thread gets it (``target=w.work``), it
        starts a thread (``w.start()``) or keeps a session (``run = sess.run``)."""
        power = leaf.parent
        start = child_index(leaf)
        trailers = power.children[start + 1:]
        called = next((index for index, trailer in enumerate(trailers) if is_call_trailer(trailer)), None)
        method = attribute_name(trailers[0])
        if called is not None:
            if called == 1 and method == "start" and name != self.life.name \
                    and name not in self.thread_of:
                threads = Threads(power, f"a thread ({name}.start())", [name])
                self.life.threads.append(threads)
                self.thread_of[name] = threads
            elif called == 1 and method in KEEPS_SESSION and name == self.life.name:
                self.escapes(name, f"is kept by the callable {method}() returns")
            elif _enters(trailers, called, method):
                self.escapes(self.life.name, f"{ENTERED} ({_text(power)})", to="elsewhere")
            elif called == 1 and method == "as_default" and name == self.life.name \
                    and len(trailers) == 2:
                self._as_default(name, power)
            return
        if method is None or start != 0:
            return  # x[...]
        value = self.flow(power)
        if name == self.life.name:
            if self._thread_call(value):
                self._value(name, leaf, value)
            elif method in BOUND_METHODS and value.kind != "dropped":
                self.escapes(name, f"is kept by its bound method {method}")
        elif self._thread_call(value) or (value.calls and value.kind == "kept" and not value.contained):
            self._value(name, leaf, value)  # Thread(target=w.work), hook = Hook(agent.step)

    def _as_default(self, name: str, power: Node) -> None:
        """``name.as_default()`` outside ``with``: kept in a name, it is a holder (which
        ``__enter__()`` may enter); handed to a call, returned or stored, it escapes."""
        value = flow(power)
        if value.kind == "kept" and not value.contained and not value.calls:
            for target in value.targets:
                self.hold(target)
        elif value.kind != "dropped" or value.calls:
            self.escapes(name, f"{ENTERED} ({_text(value.calls[-1][0]) if value.calls else _text(power)})",
                         to="elsewhere")

    def _value(self, name: str, leaf: Leaf, value: Flow) -> None:
        """``name``'s object flows to ``value``: a thread, a holder, an escape or nothing."""
        self.capture = None
        found = self._thread_call(value)
        if found is not None:
            self._started(name, value, *found)
        elif name in self.thread_of:
            self._thread_value(name, value)
        elif value.kind == "dropped" and not value.calls:
            return
        elif value.kind == "kept" and not value.calls and name == self.life.name \
                and not self.as_parameter:
            self.escapes(name, "is assigned to another name")
        elif value.calls and self._released(name, leaf, value):
            return
        elif value.kind == "kept" and not value.contained:
            for target in value.targets:
                self.hold(target)
                if self.capture is not None or name in self.closures:
                    self.closures.add(target.value)
        elif value.kind == "escape" and value.detail == "returned":
            self._returned(name, value)
        elif value.kind != "dropped":
            own = value.into == "attribute" and value.store is not None \
                and value.store.value == self.as_parameter
            self.escapes(name, _how(value), to="elsewhere" if value.into and not own else "result")

    def _returned(self, name: str, value: Flow) -> None:
        """``name``'s object is returned: an escape for a parameter (the call's result keeps
        it) and for a closure or partial that captured it; else a use like any other."""
        if self.capture is not None:
            self.escapes(name, f"is captured by {self.capture}() (a closure or partial that runs "
                         "it later), whose result is returned", captured=True)
        elif name in self.closures:
            self.escapes(name, "is a closure or partial that runs the session later, and it "
                         "is returned", captured=True)
        elif self.as_parameter:
            self.escapes(name, _how(value), to="result")

    def _released(self, name: str, leaf: Leaf, value: Flow) -> bool:
        """True when a call on the way keeps nothing of the value (``print(x)``, a function
        of this file that does not keep its parameter); False when the result may keep it.
        A function of this file that stores it elsewhere or starts threads on it and does not
        join them makes it escape."""
        node: Base = leaf
        for power, index in value.calls:
            verdict, why = self._keeps(power, index, node)
            callee = prefix_name(power, index)
            if verdict == "threads":
                self.escapes(name, f"is used by threads that {callee}() starts and does not join",
                             to="elsewhere")
                return True
            if verdict == "elsewhere":
                self.escapes(name, f"is kept by {callee}(), where {why}", to="elsewhere")
                return True
            if verdict == "no":
                return True
            if verdict == "captured":
                self.capture = self.capture or callee
            node = power
        return value.kind == "dropped"

    def _keeps(self, power: Node, index: int, node: Base) -> tuple[str, str]:
        """Does the call ``power.children[:index + 1]`` keep the argument holding ``node``?
        ("yes", "") in its result or unknown, ("no", ""), ("elsewhere", why) for a function of
        this file that stores it in a global, on another object..., or ("threads", "") for one
        that starts threads on it."""
        callee = prefix_name(power, index)
        if callee is None:
            return "yes", ""
        qualified = self.ctx.tf.qualify(callee)
        receiver, _, method = callee.rpartition(".")
        builtin = "." not in callee and callee not in _module_names(self.ctx)
        if qualified in _TF_VALUES or (method in _SAVER_METHODS and receiver in _savers(self.ctx)) \
                or (builtin and callee in _BUILTIN_VALUES):
            return "no", ""
        if builtin and callee == "setattr":
            return "elsewhere", "setattr() stores it on an object"
        if _functools(self.ctx).resolve(callee) in _PARTIALS:
            return "captured", ""
        definition = _definitions(self.ctx).get(callee)
        if definition is not None and _thread_class(definition, self.ctx):
            return "threads", ""  # a Thread subclass: once started, its thread may run it
        if definition is None and qualified is None \
                and starts_threads(callee, _argument_of(power.children[index], node), self.ctx):
            return "threads", ""  # a function of another file (the repository facts)
        if definition is None and qualified is None \
                and only_runs(callee, _argument_of(power.children[index], node), self.ctx):
            return "no", ""  # a method of the repository that only runs it (the facts)
        if definition is None or qualified is not None:
            return "yes", ""
        return _parameter_keeps(definition, _argument_of(power.children[index], node), self.ctx)

    def _thread_call(self, value: Flow) -> Optional[tuple[int, str]]:
        """(position in ``value.calls``, what) of the first call that starts threads."""
        for place, (power, index) in enumerate(value.calls):
            what = _starts_threads(power, index, self.ctx)
            if what:
                return place, what
        return None

    def _started(self, name: str, value: Flow, place: int, what: str) -> None:
        """The object (through ``name``) is given to the thread call ``value.calls[place]``."""
        power, index = value.calls[place]
        threads = Threads(power, what)
        trailer = power.children[index]
        if what == "queue-runner threads":
            coordinator = find_argument(trailer, "coord", 1)
            threads.coordinator = _text(coordinator.value) if coordinator is not None else None
            threads.registered = threads.coordinator is not None
        else:
            threads.coordinator = _coordinator_in(trailer, self.scope, self.ctx)
        self.life.threads.append(threads)
        if index + 1 == len(power.children):
            self._thread_value(None, flow(power), threads)
        # else: Thread(...).start(): the thread is not kept, only a coordinator can join it

    def _thread_value(self, name: Optional[str], value: Flow, threads: Optional[Threads] = None) -> None:
        """Threads (``name``'s, or the new ``threads``) go to ``value``: a list that keeps them
        (``threads.append(t)``), names (``t = Thread(...)``, ``for t in threads``), a call
        (``coord.join(threads)``, ``t.join()``), or out of reach (returned, ``self.x = t``)."""
        if threads is None:
            assert name is not None, "a name or new threads"
            threads = self.thread_of[name]
        if value.kind == "stored" and value.into == "container" and value.store is not None:
            self.hold(value.store, threads)
        elif value.kind == "kept":
            for target in value.targets:
                self.hold(target, threads)
        elif value.kind != "dropped":
            self.escapes(self.life.name, f"is used by {threads.what} created on line "
                         f"{position(threads.start)[0]}, and the threads are {value.detail}",
                         to="elsewhere")

    def default_queue_runners(self, origin: Leaf) -> None:
        """``tf.train.start_queue_runners()`` with no session, after ``origin``: the default
        session's threads."""
        for node in node_pre_order(self.scope):
            if node.type != symbols.power or position(node) < position(origin):
                continue
            for index, trailer in enumerate(node.children):
                if is_call_trailer(trailer) and find_argument(trailer, "sess", 0) is None \
                        and self.ctx.tf.qualify(prefix_name(node, index)) in QUEUE_RUNNERS:
                    self._value(self.life.name, origin, Flow("dropped", calls=((node, index),)))

    def find_joins(self, threads: Threads) -> None:
        """Set ``threads.joined`` (or ``conditional``) from the joins of their names, and of
        their coordinator when it joins them; add those joins to the object's uses."""
        candidates = []
        for name in sorted(threads.names):
            for use in self.found.get(name, []):
                candidates.append(_join_of(use.leaf))
        if threads.registered and threads.coordinator and "." not in threads.coordinator:
            for use in self.uses(threads.coordinator):
                join = _join_of(use.leaf, receiver=True)
                candidates.append(join)
                if join is not None:
                    self.life.leaves.append(use.leaf)
        for join in candidates:
            if join is None or position(join) < position(threads.start):
                continue
            if _surely_after(join, threads):
                threads.joined = threads.joined or join
            else:
                threads.conditional = threads.conditional or join


def _enters(trailers: list[Base], called: int, method: Optional[str]) -> bool:
    """``x.__enter__()`` or ``x.as_default().__enter__()`` (``trailers`` follow ``x``)."""
    if called == 1 and method == "__enter__":
        return True
    return called == 1 and method == "as_default" and len(trailers) >= 4 \
        and attribute_name(trailers[2]) == "__enter__" \
        and is_call_trailer(trailers[3])


def _functools(ctx: FileContext) -> ImportNames:
    found = memo(ctx).get("lifetimes.functools")
    if found is None:
        found = memo(ctx)["lifetimes.functools"] = ImportNames(ctx.tree, root="functools")
    return found


def _how(value: Flow) -> str:
    """How a value that is not dropped nor simply kept leaves: ``is stored in a container
    (agents.append)``, or ``is passed to make_agent(), whose result is returned``."""
    if value.kind == "kept":
        how = f"stored in a container ({', '.join(target.value for target in value.targets)})"
    else:
        how = value.detail
    if value.calls and not (value.into == "container" and len(value.calls) == 1):
        power, index = value.calls[0]
        return f"is passed to {prefix_name(power, index) or 'a call'}(), whose result is {how}"
    return f"is {how}"


def _in_a_loop_with(leaf: Leaf, origin: Leaf, scope: Node) -> bool:
    """True when a loop of ``scope`` holds both ``origin`` and ``leaf``."""
    node = origin.parent
    while node is not None and node is not scope:
        if node.type in _LOOPS and block_child(leaf, node) is not None:
            return True
        node = node.parent
    return False


def _text(node: Base) -> str:
    return str(node).strip()


def _join_of(leaf: Leaf, receiver: bool = False) -> Optional[Node]:
    """The join call that ``leaf`` takes part in: ``leaf.join(...)`` or, unless ``receiver``,
    ``coord.join(leaf)`` / ``coord.join([leaf, ...])``; else None."""
    power = leaf.parent
    if power.type == symbols.power and power.children[0] is leaf and len(power.children) == 3 \
            and attribute_name(power.children[1]) == "join" \
            and is_call_trailer(power.children[2]):
        return power
    if receiver:
        return None
    calls = flow(leaf).calls
    if not calls:
        return None
    call, index = calls[0]
    callee = prefix_name(call, index)
    if callee is None or not callee.endswith(".join") or callee.count(".") != 1:
        return None
    return call if index + 1 == len(call.children) else None


def _surely_after(join: Node, threads: Threads) -> bool:
    """True when ``join`` runs whenever ``threads.start`` did: both in one block, the join's
    statement after the start's, and reached from it only through ``with`` bodies, ``finally``
    clauses, or a loop over the threads (``for t in threads: t.join()``)."""
    block = join
    while block.parent is not None and (
            block.type not in BLOCKS or block_child(threads.start, block) is None):
        block = block.parent
    joins, starts = block_child(join, block), block_child(threads.start, block)
    if joins is None or starts is None:
        return False  # not in one block: the walk up reached the module without one
    if child_index(joins) < child_index(starts) or (
            joins is starts and joins.type != symbols.simple_stmt):
        return False  # before the start, or in another clause of the statement that starts them
    node = join
    while node is not joins:
        parent = node.parent
        if parent.type in (symbols.if_stmt, symbols.while_stmt, symbols.funcdef, symbols.classdef):
            return False
        if parent.type == symbols.for_stmt and dotted_name(parent.children[3]) not in threads.names:
            return False
        if parent.type == symbols.try_stmt and not _in_finally(node, parent):
            return False
        node = parent
    return True


def _in_finally(clause: Base, statement: Node) -> bool:
    keywords = [leaf for leaf in statement.children if leaf.type == tokens.NAME]
    return keywords[-1].value == "finally" and statement.children[child_index(keywords[-1]) + 2] is clause


def _starts_threads(power: Node, index: int, ctx: FileContext) -> str:
    """What the call ``power.children[:index + 1]`` starts on its arguments, or ''."""
    callee = prefix_name(power, index)
    if callee is None:
        return ""
    if ctx.tf.qualify(callee) in QUEUE_RUNNERS:
        return "queue-runner threads"
    if _threading(ctx).resolve(callee) in _THREADS:
        return "a thread"
    receiver, _, method = callee.rpartition(".")
    if receiver and method in _THREAD_METHODS and ctx.tf.qualify(callee) is None:
        return "queue-runner threads"
    return ""


def _threading(ctx: FileContext) -> ImportNames:
    threading = memo(ctx).get("lifetimes.threading")
    if threading is None:
        threading = memo(ctx)["lifetimes.threading"] = ImportNames(ctx.tree, root="threading")
    return threading


def _thread_class(definition: Node, ctx: FileContext) -> bool:
    """Is ``definition`` a class with ``threading.Thread`` among its bases?"""
    if definition.type != symbols.classdef or len(definition.children) < 6:
        return False
    bases = definition.children[3]
    found = bases.children[::2] if bases.type == symbols.arglist else [bases]
    return any(_threading(ctx).resolve(dotted_name(base) or "") in _THREADS for base in found)


def _coordinator_in(trailer: Node, scope: Node, ctx: FileContext) -> Optional[str]:
    """The name of a ``tf.train.Coordinator`` among the arguments of a call, else any of the
    scope's (for the message: ``close it after coord.join(threads)``)."""
    coordinators = _coordinators(scope, ctx)
    for leaf in trailer.leaves():
        if leaf.type == tokens.NAME and leaf.value in coordinators:
            return leaf.value
    return min(coordinators) if coordinators else None


def _coordinators(scope: Node, ctx: FileContext) -> set[str]:
    """Names the scope binds to ``tf.train.Coordinator(...)``."""
    names = set()
    for node in scope_statements(scope):
        if node.type == symbols.expr_stmt and len(node.children) == 3 and node.children[0].type == tokens.NAME:
            value = node.children[2]
            if ctx.tf.qualify(callee_name(value)) == _COORDINATOR:
                names.add(node.children[0].value)
    return names


def _savers(ctx: FileContext) -> set[str]:
    """What the file assigns ``tf.train.Saver(...)`` to (``saver``, ``self.saver``)."""
    def compute(tree: Node) -> set[str]:
        found = set()
        for node in small_statements(tree):
            if node.type == symbols.expr_stmt and len(node.children) == 3:
                value = node.children[2]
                if ctx.tf.qualify(callee_name(value)) == _SAVER:
                    found.add(_text(node.children[0]))
        return found
    return per_node(ctx, "lifetimes.savers", ctx.tree, compute)


def _module_names(ctx: FileContext) -> set[str]:
    return per_node(ctx, "lifetimes.module_names", ctx.tree, bound_names)


def _definitions(ctx: FileContext) -> dict[str, Node]:
    """Module-level functions and classes defined once and never assigned or imported over."""
    def compute(tree: Node) -> dict[str, Node]:
        found: dict[str, list[Node]] = {}
        for child in tree.children:
            if child.type in (symbols.funcdef, symbols.classdef):
                found.setdefault(child.children[1].value, []).append(child)
        rebound: set[str] = set()
        for node in small_statements(tree):
            if node.type == symbols.expr_stmt:
                parts = node.children[:-1:2]
            elif node.type in (symbols.import_name, symbols.import_from):
                parts = [node]
            else:
                continue
            rebound.update(leaf.value for part in parts for leaf in part.leaves() if leaf.type == tokens.NAME)
        return {name: nodes[0] for name, nodes in found.items() if len(nodes) == 1 and name not in rebound}
    return per_node(ctx, "lifetimes.definitions", ctx.tree, compute)


def _argument_of(trailer: Node, node: Base) -> Optional[tuple[Optional[str], int]]:
    """(keyword, position) of the argument of the call ``trailer`` that holds ``node``:
    keyword None and its 0-based position for a positional one; None for ``*a``/``**k``."""
    positional = 0
    for argument in arguments(trailer):
        holds = block_child(node, argument.node) is not None or argument.node is node
        if argument.star:
            if holds:
                return None
            continue
        if holds:
            return (argument.keyword, positional if argument.keyword is None else -1)
        if argument.keyword is None:
            positional += 1
    return None


def _parameter_keeps(definition: Node, argument: Optional[tuple[Optional[str], int]],
                     ctx: FileContext) -> tuple[str, str]:
    """Does calling the function or class ``definition`` keep that argument? (see
    ``_Tracker._keeps``); worked out once per parameter."""
    function = definition if definition.type == symbols.funcdef else _init(definition)
    if function is None or argument is None or _is_generator(function):
        return "yes", ""
    keyword, position = argument
    names = parameters(function)
    owner = names[0][1].value if definition.type == symbols.classdef and names else "a call's result"
    leaf = _parameter(names[1:] if definition.type == symbols.classdef else names, keyword, position)
    if leaf is None:
        return "yes", ""

    def compute(parameter: Leaf) -> tuple[str, str]:
        memo(ctx).setdefault("lifetimes.keeps", {})[id(parameter)] = (parameter, ("yes", ""))  # recursion
        life = lifetime(function, parameter.value, uses(function, parameter.value), parameter, ctx,
                        as_parameter=owner)
        if life.escape is not None and life.escape_to == "result":
            return ("captured", "") if life.captured else ("yes", "")
        if life.escape is not None:
            return "elsewhere", life.escape
        if any(threads.joined is None for threads in life.threads):
            return "threads", ""
        return "no", ""
    return per_node(ctx, "lifetimes.keeps", leaf, compute)


def _init(classdef: Node) -> Optional[Node]:
    """The ``__init__`` of a class whose bases are plain names or none, else None."""
    suite = classdef.children[-1]
    for statement in suite.children if suite.type == symbols.suite else []:
        if statement.type == symbols.funcdef and definition_name(statement) == "__init__":
            return statement
    return None


def _is_generator(function: Node) -> bool:
    """A generator or a coroutine: its frame, which keeps the arguments, outlives the call."""
    if function.parent is not None and function.parent.type in (symbols.async_stmt, symbols.async_funcdef):
        return True
    return any(leaf.type == tokens.NAME and leaf.value == "yield"
               for node in scope_statements(function) if node.parent.type == symbols.simple_stmt
               for leaf in node.leaves())


def _parameter(parameters: list[tuple[str, Leaf]], keyword: Optional[str],
               position: int) -> Optional[Leaf]:
    """The parameter that receives an argument; None when ``*args``/``**kwargs`` does."""
    if keyword is not None:
        return next((leaf for kind, leaf in parameters if leaf.value == keyword and kind != "star"), None)
    positional = [leaf for kind, leaf in parameters if kind == "positional"]
    return positional[position] if position < len(positional) else None
