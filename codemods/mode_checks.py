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
tf.executing_eagerly(): ... get_default_graph()``) and a ``disable_v2_behavior()`` in a
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
from typing import Iterator, Optional, Sequence, Union

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
    conditional expression alike. Version branch: both arms of an ``if`` inside a function
    whose test reads one of its parameters named ``*version*`` (``if tf_version == 1:``).
    The code after an ``if <x>.executing_eagerly():`` that returns, in the same block, is
    graph-only as well (:func:`_after_eager_returns`)."""
    graph: list[Span] = []
    for statement in index.nodes(ast.If):
        eager = _eager_test(statement.test)
        if eager is not None:
            graph.extend(_spans(statement.orelse if eager else statement.body))
    for function in [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]:
        graph.extend(_after_eager_returns(function.body))  # type: ignore[attr-defined]
    for expression in index.nodes(ast.IfExp):
        eager = _eager_test(expression.test)
        if eager is not None:
            graph.extend(_spans([expression.orelse if eager else expression.body]))
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


def _after_eager_returns(body: Sequence[ast.stmt]) -> list[Span]:
    """The rest of a block after an ``if <x>.executing_eagerly(): ... return`` that has no
    ``else`` (``if tf.executing_eagerly(): return eager_result`` then graph code): it runs in
    graph mode only, as an ``else`` would; blocks nested in the statements too (not those of
    nested functions or classes, which are walked on their own)."""
    found: list[Span] = []
    for number, statement in enumerate(body):
        if isinstance(statement, ast.If) and not statement.orelse and _eager_test(statement.test) is True \
                and isinstance(statement.body[-1], (ast.Return, ast.Raise)):
            found.extend(_spans(body[number + 1:]))
            break
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            found.extend(_after_eager_returns(getattr(statement, field, None) or []))
        for handler in getattr(statement, "handlers", None) or []:
            found.extend(_after_eager_returns(handler.body))
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
    :func:`mode_chosen_spans`, and the branch a version test sends TensorFlow 1 to: the
    ``else`` of ``if is_tfv2():``, of ``if compat.get_tf_behavior() == 2:`` (Model Maker's
    ``data_util.py``), of ``if tf.__version__.startswith("2"):``; the body of ``if not
    is_tfv2():`` or ``if tf_version == 1:``. An eager TF 2.x program never runs them. Not a
    C1/C2 question (``tf_versions``): a TF 1.x library keeps its graph code there."""
    found = list(mode_chosen_spans(index)[0])
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
    ``get_tf_behavior() == 2``, ``tf_version >= 2``, ``tf.__version__.startswith("2")``),
    False when exactly on TensorFlow 1 (``not is_tfv2()``, ``tf_version == 1``), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _tf2_test(test.operand)
        return None if inner is None else not inner
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
