"""The API helpers the distributed and keras packs added, on their own: what each answers or
edits, and that the edits keep the nodes they move (so another rule's edit inside still lands)."""

from __future__ import annotations

import pytest

from npu_codemod.api import arguments, parse_expression, parse_statements, symbols, wrap_argument
from npu_codemod.api._toolkit import (
    add_argument,
    called_method,
    distribution_facts,
    fstring_references,
    main_block,
    model_facts,
    parse_module,
    remove_argument,
    remove_small_statement,
    tree_text,
)
from npu_codemod.codemods.distribution import Distribution
from npu_codemod.codemods.names import ImportNames


def call_of(code: str):
    expression = parse_expression(code)
    return expression, expression.children[-1]


@pytest.mark.parametrize("code, index, expected", [
    ("f(a, b=1, c=2)", 1, "f(a, c=2)"),
    ("f(a, b=1, c=2)", 0, "f(b=1, c=2)"),
    ("f(a, b=1, c=2)", 2, "f(a, b=1)"),
    ("f(a)", 0, "f()"),
    ("f(a,)", 0, "f()"),
    ("f(a, b,)", 1, "f(a,)"),
    ("f(\n    opt,\n    compression=x,\n)", 1, "f(\n    opt,\n)"),
])
def test_remove_argument(code: str, index: int, expected: str) -> None:
    expression, call = call_of(code)
    remove_argument(call, arguments(call)[index])
    assert str(expression) == expected


def test_add_argument_and_wrap_argument_move_the_nodes_they_keep() -> None:
    expression, call = call_of("Hook(hvd.rank())")
    root = arguments(call)[0].value
    add_argument(call, "int(os.getenv('RANK_ID', '0'))")
    assert arguments(call)[0].value is root  # moved into the new arglist, not copied
    assert wrap_argument(call, "", "npu(x={})", 0)
    assert str(expression) == "Hook(npu(x=hvd.rank()), int(os.getenv('RANK_ID', '0')))"
    root.replace(parse_expression("get_npu_rank_id()"))  # an edit inside, after the wrapping
    assert str(expression) == "Hook(npu(x=get_npu_rank_id()), int(os.getenv('RANK_ID', '0')))"


@pytest.mark.parametrize("source, expected", [
    ("hvd.init()\nx = 1\n", "x = 1\n"),
    ("hvd.init(); x = 1\n", "x = 1\n"),
    ("x = 1; hvd.init()\n", "x = 1\n"),
    ("x = 1; hvd.init(); y = 2\n", "x = 1; y = 2\n"),
    ("if a: hvd.init()\n", "if a: pass\n"),
    ("if a:\n    hvd.init()\n", "if a:\n    pass\n"),
    ("def f():\n    # init\n    hvd.init()\n\n    run()\n", "def f():\n    # init\n    run()\n"),
])
def test_remove_small_statement(source: str, expected: str) -> None:
    tree = parse_module(source)
    (call,) = [node for node in tree.pre_order()
               if node.type == symbols.power and str(node).strip() == "hvd.init()"]
    remove_small_statement(call)
    assert str(tree) == expected


def test_fstring_references_and_their_positions() -> None:
    tree = parse_module('import horovod.tensorflow as hvd\ns = f"""a\n  {hvd.rank()!r} {{hvd.size()}} '
                        '{d["hvd.size"]:>{hvd.local_size()}}"""\n')
    leaf = next(leaf for leaf in tree.leaves() if leaf.value.startswith("f"))
    wanted = frozenset({"horovod.tensorflow.rank", "horovod.tensorflow.size",
                        "horovod.tensorflow.local_size"})
    found = fstring_references(leaf, [ImportNames(tree, root="horovod")], wanted)
    assert [(r.name, r.line, r.column, leaf.value[r.start:r.end]) for r in found] == [
        ("horovod.tensorflow.rank", 3, 3, "hvd.rank"),
        ("horovod.tensorflow.local_size", 3, 49, "hvd.local_size")]
    plain = next(leaf for leaf in parse_module('x = "{hvd.rank()}"\n').leaves() if leaf.type == 3)
    assert fstring_references(plain, [ImportNames(tree, root="horovod")], wanted) == []


@pytest.mark.parametrize("source, found", [
    ('if __name__ == "__main__":\n    main()\n', True),
    ("if '__main__' == __name__: main()\n", True),
    ("def f():\n    if __name__ == '__main__':\n        main()\n", False),
    ("if __name__ != '__main__':\n    main()\n", False),
])
def test_main_block(source: str, found: bool) -> None:
    assert (main_block(parse_module(source)) is not None) == found


@pytest.mark.parametrize("code, method, index", [
    ("self.model.fit(x)", "fit", 2),
    ("model.fit", "fit", None),  # not called
    ("model.fit.x(1)", "fit", None),
    ("tf.train.AdamOptimizer(0.1)", "train", None),
])
def test_called_method_needs_a_receiver_and_a_call(code: str, method: str, index) -> None:
    expression = parse_expression(code)
    trailer = next(child for child in expression.children[1:] if child.children[1].value == method)
    assert called_method(trailer) == index


