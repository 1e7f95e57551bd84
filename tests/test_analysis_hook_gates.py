"""The repository analysis's shortcuts (issue 32) give the facts of the long way: each hook
that skips work on a first look, or reads the shared ``ast`` instead of a fissix tree, is
compared with the way it went before, on every source the suite has and on generated modules
made of the shapes its first look is about."""

from __future__ import annotations

import ast
import re
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import accessors, built_models, module_training, tf_versions
from npu_codemod.codemods.engine import parse_module, unlink
from npu_codemod.codemods.modules import module_ast, module_index, own_nodes
from npu_codemod.codemods.names import (
    PUBLIC_NAMES,
    UNRESOLVED_ACCESSOR,
    ImportNames,
    ast_dotted_name,
    first_call,
    module_parts,
)
from npu_codemod.plugins.rules.audit import npu100_api_support as npu100
from npu_codemod.plugins.rules.sess_run import _config_functions, _session_functions
from npu_codemod.plugins.rules.sess_run import npu007_session_config as npu007
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement as npu008
from npu_codemod.plugins.rules.sess_run import npu010_session_close as npu010

from support.sources import python_sources


def _npu008_long_way(path: str, text: str) -> set[str]:
    """NPU008's facts as they were made: every argument's code read, internal modules' calls
    found on the fissix tree."""
    tree = module_ast(text)
    mentioned = re.search("soft|placement", text, re.I) is not None
    original = npu008._soft
    npu008._soft = _soft_long_way  # type: ignore[assignment]
    try:
        facts = {npu008.PASSED + item for item in npu008.passed_soft_placement(tree, mentioned)} if tree else set()
    finally:
        npu008._soft = original  # type: ignore[assignment]
    if _uses_tf_device_long_way(text):
        facts.add(npu008.FACT)
    return facts


def _soft_long_way(node: ast.AST) -> bool:
    return any(map(npu008._spells, ast.walk(node)))


def _uses_tf_device_long_way(text: str) -> bool:
    original = npu008._device_through_internal_modules
    npu008._device_through_internal_modules = _device_through_internal_modules_long_way  # type: ignore[assignment]
    try:
        return npu008.uses_tf_device(text)
    finally:
        npu008._device_through_internal_modules = original  # type: ignore[assignment]


def _device_through_internal_modules_long_way(text: str) -> bool:
    if not re.search(r"\btensorflow\.python\b", text) or "device" not in text:
        return False
    tree = parse_module(text)
    if tree is None:
        return False
    found = first_call(tree, ImportNames(tree), npu008.DEVICE) is not None
    unlink(tree)
    return found


def _accessor_facts_long_way(path: str, text: str) -> set[str]:
    """The ``accessor:`` facts with each function's nodes walked on their own."""
    tree = module_ast(text)
    if tree is None:
        return set()
    imports, module = accessors._tf_imports(tree), ".".join(module_parts(path))
    facts = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            target = accessors._returned_module(node, list(own_nodes(node)), imports)
            if target is not None and (target == UNRESOLVED_ACCESSOR or not accessors._required(node.args)):
                facts.add(f"{accessors.PREFIX}{module}.{node.name}={target}")
    return facts


HOOKS: dict[str, tuple[Callable[[str, str], object], Callable[[str, str], object]]] = {
    "NPU007": (npu007.npu_codemod_analyze_file, _config_functions.all_config_function_facts),
    "NPU008": (npu008.npu_codemod_analyze_file, _npu008_long_way),
    "NPU010": (npu010.npu_codemod_analyze_file, _session_functions.all_session_function_facts),
    "NPU100": (npu100.npu_codemod_analyze_file, _accessor_facts_long_way),
}


def _same(name: str, text: str) -> bool:
    hook, long_way = HOOKS[name]
    return set(hook("pkg/mod.py", text) or ()) == set(long_way("pkg/mod.py", text) or ())


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_every_source_of_the_suite_gets_the_facts_of_the_long_way(name: str) -> None:
    sources = python_sources()
    assert [where for where, text in sources.items() if not _same(name, text)] == []


