"""The repository analysis's shortcuts (issue 32) give the facts of the long way: each hook
that skips work on a first look, or reads the shared ``ast`` instead of a fissix tree, is
compared with the way it went before, on every source the suite has and on generated modules
made of the shapes its first look is about."""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from typing import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods import (
    accessors,
    built_models,
    module_training,
    tf2_dataset_facts,
    tf2_dataset_uses,
    tf_versions,
    training_calls,
)
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
from npu_codemod.plugins.rules.sess_run import (
    _closing_methods,
    _config_functions,
    _method_results,
    _pipeline_uses,
    _session_functions,
    _shared_iterators,
    _thread_functions,
)
from npu_codemod.plugins.rules.sess_run import npu002_drop_remainder as npu002
from npu_codemod.plugins.rules.sess_run import npu007_session_config as npu007
from npu_codemod.plugins.rules.sess_run import npu008_soft_placement as npu008
from npu_codemod.plugins.rules.sess_run import npu010_session_close as npu010
from npu_codemod.plugins.rules.tf2 import npu064_drop_remainder as npu064

from support.sources import python_sources


def _npu008_long_way(path: str, text: str) -> set[str]:
    """NPU008's facts as they were made: every argument's code read, internal modules' calls
    found on the fissix tree."""
    tree = module_ast(text)
    mentioned = re.search("soft|placement", text, re.I) is not None
    facts = {npu008.PASSED + item for item in _passed_soft_placement_long_way(tree, mentioned)} if tree else set()
    if _uses_tf_device_long_way(text):
        facts.add(npu008.FACT)
    return facts


def _passed_soft_placement_long_way(tree: ast.AST, mentioned: bool) -> set[str]:
    """``npu008.passed_soft_placement`` as it was: each argument of each call of an
    ``ast.walk`` looked at on its own, its whole code read."""
    found = set()
    for call in [node for node in ast.walk(tree) if isinstance(node, ast.Call)]:
        name = npu008._callee(call)
        if name is None or name == "ConfigProto":
            continue
        for keyword in call.keywords:
            if keyword.arg is None and mentioned:
                found.add(f"{name}:**")
            elif keyword.arg and "soft" in keyword.arg.lower() and not _literally(keyword.value, True):
                found.add(f"{name}:{keyword.arg}")
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                found.add(f"{name}:*")
                break
            if not _literally(argument, True) and (_literally(argument, False) or _soft_long_way(argument)):
                found.add(f"{name}:{index}")
    return found


def _literally(node: ast.AST, value: bool) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _soft_long_way(node: ast.AST) -> bool:
    return any(map(npu008._spells, ast.walk(node)))


def _uses_tf_device_long_way(text: str) -> bool:
    """One regular expression for every spelling, tried at each line's start."""
    if "device" not in text:
        return False
    aliases = {match.group(1) or "tensorflow" for match in npu008._ALIAS.finditer(text)}
    calls = [rf"\b(?:{'|'.join(map(re.escape, sorted(aliases)))})(?:\.compat\.v1)?\.device"] if aliases else []
    imported = sorted(npu008._device_names(text))
    if imported:
        calls.append(rf"(?<![\w.])(?:{'|'.join(map(re.escape, imported))})")
    if calls and re.search(rf"^[^#\n]*(?:{'|'.join(calls)})[ \t]*\(", text, re.M):
        return True
    return _device_through_internal_modules_long_way(text)


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


def _pipeline_uses_long_way(path: str, text: str) -> set[str]:
    """NPU002's facts as they were made: every call looked up with the function it sits in,
    each function's own nodes read for its calls; the module's own, when it defines a function."""
    tree = module_ast(text)
    if tree is None:
        return set()
    defines = any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.iter_child_nodes(tree))
    return _pipeline_use_facts_long_way(path, tree) | (
        {_pipeline_uses.MODULE + ".".join(module_parts(path))} if defines and not path.endswith("__init__.py") else set())


