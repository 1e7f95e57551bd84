"""The one walk of a module's ``ast`` that the analysis hooks share (``ModuleIndex``): it must
give each analysis what its own ``ast.walk`` gave, or the repository's facts change."""

from __future__ import annotations

import ast
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.api._toolkit import (
    ModuleIndex,
    imported_names,
    module_ast,
    module_index,
    own_nodes,
)
from npu_codemod.codemods.modules import child_fields, statements

from support.sources import python_sources

TRAINER = textwrap.dedent('''\
    """Trains the classifier on the NPU."""
    import os
    import tensorflow as tf
    from .models import resnet as net
    from ..utils import flags


    class Trainer(object):
        def __init__(self, config=None, *, soft=True):
            self.config = config or tf.ConfigProto(allow_soft_placement=soft)

            def hook(step):
                return lambda loss: tf.summary.scalar("loss", loss)
            self.hook = hook

        async def evaluate(self, session):
            async with session.lock:
                return [value for value in await session.run(self.metrics)]


    def create_session(target=""):
        try:
            import horovod.tensorflow as hvd
        except ImportError:
            hvd = None
        else:
            hvd.init()
        finally:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        config = tf.ConfigProto()
        while not target:
            target = flags.FLAGS.master
        else:
            config.allow_soft_placement = True
        with tf.Graph().as_default():
            class Holder:
                session = tf.Session(target, config=config)
            return Holder.session


    match os.environ.get("MODE"):
        case "train":
            from tensorflow.compat.v1 import Session
        case _:
            Session = None
    ''')
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _ids(nodes):
    return [id(node) for node in nodes]


def test_nodes_of_a_type_are_those_ast_walk_finds_in_source_pre_order() -> None:
    tree = module_ast(TRAINER)
    index = module_index(tree)
    for kinds in [(ast.Call,), (ast.Assign,), FUNCTIONS, (ast.Import, ast.ImportFrom), (ast.stmt,)]:
        walked = [node for node in ast.walk(tree) if isinstance(node, kinds)]
        found = index.nodes(*kinds)
        assert sorted(_ids(found)) == sorted(_ids(walked)), kinds
        assert len(found) == len(walked), kinds
    calls = [ast.unparse(call.func) for call in index.nodes(ast.Call)]
    assert calls[:3] == ["tf.ConfigProto", "tf.summary.scalar", "session.run"]  # in source order
    assert index.nodes(ast.Load) == []  # expression contexts are left out
    assert module_index(tree) is index  # one walk per tree


def test_own_nodes_of_every_function_are_those_own_nodes_walks_to() -> None:
    tree = module_ast(TRAINER)
    index = module_index(tree)
    functions = [node for node in ast.walk(tree) if isinstance(node, FUNCTIONS)]
    assert [function.name for function in functions] == [
        "create_session", "__init__", "evaluate", "hook"]
    for function in functions:
        walked = list(_reference_own_nodes(function))
        assert _ids(own_nodes(function)) == _ids(walked), function.name
        assert _ids(index.own_nodes(function)) == _ids(walked), function.name
    init = functions[1]
    assert not any(isinstance(node, ast.Lambda) and node in index.own_nodes(init)
                   for node in ast.walk(init))  # the lambda is hook's, not __init__'s
    session = functions[0]
    assert sum(isinstance(node, ast.ClassDef) for node in index.own_nodes(session)) == 1
    assert not any(isinstance(node, ast.Call) and ast.unparse(node.func) == "tf.Session"
                   for node in index.own_nodes(session))  # inside the class: not its own


def test_a_function_of_another_tree_is_walked_on_its_own() -> None:
    index = ModuleIndex(ast.parse("x = 1\n"))
    function = ast.parse("def f():\n    return g(1)\n").body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [type(node).__name__ for node in index.own_nodes(function)] == [
        "Return", "Call", "Name", "Constant"]  # as the index's own: no expression contexts