def _imported_long_way(tree: ast.Module) -> frozenset[str]:
    """``module_training._imported`` with an ``ast.walk`` of every node."""
    return frozenset((alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names)


def test_the_names_imports_bind_are_those_of_a_walk_of_every_node() -> None:
    trees = [tree for tree in map(module_ast, python_sources().values()) if tree is not None]
    assert [tree for tree in trees if module_training._imported(tree) != _imported_long_way(tree)] == []
    assert sum(bool(_imported_long_way(tree)) for tree in trees) > 400


#: Lines of modules the first looks are about: internal modules' device calls (parenthesised,
#: decorated, aliased, in f-strings), soft placement spelled in names, strings (escaped, split
#: in two adjacent literals, non-ASCII names), functions that return configs and sessions
#: (forwarded, made, named in other scripts), and what makes a file unreadable to one parser.
_LINES = st.sampled_from([
    "import tensorflow as tf\n",
    "from utils import configs\n",
    "from utils import helpers\n",
    "def make_config():\n    return configs.build()\n",
    "def ｃonfig_maker():\n    return helpers.build()\n",
    "def build():\n    return helpers.get_session_config()\n",
    "def npu():\n    c = build()\n    o = c.graph_options.rewrite_options.custom_optimizers.add()\n"
    "    o.name = 'NpuOptimizer'\n    return c\n",
    "def plain():\n    return npu()\n",
    "s = tf.Session(config=plain())\n",
    "s = tf.Session('', None, make())\n",
    "def make():\n    return tf.Session()\n",
    "def pair():\n    s = tf.InteractiveSession()\n    return s, 1\n",
    "helpers.make_sess()\n",
    "def tpu():\n    from tensorflow.contrib import tpu as contrib_tpu\n    return contrib_tpu\n",
    "def pick(name):\n    return getattr(tf.contrib, name)\n",
    "def lazy(x=1):\n    def inner():\n        return tf.nn\n    return tf.contrib.slim\n",
    "helpers.make_ｓess()\n",
    "from tensorflow.python.framework import ops\n",
    "from tensorflow.python.framework.ops import device as on\n",
    "import tensorflow.python.framework.ops\n",
    "import tensorflow as tf\n",
    "from tensorflow.python.framework import ops as o\n",
    "dev = ops.device\n",
    "with ops.device('/cpu:0'):\n    x = 1\n",
    "with (ops).device(d):\n    pass\n",
    "with on('/gpu:1'):\n    pass\n",
    "@ops.device('/cpu:0')\ndef f():\n    pass\n",
    "y = ops.device\n",
    "z = f'{ops.device(1)}'\n",
    "tensorflow.python.framework.ops.device(None)\n",
    "ops.name_scope('device')\n",
    "make(False)\n",
    "make(True, soft=False)\n",
    "make(cfg.allow_soft_placement)\n",
    "make('\\x73oft')\n",
    "make('so' 'ft')\n",
    "make('pla' 'cement', x)\n",
    "make(ｓoft)\n",
    "make(SOFT)\n",
    "build(**kwargs)\n",
    "build(*args)\n",
    "match x:\n    case 1:\n        pass\n",
    "print 'py2'\n",
    "# tf.device('/cpu:0') soft\n",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINES, max_size=8).map("".join))
def test_generated_modules_get_the_facts_of_the_long_way(text: str) -> None:
    for name in HOOKS:
        assert _same(name, text), (name, text)


def test_a_soft_placement_spelled_only_by_escapes_or_adjacent_strings_is_read() -> None:
    for text in ("make('\\x73oft')\n", "make('so' 'ft')\n", "make(ｓoft)\n"):
        tree = ast.parse(text)
        assert npu008.spells_unseen(tree, text)
        assert npu008.passed_soft_placement(tree, False) == {"make:0"}


#: Files whose facts come from what a first look could miss: a name ``ast`` normalises out of
#: other characters (NFKC), NPU lines with no ``config`` spelled, soft placement in escapes.
EDGES = [
    ("NPU007", "from utils import helpers\n\n\ndef ｃonfig_maker():\n    return helpers.build()\n"),
    ("NPU007", "def npu():\n    c = build()\n    o = c.graph_options.rewrite_options.custom_optimizers.add()\n"
               "    o.name = 'NpuOptimizer'\n    return c\n"),
    ("NPU010", "from utils import helpers\n\nhelpers.make_ｓess()\n"),
    ("NPU008", "make('\\x73oft')\n"),
    ("NPU008", "from tensorflow.python.framework import ops\n\nwith ops.device('/cpu:0'):\n    x = 1\n"),
]


@pytest.mark.parametrize("name, text", EDGES)
def test_facts_only_the_long_way_would_see_from_the_text_are_found(name: str, text: str) -> None:
    hook, long_way = HOOKS[name]
    assert long_way("pkg/mod.py", text)
    assert _same(name, text)


def _returned_kind_long_way(function, index, kinds, imports, owner):  # type: ignore[no-untyped-def]
    """``built_models._returned_kind`` reading every return before it answers."""
    nodes = index.own_nodes(function)
    found = set()
    for node in [node for node in nodes if isinstance(node, ast.Return)]:
        values = built_models._assigned(node.value.id, nodes) if isinstance(node.value, ast.Name) else [node.value]
        found.update(built_models._made_kind(value, kinds, imports, owner) for value in values)
    return found.pop() if len(found) == 1 and None not in found else None


def _keras_idiom_long_way(index, bound):  # type: ignore[no-untyped-def]
    """``tf_versions._keras_idiom`` spelling every call's receiver and callee."""
    builds, training = False, None
    for call in index.nodes(ast.Call):
        func = call.func
        if not isinstance(func, ast.Attribute):
            builds = builds or tf_versions._is_model_call(ast_dotted_name(func), bound)
            continue
        receiver = ast_dotted_name(func.value) or ""
        if func.attr == "run" and "strategy" in receiver.rpartition(".")[2].lower():
            return tf_versions.Use(call.lineno, call.col_offset, f"{receiver}.run")
        if func.attr in tf_versions.KERAS_TRAINING and training is None:
            training = tf_versions.Use(call.lineno, call.col_offset, f"{receiver}.{func.attr}")
        builds = builds or tf_versions._is_model_call(ast_dotted_name(func), bound)
    return training if builds else None


def _model_and_signal_answers(text: str, long_way: bool) -> tuple[object, ...]:
    tree = module_ast(text)
    if tree is None:
        return ()
    originals = built_models._returned_kind, tf_versions._keras_idiom
    if long_way:
        built_models._returned_kind, tf_versions._keras_idiom = _returned_kind_long_way, _keras_idiom_long_way
    try:
        built_models.model_facts.cache_clear()
        return built_models.model_facts("pkg/mod.py", text), tf_versions._signals(tree, "pkg/mod.py")
    finally:
        built_models._returned_kind, tf_versions._keras_idiom = originals
        built_models.model_facts.cache_clear()


_KERAS_LINES = st.sampled_from([
    "import tensorflow as tf\n", "from tensorflow import keras\n", "from tensorflow.keras.models import Model\n",
    "from nets import Net\n", "import keras\n",
    "m = tf.keras.Sequential()\n", "m = keras.Model(i, o)\n", "m = Model(i, o)\n", "m = keras.models.load_model(p)\n",
    "m.compile(opt)\n", "m.fit(x)\n", "m.train_on_batch(x)\n", "strategy.run(step)\n", "self.strategy.run(f)\n",
    "def build():\n    return tf.keras.Sequential()\n", "def make():\n    m = Net()\n    return m\n",
    "def both(a):\n    if a:\n        return Model(i, o)\n    return tf.keras.Sequential()\n",
    "def none():\n    return\n", "def other():\n    x = 1\n    return x\n",
    "class Net(tf.keras.Model):\n    def get(self):\n        return Net()\n",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_KERAS_LINES, max_size=8).map("".join))
def test_generated_keras_modules_get_the_model_facts_and_signals_of_the_long_way(text: str) -> None:
    assert _model_and_signal_answers(text, False) == _model_and_signal_answers(text, True)


def test_every_source_gets_the_model_facts_and_signals_of_the_long_way() -> None:
    differ = [where for where, text in python_sources().items()
              if _model_and_signal_answers(text, False) != _model_and_signal_answers(text, True)]
    assert differ == []


def test_a_public_name_ends_as_the_internal_name_it_stands_for() -> None:
    """``_keras_idiom`` reads a call whose last name is no model maker's as no model maker."""
    makers = tuple("." + name for name in tf_versions._MODEL_LAST_NAMES)
    assert not [value for value in PUBLIC_NAMES.values() if value.endswith(makers)]


def _bound_names_long_way(index, bound):  # type: ignore[no-untyped-def]
    """``tf_versions._bound_names`` spelling out every outermost dotted name first."""
    attributes = index.nodes(ast.Attribute)
    inner = {id(node.value) for node in attributes if type(node.value) is ast.Attribute}
    found = []
    for node in attributes:
        spelled = ast_dotted_name(node) if id(node) not in inner else None
        if spelled is not None and spelled.partition(".")[0] in bound:
            found.append((node, spelled))
    return found + [(node, node.id) for node in index.nodes(ast.Name) if node.id in bound]


def test_the_names_a_file_binds_are_those_of_spelling_every_dotted_name() -> None:
    trees = [(tree, where) for where, tree in ((where, module_ast(text)) for where, text in python_sources().items())
             if tree is not None]
    checked = 0
    for tree, where in trees:
        index = module_index(tree)
        bound = {local: target for local, target in index.imported_names(where).items()
                 if target.partition(".")[0] in ("tensorflow", "tensorflow_estimator", "npu_device")}
        for names in (bound, {**bound, "self": "self", "np": "numpy"}):
            found = tf_versions._bound_names(index, names)
            assert [(id(node), spelled) for node, spelled in found] == \
                [(id(node), spelled) for node, spelled in _bound_names_long_way(index, names)], where
            checked += len(found)
    assert checked > 10_000