def _pipeline_use_facts_long_way(path: str, tree: ast.Module) -> set[str]:
    index = module_index(tree)
    imports = {name: target for name, target in index.imported_names(path).items()
               if not target.startswith(_pipeline_uses._LIBRARIES)
               and target.partition(".")[0] not in _pipeline_uses._STANDARD}
    if not imports:
        return set()
    functions = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    owned = {id(node): function for function in functions for node in index.own_nodes(function)
             if isinstance(node, ast.Call)}
    package = ".".join(module_parts(path)[:-1])
    first: dict[tuple[str, str], int] = {}

    def add(target: str, said: str, line: int) -> None:
        if target:
            first[target, said] = min(line, first.get((target, said), line))

    for call in index.nodes(ast.Call):
        function = owned.get(id(call))
        around = _pipeline_uses._verdict(function.name) if function is not None else None
        callee = ast_dotted_name(call.func) or ""
        direct = _pipeline_uses._imported(callee, imports)
        said = (around or _pipeline_uses._arguments_say(call)) if direct else None
        if direct and said:
            add(direct, said, call.lineno)
        verdict = _pipeline_uses._verdict(callee)
        for name, value in [*((None, value) for value in call.args), *((k.arg, k.value) for k in call.keywords)]:
            said = (_pipeline_uses._verdict(name) if name else None) or verdict
            if said:
                for node in _pipeline_uses._names(value):
                    add(_pipeline_uses._imported(ast_dotted_name(node) or "", imports), said,
                        getattr(node, "lineno", 0))
    for target, said, line in _bound_uses_long_way(tree, index, imports):
        add(target, said, line)
    facts = {f"{_pipeline_uses.PREFIX}{package}|{target}|{said}|{path}:{line}"
             for (target, said), line in first.items()}
    scopes = [_module_level_long_way(tree), *(index.own_nodes(function) for function in functions)]
    facts |= {f"{_pipeline_uses.PREFIX}{package}|{_pipeline_uses._imported(spelled, imports)}|{verdict}"
              for spelled, verdict in _shared_iterators.iterator_uses(tree, scopes, imports)}
    return facts


def _bound_uses_long_way(tree: ast.Module, index, imports):  # type: ignore[no-untyped-def]
    """``_pipeline_uses._bound_uses`` as it was: every node of every scope looked at."""
    functions = [*index.nodes(ast.FunctionDef), *index.nodes(ast.AsyncFunctionDef)]
    for nodes in [_module_level_long_way(tree), *(index.own_nodes(function) for function in functions)]:
        for node in nodes:
            if type(node) is not ast.Assign or not isinstance(node.value, ast.Call):
                continue
            target = _pipeline_uses._imported(ast_dotted_name(node.value.func) or "", imports)
            names = [name for name in map(ast_dotted_name, node.targets) if name]
            if not target or not names:
                continue
            said = next(filter(None, map(_pipeline_uses._verdict, names)), None)
            if said:
                yield target, said, node.lineno
                continue
            passed = _pipeline_uses._passed_names(nodes)
            for name in names:
                yield from ((target, verdict, line) for verdict, line in passed.get(name, ()))


def _module_level_long_way(tree: ast.Module) -> list[ast.AST]:
    """Every node outside functions, classes and lambdas, found through a map of parents."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def outside(node: ast.AST) -> bool:
        parent = parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                return False
            parent = parents.get(id(parent))
        return True

    return [node for node in ast.walk(tree) if node is not tree and outside(node)]


def _config_function_facts_long_way(path: str, text: str) -> set[str]:
    """NPU007's facts as they were made: what every function returns read before any is asked
    about, each return's place looked at before its value."""
    original = _config_functions._ReturnsTable
    _config_functions._ReturnsTable = _EagerReturnsTable  # type: ignore[assignment, misc]
    try:
        return _config_functions.all_config_function_facts(path, text)
    finally:
        _config_functions._ReturnsTable = original  # type: ignore[misc]


class _EagerReturnsTable(dict):  # type: ignore[type-arg]
    def __init__(self, index, functions, imports):  # type: ignore[no-untyped-def]
        super().__init__({name: _config_returns_long_way(function, index.own_nodes(function), functions.keys(), imports)
                          for name, function in functions.items()})


def _config_returns_long_way(function, nodes, functions, imports):  # type: ignore[no-untyped-def]
    returns = [node for node in nodes if isinstance(node, ast.Return)]
    if not returns or any(node.value is None or not _config_functions._insertable(node, function, nodes)
                          for node in returns):
        return None
    result = _config_functions._Returns()
    configured = _config_functions._configured_names(nodes)
    for node in returns:
        value = node.value
        if isinstance(value, ast.Name) and value.id in configured:
            continue
        if not isinstance(value, (ast.Name, ast.Call)):
            return None
        for source in _config_functions._assigned(value.id, nodes) if isinstance(value, ast.Name) else [value]:
            _config_functions._add_source(result, source, functions, imports)
    return result


@contextmanager
def _patched(owner: object, **values: object) -> Iterator[None]:
    kept = {name: getattr(owner, name) for name in values}
    for name, value in values.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in kept.items():
            setattr(owner, name, value)


def _repository_function_long_way(datasets, call, heads):  # type: ignore[no-untyped-def]
    """``tf2_dataset_facts._repository_function`` as it was: every callee qualified."""
    target = datasets.qualify(call.func)
    if target is None or target.partition(".")[0] in tf2_dataset_facts._LIBRARIES | tf2_dataset_facts._STANDARD:
        return None
    return target