def test_statements_are_every_statement_nested_in_blocks_handlers_and_cases() -> None:
    tree = module_ast(TRAINER)
    walked = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]
    found = list(statements(tree))
    assert sorted(_ids(found)) == sorted(_ids(walked)) and len(found) == len(walked)
    assert [type(node).__name__ for node in found[:4]] == ["Expr", "Import", "Import", "ImportFrom"]


def test_imported_names_are_computed_once_and_each_caller_gets_its_own_copy() -> None:
    tree = module_ast(TRAINER)
    names = imported_names(tree, "project/train/run.py")
    assert names == {
        "os": "os", "tf": "tensorflow", "net": "project.train.models.resnet",
        "flags": "project.utils.flags", "hvd": "horovod.tensorflow",
        "Session": "tensorflow.compat.v1.Session",
    }
    names.clear()
    assert imported_names(tree, "project/train/run.py")["tf"] == "tensorflow"
    assert imported_names(tree, "run.py")["tf"] == "tensorflow"
    assert "flags" not in imported_names(tree, "run.py")  # ``..`` above the root: unknown
    index = module_index(tree)
    assert index.imported_names("project/train/run.py") is index.imported_names("project/train/run.py")


def _reference_own_nodes(function: ast.AST):
    """Pre-order through ``ast.iter_child_nodes``, not into nested scopes, without expression
    contexts and operators: what both ``own_nodes`` must give, by another walk."""
    skipped = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(reversed([child for child in ast.iter_child_nodes(node)
                                   if not isinstance(child, skipped)]))