def test_the_npu_init_star_import_binds_its_names() -> None:
    tree = parse_module("from npu_bridge.npu_init import *\nx = get_npu_rank_id()\n")
    assert ImportNames(tree, root="npu_bridge").qualify("npu_strategy.NPUStrategy") == \
        "npu_bridge.npu_init.npu_strategy.NPUStrategy"
    assert ImportNames(tree).bindings == {}  # it binds tf too, but not as the file's own alias
    assert ImportNames(parse_module("from mylib import *\n"), root="mylib").bindings == {}


@pytest.mark.parametrize("source, facts", [
    ("import horovod.tensorflow as hvd\n", {"distributed:horovod"}),
    ("import horovod.tensorflow\n", {"distributed:horovod"}),
    ("from horovod import tensorflow as hvd\n", {"distributed:horovod"}),
    ("from horovod.tensorflow.keras import callbacks\n", {"distributed:horovod"}),
    ("import horovod.torch as hvd\n", set()),
    ("import tensorflow as tf\ns = tf.distribute.MirroredStrategy()\n", {"distributed:strategy"}),
    ("from tensorflow.contrib.distribute import MirroredStrategy as M\ns = M()\n", {"distributed:strategy"}),
    ("import tensorflow as tf\ns = tf.distribute.OneDeviceStrategy('/gpu:0')\n", set()),
    ("from npu_bridge.npu_init import *\ns = npu_strategy.NPUStrategy()\n", {"distributed:strategy"}),
    ("from npu_bridge.npu_init import *\nr = get_npu_rank_id()\n", {"distributed:npu"}),
    ("r = get_npu_rank_id()\n", set()),  # not the NPU's without its import
    # TF Adapter 2.x's spelling of the init import (NPU062's header in tf2-compat files)
    ("from npu_device.compat.v1.npu_init import *\ns = npu_strategy.NPUStrategy()\n",
     {"distributed:strategy"}),
    ("from npu_device.compat.v1.npu_init import npu_strategy\ns = npu_strategy.NPUStrategy()\n",
     {"distributed:strategy"}),
    # the hooks, callbacks and optimizer wrapper only the distributed pack writes
    ("from npu_bridge.npu_init import *\nest.train(f, hooks=npu_hooks_append())\n", {"distributed:npu"}),
    ("from npu_device.compat.v1.npu_init import *\nm.fit(x, callbacks=npu_callbacks_append())\n",
     {"distributed:npu"}),
    ("from npu_bridge.npu_init import npu_distributed_optimizer_wrapper as wrap\nopt = wrap(opt)\n",
     {"distributed:npu"}),
    ("est.train(f, hooks=npu_hooks_append())\n", set()),
])
def test_distribution_facts(source: str, facts: set[str]) -> None:
    assert distribution_facts("train.py", source) == facts


def test_distribution_modes() -> None:
    assert not Distribution.of(()).distributed
    assert Distribution.of({"distributed:npu"}).distributed
    both = Distribution.of({"distributed:horovod", "distributed:strategy"})
    assert both.distributed and both.conflict
    assert not Distribution.of({"distributed:strategy", "distributed:npu"}).conflict


def test_model_facts() -> None:
    source = '''\
import tensorflow as tf
from tensorflow import keras
from base import BaseNet


class Net(keras.Model):
    pass


class Deeper(Net):
    def make(self):
        return tf.estimator.DNNClassifier(hidden_units=[10])


class Mine(BaseNet):
    pass


def build():
    model = Deeper()
    return model


def maybe(flag):
    if flag:
        return Net()
    return None


def load(path):
    return tf.keras.models.load_model(path)
'''
    assert model_facts("pkg/models.py", source) == {
        "class:pkg.models.Net=tensorflow.keras.Model;-", "class:pkg.models.Deeper=pkg.models.Net;-",
        "class:pkg.models.Mine=base.BaseNet;-",  # the kind of BaseNet: from base.py's facts
        "model-function:pkg.models.Deeper.make=estimator",
        "model-function:pkg.models.build=keras", "model-function:pkg.models.load=keras"}


def test_api_reference_shows_sets_sorted() -> None:
    from npu_codemod.orchestrator.api_reference import code

    assert code("X", frozenset({"b", "a"})) == "X = frozenset({'a', 'b'})"
    assert code("E", frozenset()) == "E = frozenset()"


def test_parse_statements_round_trip() -> None:  # the helpers above build on it
    (statement,) = parse_statements("hooks = npu_hooks_append()")
    assert tree_text(statement) == "hooks = npu_hooks_append()\n"


@pytest.mark.parametrize("imports, spelled, public", [
    ("from tensorflow.python.estimator import training", "training.TrainSpec",
     "tensorflow.estimator.TrainSpec"),
    ("from tensorflow.python.distribute import mirrored_strategy", "mirrored_strategy.MirroredStrategy",
     "tensorflow.distribute.MirroredStrategy"),
    ("from tensorflow.python.estimator.estimator import Estimator as E", "E",
     "tensorflow.estimator.Estimator"),
])
def test_internal_modules_of_the_packs_apis(imports: str, spelled: str, public: str) -> None:
    assert ImportNames(parse_module(imports + "\n")).qualify(spelled) == public