def _dataset_facts_long_way(path: str, text: str) -> set[str]:
    """NPU064's facts as they were made: a walk of the tree for whether the file trains, each
    scope's statements read for its assignments, every callee qualified."""
    def assignments(self, scope):  # type: ignore[no-untyped-def]
        return (node for node in self.datasets.statements(scope) if isinstance(node, ast.Assign))

    with _patched(tf2_dataset_facts, file_trains=lambda datasets: tf2_dataset_uses._trains(datasets.tree),
                  _repository_function=_repository_function_long_way), \
            _patched(tf2_dataset_facts._Origins, assignments=assignments):
        return tf2_dataset_facts.dataset_function_facts(path, text) | tf2_dataset_facts.dataset_use_facts(path, text)


def _calls_fact(path: str, text: str) -> set[str]:
    """The ``tf2-calls:`` fact of a TF file, whose module index its signals built."""
    return set(filter(None, [training_calls.calls_fact(path, text, indexed=True)]))


def _calls_fact_long_way(path: str, text: str) -> set[str]:
    """The ``tf2-calls:`` fact as it was made: every module-level statement walked whole, the
    imports found by a walk of the statements."""
    with _patched(training_calls, _lines_naming=lambda text, names: None):
        return set(filter(None, [training_calls.calls_fact(path, text)]))