def _reference_index(tree: ast.AST):
    """Nodes by type and functions' own nodes by the walk the index made before it skipped the
    fields that hold no node (every field ``child_fields`` gives, each value tested)."""
    by_type: dict = {}
    own: dict = {}
    stack = [(tree, None)]
    while stack:
        node, owner = stack.pop()
        by_type.setdefault(type(node), []).append(node)
        if owner is not None:
            own[owner].append(node)
        body_owner = inner = None
        if isinstance(node, FUNCTIONS):
            own[node] = []
            body_owner = node
        elif not isinstance(node, (ast.ClassDef, ast.Lambda)):
            inner = owner
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                items_owner = body_owner if name == "body" and body_owner else inner
                stack.extend((item, items_owner) for item in reversed(value) if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append((value, inner))
    return by_type, own


def test_the_index_of_every_source_of_the_suite_is_that_of_a_walk_of_every_field() -> None:
    trees = [tree for tree in map(module_ast, python_sources().values()) if tree is not None]
    assert len(trees) > 450
    for tree in trees:
        _assert_index_is_a_walks(tree)


def _assert_index_is_a_walks(tree: ast.AST) -> ModuleIndex:
    """``tree``'s index, checked against the reference walk of every field."""
    index = ModuleIndex(tree)
    by_type, own = _reference_index(tree)
    assert {kind: _ids(nodes) for kind, nodes in index._by_type.items()} == \
        {kind: _ids(nodes) for kind, nodes in by_type.items()}
    assert {id(function): _ids(nodes) for function, nodes in index._own.items()} == \
        {id(function): _ids(nodes) for function, nodes in own.items()}
    return index


#: Every shape whose fields hold something else than nodes, or lists with gaps: dictionaries
#: with ``**`` entries, keyword-only parameters without defaults, ``global``/``nonlocal``, and
#: each pattern of ``match`` (singletons, stars, captures, ``**rest``, class keywords).
ODD_FIELDS = textwrap.dedent('''\
    import tensorflow as tf

    def build(a, *, b, c=1, **d):
        global STEP
        def inner():
            nonlocal a
            return {**d, "e": b, **{}}
        match tf.config:
            case None | True | False:
                pass
            case [1, *rest, 2] | [*_]:
                pass
            case {"k": 1, **others}:
                pass
            case tf.ConfigProto(device_count=count, allow_soft_placement=True) as config:
                return config, count
            case str(name) | (_ as name):
                return name
        return lambda x, *, y, z=2: {**x}
    ''')


def test_the_index_of_fields_that_hold_no_node_or_lists_with_gaps_is_that_of_a_walk() -> None:
    index = _assert_index_is_a_walks(ast.parse(ODD_FIELDS))
    assert len(index.nodes(ast.MatchSingleton)) == 4 and len(index.nodes(ast.MatchClass)) == 2


def test_the_imports_the_index_found_are_those_statements_gives_in_its_order() -> None:
    """``imported_names`` read from the index (a name imported twice as different things is
    left out, so the order of the statements shows in the result)."""
    trees = [tree for tree in map(module_ast, [TRAINER, ODD_FIELDS, *python_sources().values()]) if tree is not None]
    imports = (ast.Import, ast.ImportFrom)
    for tree in trees:
        walked = [node for node in statements(tree) if isinstance(node, imports)]
        assert _ids(ModuleIndex(tree).imports()) == _ids(walked)
    assert sum(len(ModuleIndex(tree).imports()) > 3 for tree in trees) > 100
    tree = ast.parse("import a as x; import b as y\nif c:\n    import d as x\nimport b as y\n")
    assert ModuleIndex(tree).imported_names("m.py") == {"y": "b"}


def test_the_statements_the_index_found_are_those_statements_gives_in_its_order() -> None:
    trees = [tree for tree in map(module_ast, [TRAINER, ODD_FIELDS, *python_sources().values()]) if tree is not None]
    for tree in trees:
        assert _ids(ModuleIndex(tree).statements()) == _ids(statements(tree))
    nested = ast.parse("a = 1; b = 2\nif c: d = 3\nelse:\n    try: e = 4\n    except E: f = 5\n")
    assert [type(node).__name__ for node in ModuleIndex(nested).statements()] == \
        ["Assign", "Assign", "If", "Assign", "Try", "Assign", "Assign"]


def test_the_returns_of_a_function_are_the_return_statements_among_its_own_nodes() -> None:
    trees = [tree for tree in map(module_ast, [TRAINER, *python_sources().values()]) if tree is not None]
    counted = 0
    for tree in trees:
        index = ModuleIndex(tree)
        for function in index.nodes(*FUNCTIONS):
            walked = [node for node in _reference_own_nodes(function) if isinstance(node, ast.Return)]
            assert _ids(index.returns(function)) == _ids(walked)
            assert index.returns(function) is index.returns(function)
            counted += len(walked)
    assert counted > 500
    other = ast.parse("def f(x):\n    def g():\n        return 1\n    return g\n").body[0]
    assert isinstance(other, ast.FunctionDef)
    assert [ast.unparse(node) for node in ModuleIndex(ast.parse("")).returns(other)] == ["return g"]


#: Returns where the innermost function by position is not the owner, or no function is: a
#: class body (``ast.parse`` accepts a ``return`` there), the module, one-line bodies, nested
#: and decorated functions, lambdas, methods after a nested class.
_RETURN_SHAPES = st.sampled_from([
    "def f(x):\n    class A:\n        return 1\n    return 2\n",
    "return 0\n",
    "class B:\n    return 3\n    def m(self): return 4; return 5\n",
    "async def g():\n    def h(): return (lambda: 6)\n    if x:\n        return h\n    else:\n        return\n",
    "@deco(lambda y: y)\ndef k(a=lambda: 7):\n    try:\n        return 8\n    finally:\n        pass\n",
    "def outer():\n    def inner():\n        class C:\n            def deep(self):\n                return 9\n"
    "        return C\n    return inner\n",
    "def one(): return 10\n",
    "x = [1 for _ in y]\n",
    "match v:\n    case 1:\n        def m2(): return 11\n",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_RETURN_SHAPES, max_size=8).map("".join))
def test_the_returns_read_by_position_are_those_among_own_nodes(text: str) -> None:
    tree = ast.parse(text)
    index = ModuleIndex(tree)
    for function in index.nodes(*FUNCTIONS):
        walked = [node for node in _reference_own_nodes(function) if isinstance(node, ast.Return)]
        assert _ids(index.returns(function)) == _ids(walked), text
