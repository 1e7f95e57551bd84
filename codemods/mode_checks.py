"""Does a module ask which TensorFlow runs it: the version, or whether it executes eagerly.

The mixed-program check (``codemods/tf_programs``) refuses a program whose entry reaches eager
TF 2.x files and ``tf.compat.v1`` graph files, because ``npu_device.compat.enable_v1()`` switches
the whole process to graph mode and eager code breaks there. Library code of the repository
written for both modes asks first: Horovod's ``horovod/tensorflow/util.py`` branches on
``context.executing_eagerly()``, ``horovod/_keras`` compares ``tf.__version__``; its
``tf.function``/``GradientTape`` run in graph mode as well. Such a module does not make a program
mixed (``spec/rules-tf2.md``, "Mixed programs": the switch decides how ``tf.function`` runs).

A version that is only printed (``print(tf.__version__)``) is no check: the code does not adapt.

The same holds on the graph side (:func:`mode_chosen_spans`): ``tf.compat.v1`` graph code that
runs only when TensorFlow does not execute eagerly (TF-Agents' ``tf_agent.py``: ``if not
tf.executing_eagerly(): ... get_default_graph()``, TF Addons' ``decoder.py``: ``not
tf.executing_eagerly() and in_xla(tf.compat.v1.get_default_graph())``) and a ``disable_v2_behavior()`` in a
function's branch on a version its caller passes (Model Maker's ``setup_tf_behavior(tf_version=2)``)
switch nothing in an eager program: they are no C1/C2 signal (``codemods/tf_versions``).

And on the eager side (:func:`version_guarded_spans`): a TF 2.x-only name or idiom in code a
version test guards (tensorpack's ``train/tower.py``: ``if is_tfv2() and isinstance(opt,
tf.optimizers.Optimizer): ... else: opt.compute_gradients(...)``) runs only where TensorFlow 2
does; the module adapts to the version, so it is no T2/E signal and no eager file (else every TF
1.x program importing the library is refused as mixed or gets the eager adapter).
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterator, Optional, Sequence, Union

from .modules import ModuleIndex, module_index
from .text_search import AnyOf

#: Text every check spells: a module without it asks nothing (the ``ast`` is not read).
_MAY_CHECK = AnyOf(r"executing_eagerly\(", r"__version__", r"\.VERSION\b")
_VERSION_NAMES = frozenset({"__version__", "VERSION"})


def adapts_to_mode(text: str, tree: ast.Module) -> bool:
    """Does the module branch on the running TensorFlow: call ``executing_eagerly()`` (any
    receiver: ``tf``, ``tf.compat.v1``, ``context``), compare a ``__version__``/``VERSION``
    (``version.parse(tf.__version__) >= ...``, ``LooseVersion(tf.__version__) < ...``) or test
    its prefix (``tf.__version__.startswith("2")``)?"""
    if not _MAY_CHECK.found(text):
        return False
    index = module_index(tree)
    for call in index.nodes(ast.Call):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "executing_eagerly":
            return True
        if name == "startswith" and isinstance(func, ast.Attribute) and _is_version(func.value):
            return True
    return any(_is_version(node) for compare in index.nodes(ast.Compare) for node in ast.walk(compare))


def _is_version(node: ast.AST) -> bool:
    """``<x>.__version__``, ``<x>.VERSION`` (``tf.version.VERSION``) or a bare ``__version__``."""
    return (isinstance(node, ast.Attribute) and node.attr in _VERSION_NAMES) \
        or (isinstance(node, ast.Name) and node.id == "__version__")


#: A run of statements, from its first one's start to its last one's end (line, column).
Span = tuple[tuple[int, int], tuple[int, int]]


def mode_chosen_spans(index: ModuleIndex) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The branches of the module that run in graph mode only, and those a function's caller
    chooses by a version argument: (graph-only spans, version-branch spans). Graph-only: the
    body of ``if not <x>.executing_eagerly():`` (or of an ``and`` with that conjunct), the
    ``else`` of ``if <x>.executing_eagerly():`` (or of an ``or`` with it), either arm of a
    conditional expression alike, and the operands an ``and``/``or`` evaluates after such a
    test (:func:`_after_mode_operand`). Version branch: both arms of an ``if`` inside a function
    whose test reads one of its parameters named ``*version*`` (``if tf_version == 1:``).
    The code after an ``if <x>.executing_eagerly():`` that returns, in the same block, is
    graph-only as well (:func:`_after_eager_returns`)."""
    graph: list[Span] = []
    for statement in index.nodes(ast.If):
        eager = _eager_test(statement.test)
        if eager is not None:
            graph.extend(_spans(statement.orelse if eager else statement.body))
    graph.extend(_functions_after_returns(index, _eager_test))
    for expression in index.nodes(ast.IfExp):
        eager = _eager_test(expression.test)
        if eager is not None:
            graph.extend(_spans([expression.orelse if eager else expression.body]))
    for operation in index.nodes(ast.BoolOp):
        graph.extend(_spans(_after_mode_operand(operation)))
    chosen: list[Span] = []
    functions: list[Union[ast.FunctionDef, ast.AsyncFunctionDef]] = [
        *index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    for function in functions:
        versions = {arg.arg for arg in _parameters(function.args) if "version" in arg.arg.lower()}
        if not versions:
            continue
        for node in index.own_nodes(function):
            if isinstance(node, ast.If) and any(isinstance(name, ast.Name) and name.id in versions
                                                for name in ast.walk(node.test)):
                chosen.extend(_spans(node.body) + _spans(node.orelse))
    return tuple(graph), tuple(chosen)


def _after_mode_operand(operation: ast.BoolOp) -> Sequence[ast.expr]:
    """The operands of a boolean operation evaluated only in graph mode: those after a ``not
    <x>.executing_eagerly()`` of an ``and`` (TF Addons' ``decoder.py``: ``is_xla = not
    tf.executing_eagerly() and in_xla(tf.compat.v1.get_default_graph())``), after an
    ``<x>.executing_eagerly()`` of an ``or``. Short-circuiting makes it the ``if`` form spelled
    as an expression: the same guard."""
    wanted = isinstance(operation.op, ast.Or)
    for number, value in enumerate(operation.values[:-1]):
        if _eager_test(value) is wanted:
            return operation.values[number + 1:]
    return ()


def _functions_after_returns(index: ModuleIndex, test: Callable[[ast.expr], Optional[bool]]) -> list[Span]:
    """:func:`_after_returns` of every function's body; no function is walked unless an ``if``
    of the module could start such a rest (no ``else``, a last ``return`` or ``raise``, a
    ``test`` that says True): most modules have none."""
    if not any(not node.orelse and isinstance(node.body[-1], (ast.Return, ast.Raise)) and test(node.test) is True
               for node in index.nodes(ast.If)):
        return []
    found: list[Span] = []
    for function in [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]:
        found.extend(_after_returns(function.body, test))  # type: ignore[attr-defined]
    return found


def _after_returns(body: Sequence[ast.stmt], test: Callable[[ast.expr], Optional[bool]]) -> list[Span]:
    """The rest of a block after an ``if`` that has no ``else``, ends in ``return`` (or
    ``raise``) and whose ``test`` says True (``if tf.executing_eagerly(): return eager_result``
    then graph code; ``if tf.__version__ >= "2.0.0": return compat_result`` then TF 1.x code):
    it runs only where that test is false, as an ``else`` would; blocks nested in the statements
    too (not those of nested functions or classes, which are walked on their own)."""
    found: list[Span] = []
    for number, statement in enumerate(body):
        if isinstance(statement, ast.If) and not statement.orelse and test(statement.test) is True \
                and isinstance(statement.body[-1], (ast.Return, ast.Raise)):
            found.extend(_spans(body[number + 1:]))
            break
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            found.extend(_after_returns(getattr(statement, field, None) or [], test))
        for handler in getattr(statement, "handlers", None) or []:
            found.extend(_after_returns(handler.body, test))
    return found


#: A name (or attribute) that says which TensorFlow runs: ``is_tfv2``, ``is_tf2``, ``tf2_enabled``,
#: ``TF2``, ``IS_TF2``, ``tf2`` (``tensorflow.python.tf2.enabled()``), ``get_tf_version_tuple``.
_VERSION_WORD = re.compile(r"(?:^|_)tfv?2(?:_|$)|tf_?version", re.IGNORECASE)


def version_guarded_spans(index: ModuleIndex) -> tuple[Span, ...]:
    """The code a version test guards: each ``if`` statement (its test, its body and its
    ``else``), conditional expression and boolean operation one of whose tests asks which
    TensorFlow runs (:func:`is_version_test`). A TF 2.x name there runs only where TensorFlow 2
    does (``is_tfv2() and isinstance(opt, tf.optimizers.Optimizer)``): version-adaptive code."""
    found: list[Span] = []
    for statement in index.nodes(ast.If):
        if is_version_test(statement.test):
            found.extend(_spans([statement]))
    for expression in index.nodes(ast.IfExp):
        if is_version_test(expression.test):
            found.extend(_spans([expression]))
    for operation in index.nodes(ast.BoolOp):
        if any(is_version_test(value) for value in operation.values):
            found.extend(_spans([operation]))
    return tuple(found)


def is_version_test(test: ast.expr) -> bool:
    """Does ``test`` ask which TensorFlow runs: call ``executing_eagerly()``, read a
    ``__version__``/``VERSION`` (``LooseVersion(tf.__version__) >= ...``) or a name or
    attribute spelled like a version check (``is_tfv2()``, ``tf2_enabled()``, ``TF2``,
    ``get_tf_version_tuple()``)?"""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and _is_eager_call(node):
            return True
        if _is_version(node):
            return True
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name and _VERSION_WORD.search(name):
            return True
    return False


#: A name (or attribute) that says TensorFlow 2 runs when true: ``is_tfv2``, ``tf2_enabled``, ``TF2``.
_TF2_WORD = re.compile(r"(?:^|_)tfv?2(?:_|$)", re.IGNORECASE)
#: A name whose value is the running TensorFlow's major version or behaviour (``get_tf_behavior()``,
#: ``tf_version``), compared with ``1`` or ``2``.
_MAJOR_WORD = re.compile(r"tf_?(?:version|behaviou?r)", re.IGNORECASE)


def tf1_only_spans(index: ModuleIndex) -> tuple[Span, ...]:
    """The branches of the module that run only on TensorFlow 1.x (or in graph mode): those of
    :func:`mode_chosen_spans` and of :func:`tf1_branch_spans`. An eager TF 2.x program never
    runs them. Not a C1/C2 question (``tf_versions``): a TF 1.x library keeps its graph code
    there."""
    return mode_chosen_spans(index)[0] + tf1_branch_spans(index)


def tf1_branch_spans(index: ModuleIndex) -> tuple[Span, ...]:
    """The branches a version test sends TensorFlow 1 to: the ``else`` of ``if is_tfv2():``,
    of ``if compat.get_tf_behavior() == 2:`` (Model Maker's ``data_util.py``), of ``if
    tf.__version__.startswith("2"):``, of ``if tf.__version__ >= "2.0.0":`` (DeepCTR's
    ``estimator/feature_column.py``) and the code after it when its body returns (DeepCTR's
    ``estimator/inputs.py``); the body of ``if not is_tfv2():`` or ``if tf_version == 1:``.
    TensorFlow 2 never runs them, in either mode: a TF 1.x-only name there is no T1 signal
    (``tf_versions``: the module adapts to the version, as under :func:`version_guarded_spans`)."""
    found: list[Span] = []
    found.extend(_functions_after_returns(index, _tf2_test))
    for statement in index.nodes(ast.If):
        tf2 = _tf2_test(statement.test)
        if tf2 is not None:
            found.extend(_spans(statement.orelse if tf2 else statement.body))
    for expression in index.nodes(ast.IfExp):
        tf2 = _tf2_test(expression.test)
        if tf2 is not None:
            found.extend(_spans([expression.orelse if tf2 else expression.body]))
    return tuple(found)


def _tf2_test(test: ast.expr) -> Optional[bool]:
    """True when ``test`` is true exactly on TensorFlow 2 (``is_tfv2()``, ``TF2``,
    ``get_tf_behavior() == 2``, ``tf_version >= 2``, ``tf.__version__.startswith("2")``,
    ``tf.__version__ >= "2.0.0"``), False when exactly on TensorFlow 1 (``not is_tfv2()``,
    ``tf_version == 1``, ``LooseVersion(tf.__version__) < LooseVersion("2.0")``), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _tf2_test(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _reads_version(test.left, test.comparators[0]):
        return _version_compare(test.left, test.ops[0], test.comparators[0])
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_major(test.left):
        right, op = test.comparators[0], test.ops[0]
        value = right.value if isinstance(right, ast.Constant) else None
        if value in (1, 2, "1", "2") and isinstance(op, (ast.Eq, ast.NotEq)):
            return (str(value) == "2") == isinstance(op, ast.Eq)
        if value in (2, "2") and isinstance(op, ast.GtE) or value in (1, "1") and isinstance(op, ast.Gt):
            return True
        return None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and _is_version(test.func.value) and len(test.args) == 1 and isinstance(test.args[0], ast.Constant):
        return {"2": True, "1": False}.get(str(test.args[0].value))
    node = test.func if isinstance(test, ast.Call) and not test.args and not test.keywords else test
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return True if name and _TF2_WORD.search(name) else None


#: A comparison read the other way round (``"2.0" <= tf.__version__``).
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.GtE: ast.LtE, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def _reads_version(left: ast.expr, right: ast.expr) -> bool:
    """Does exactly one side of a comparison read the running version (``tf.__version__``,
    ``tf.version.VERSION``, in any expression: ``int(tf.__version__[0])``)?"""
    return any(map(_is_version, ast.walk(left))) != any(map(_is_version, ast.walk(right)))


def _version_compare(left: ast.expr, op: ast.cmpop, right: ast.expr) -> Optional[bool]:
    """:func:`_tf2_test` of a comparison of the running version with a constant: ``>= "2.0.0"``
    (``"2"``, ``2``, ``LooseVersion("2.0")``, ``version.parse("2.0")``) is True, ``<`` it False;
    its major version (``tf.__version__[0]``, ``int(tf.__version__.split(".")[0])``) ``== 2``
    or ``> 1`` True, ``== 1`` or ``<= 1`` False. Other thresholds (``>= "2.4"``) split TF 2.x:
    None."""
    if not any(map(_is_version, ast.walk(left))):
        flipped = _FLIPPED.get(type(op))
        if flipped is None:
            return None
        left, right, op = right, left, flipped()
    value = _constant_version(right)
    if value is None:
        return None
    major, whole = value
    kind = type(op)
    if whole and major == 2 and kind in (ast.GtE, ast.Lt):
        return kind is ast.GtE
    if not _is_major_part(left) or "." in str(_constant(right)):
        return None  # the whole version is compared: only an order with "2.0" says
    if major in (1, 2) and kind in (ast.Eq, ast.NotEq):
        return (major == 2) == (kind is ast.Eq)
    if major == 1 and kind in (ast.Gt, ast.LtE):
        return kind is ast.Gt
    return None


def _is_major_part(node: ast.expr) -> bool:
    """Is ``node`` a part of the version string (``tf.__version__[0]``,
    ``tf.__version__.split(".")[0]``) or its ``int(...)``?"""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Subscript)


def _constant_version(node: ast.expr) -> Optional[tuple[int, bool]]:
    """The major version a constant spells (``"2.0.0"``, ``2``, ``LooseVersion("2.0")``) and
    whether its other parts are all zero, or None."""
    parts = str(_constant(node)).split(".")
    if not parts[0].isdigit():
        return None
    return int(parts[0]), all(part.strip("0") == "" for part in parts[1:])


def _constant(node: ast.expr) -> object:
    """The value of a constant, or of the one constant argument of a call (``LooseVersion("2.0")``)."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    return node.value if isinstance(node, ast.Constant) and not isinstance(node.value, bool) else None


def attribute_fallback_spans(index: ModuleIndex) -> tuple[Span, ...]:
    """The code of each ``try`` with an ``except AttributeError`` (alone or in a tuple): its body
    and that handler's (DeepCTR's ``try: tf.log(x) except AttributeError: tf.math.log(x)``, or
    the other way round). One version's name is tried, the other's is the fallback: the module
    adapts to the version, so neither is a T1/T2 signal (``tf_versions``)."""
    found: list[Span] = []
    for statement in index.nodes(ast.Try):
        handlers = [handler for handler in statement.handlers if _catches_attribute_error(handler.type)]
        if handlers:
            found.extend(_spans(statement.body))
            for handler in handlers:
                found.extend(_spans(handler.body))
    return tuple(found)


def _catches_attribute_error(caught: Optional[ast.expr]) -> bool:
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
    return any(isinstance(name, ast.Name) and name.id == "AttributeError" for name in names)


def _is_major(node: ast.expr) -> bool:
    """Is ``node`` a name, attribute or argument-less call whose value is TensorFlow's major
    version or behaviour (``get_tf_behavior()``, ``tf_version``, ``self.tf_version``)?"""
    node = node.func if isinstance(node, ast.Call) and not node.args and not node.keywords else node
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return bool(name) and _MAJOR_WORD.search(name) is not None


def within(spans: Sequence[Span], line: int, column: int) -> bool:
    """Is the position (``line``, ``column``) inside one of ``spans``?"""
    return any(start <= (line, column) < end for start, end in spans)


def _eager_test(test: ast.expr) -> Optional[bool]:
    """Which way ``test`` says TensorFlow executes eagerly when it is true: True for
    ``executing_eagerly()`` (alone or in an ``or``: its ``else`` is graph mode), False for
    ``not executing_eagerly()`` (alone or in an ``and``: its body is), None for any other test."""
    if _is_eager_call(test):
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_eager_call(test.operand):
        return False
    if isinstance(test, ast.BoolOp):
        wanted = isinstance(test.op, ast.Or)
        if any(_eager_test(value) is wanted for value in test.values):
            return wanted
    return None


def _is_eager_call(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "executing_eagerly") \
        or (isinstance(func, ast.Name) and func.id == "executing_eagerly")


def _spans(nodes: Sequence[Union[ast.stmt, ast.expr]]) -> list[Span]:
    """The span of a branch (a run of statements, or one expression), or none for no branch."""
    if not nodes:
        return []
    first, last = nodes[0], nodes[-1]
    return [((first.lineno, first.col_offset), (last.end_lineno or last.lineno, last.end_col_offset or 0))]


def _parameters(args: ast.arguments) -> Iterator[ast.arg]:
    yield from args.posonlyargs
    yield from args.args
    yield from args.kwonlyargs