HOOKS: dict[str, tuple[Callable[[str, str], object], Callable[[str, str], object]]] = {
    "NPU002": (npu002.npu_codemod_analyze_file, _pipeline_uses_long_way),
    "NPU064": (npu064.npu_codemod_analyze_file, _dataset_facts_long_way),
    "calls": (_calls_fact, _calls_fact_long_way),
    "NPU007": (npu007.npu_codemod_analyze_file, _config_function_facts_long_way),
    "NPU008": (npu008.npu_codemod_analyze_file, _npu008_long_way),
    "NPU010": (npu010.npu_codemod_analyze_file,
               lambda path, text: _session_functions.all_session_function_facts(path, text)
               | _closing_methods.called_method_facts(text)
               | _thread_functions.all_thread_function_facts(path, text)
               | _method_results.all_method_result_facts(path, text)),
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
    "def conf(a):\n    if a:\n        return None\n    c = make_config(); return c\n",
    "def sess_config():\n    c = configs.build(); return c\n",
    "def config_of(): return configs.build()\n",
    "class Maker:\n    def session_config(self):\n        return self.build()\n    def build(self):\n"
    "        return helpers.get_session_config()\n",
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
    "from data import pipeline\n",
    "from .inputs import input_fn as make_input\n",
    "def train_model():\n    pipeline.build()\n    return make_input(1)\n",
    "def evaluate():\n    x = lambda: pipeline.input_fn(1)\n    return x\n",
    "async def predict_all():\n    await pipeline.batches()\n",
    "estimator.predict(input_fn=lambda: pipeline.input_fn(f))\n",
    "model.fit(pipeline.make(), validation_data=pipeline.make_eval()[0])\n",
    "run_training(pipeline.make, make_input)\n",
    "class Trainer:\n    def train(self):\n        def inner():\n            return pipeline.build()\n"
    "        return pipeline.build(**opts)\n",
    "import tensorflow.compat.v1 as tf1\n",
    "from tensorflow import device as dev, Session\n",
    "from tensorflow import (\n    device)\n",
    "with tf.device('/cpu:0'):\n    pass\n",
    "x = 1  # with tf.device('/gpu:0'):\n",
    "s = '#'; d = tf1.compat.v1.device ('/cpu:0')\n",
    "with tf1.device\t(d), dev(e):\n    pass\n",
    "v = mytf.device(1) + my.dev(2) + tf.devices(3)\n",
    "print('# dev(')\ndevice(x)\n",
    "make(f'{g(soft)}', f\"\"\"{\n  h(x, cfg.placement)}\"\"\")\n",
    "make(x)\rmake(y.soft_placement)\r\n",
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
    "build(x, *args, soft=1)\n",
    "build(f'{soft}', x if y else z.placement, [False], -1)\n",
    "from tensorflow.python.framework.ops import *\n",
    "with device('/cpu:0'):\n    pass\n",
    "import tensorflow.python.framework.ops.device as place\n",
    "place(1)\n",
    "# a device, on its own\n",
    "ops.devices(1); ops.device_v2(2)\n",
    "match x:\n    case 1:\n        pass\n",
    "from data.loader import Loader, make_dataset\nfor batch in make_dataset(files):\n    print(batch)\n",
    "from data.loader import make_dataset\ndef run(model):\n    if model:\n        ds = make_dataset(1)\n"
    "    model.fit(ds)\n    log(ds)\n",
    "from data.loader import Loader\ndef loop():\n    loader = Loader(1)\n    for x in loader.create(2):\n"
    "        step = lambda: train_step(x)\n",
    "from data.loader import make_dataset\nclass Eval:\n    ds = make_dataset(2)\n\n    def go(self, model):\n"
    "        model.evaluate(make_dataset(3).prefetch(1))\n        self.ds = ds\n",
    "import data.loader as loader_module\nfrom data.loader import make_dataset\ndef outer():\n"
    "    val = loader_module.Loader(4).create(1)\n    def inner():\n        val = make_dataset(5)\n"
    "        return val\n    model.evaluate(val)\n",
    "import data.loader as loader_module\nx = [model(b) for b in iter(loader_module.make(1))]\n",
    "import data.loader as loader_module\nwith loader_module.scope():\n    try:\n        pass\n"
    "    except ValueError:\n        run(loader_module.step,\n            Loader)\n",
    "import data.loader as loader_module\n@loader_module.register(\n    1)\nclass Tool:\n    pass\n",
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
        tree = module_ast(text)
        call = tree.body[0].value
        assert npu008.soft_spellings(tree, text).may_spell(call.args[0])
        assert npu008.passed_soft_placement(tree, False, spelled=npu008.soft_spellings(tree, text)) == {"make:0"}


#: Files whose facts come from what a first look could miss: a name ``ast`` normalises out of
#: other characters (NFKC), NPU lines with no ``config`` spelled, soft placement in escapes.
EDGES = [
    ("NPU007", "from utils import helpers\n\n\ndef ｃonfig_maker():\n    return helpers.build()\n"),
    ("NPU007", "def npu():\n    c = build()\n    o = c.graph_options.rewrite_options.custom_optimizers.add()\n"
               "    o.name = 'NpuOptimizer'\n    return c\n"),
    ("NPU010", "from utils import helpers\n\nhelpers.make_ｓess()\n"),
    ("NPU007", "from utils import configs\n\n\ndef make_config():\n    return configs.build()\n\n\n"
               "def sess_config():\n    c = configs.build(); return c\n\n\ndef config_of(): return configs.build()\n"),
    ("NPU008", "make('\\x73oft')\n"),
    ("NPU008", "make(x, [y, cfg.allow_soft_placement], z)\n"),
    ("NPU008", "import tensorflow.python.framework.ops.device as place\n\nplace('/cpu:0')\n"),
    ("NPU008", "from tensorflow.python.framework.ops import device as place\n\nplace('/cpu:0')\n"),
    ("NPU002", "from data import pipeline\n\n\nasync def predict_all():\n    await pipeline.batches()\n"),
    ("NPU002", "from data import pipeline\n\nrun_training(pipeline.make)\n"),
    ("NPU008", "from tensorflow.python.framework import ops\n\nwith ops.device('/cpu:0'):\n    x = 1\n"),
    # ``**`` passes whatever the file mentions: soft placement in any case, the long s (\u017f)
    # matching ``s`` case-blind as ``re.I`` reads it
    ("NPU008", "make(**opts)  # ALLOW_SOFT_PLACEMENT\n"),
    ("NPU008", "make(**opts)  # \u017foft placement\n"),
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
        values = _model_assigned_long_way(node.value.id, nodes) if isinstance(node.value, ast.Name) else [node.value]
        found.update(built_models._made_kind(value, kinds, imports, owner) for value in values)
    if not found or None in found or len({kind for kind in found if not kind.startswith("@")}) > 1:
        return None
    return built_models.EITHER.join(sorted(found))


def _model_assigned_long_way(name, nodes):  # type: ignore[no-untyped-def]
    """``built_models._assigned`` in two walks, with ``isinstance``."""
    values, targets = [], set()
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name:
            values.append(node.value)
            targets.add(id(node.targets[0]))
    values += [None for node in nodes if isinstance(node, ast.Name) and node.id == name
               and isinstance(node.ctx, ast.Store) and id(node) not in targets]
    return values or [None]


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
            return tf_versions.Use(call.lineno, call.col_offset, f"{receiver}.run"), True
        if func.attr in tf_versions.KERAS_TRAINING and training is None:
            training = tf_versions.Use(call.lineno, call.col_offset, f"{receiver}.{func.attr}")
        builds = builds or tf_versions._is_model_call(ast_dotted_name(func), bound)
    return training, builds


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
    "from nets import Net\n", "import keras\n", "import nets\n", "m = nets.small()\n", "m = make()\n",
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


def test_the_code_inside_f_strings_is_always_read() -> None:
    """Before Python 3.12 the positions of the nodes inside an f-string could be off: each
    argument of a call there is read, wherever the words are."""
    text = "make(f'{g(x)}', f'{h(y)}')  # soft\n"
    tree = module_ast(text)
    spelled = npu008.soft_spellings(tree, text)
    inner = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.func.id in ("g", "h")]
    assert len(inner) == 2 and all(spelled.may_spell(call.args[0]) for call in inner)
    outer = tree.body[0].value
    assert not spelled.may_spell(outer.func)
