"""The API helpers the packs added: star-imported names, edits that keep others' edits, statement
removal after compound statements and in one-line bodies, assigned values, repository classes."""

from __future__ import annotations

import pytest

from npu_codemod.api import (
    FileContext,
    Reference,
    Rule,
    arguments,
    remove_statement,
    rename_argument,
    set_keyword,
    wrap_argument,
)
from npu_codemod.api._toolkit import assigned_values, class_facts, tree_text
from npu_codemod.codemods.classes import subclass_calls
from npu_codemod.codemods.engine import parse_module
from npu_codemod.codemods.names import ImportNames
from npu_codemod.codemods.rule import FileContext as _Context
from npu_codemod.testing import assert_migrates, run_rules, sites


def tree(source: str):
    return parse_module(source)


def test_the_npu_star_import_binds_the_names_it_exports():
    names = ImportNames(tree("from npu_bridge.npu_init import *\nimport os\n\n"
                         "x = npu_run_config_init(run_config=config)\nprint(os.sep)\n"), root="npu_bridge")
    assert names.qualify("npu_run_config_init") == "npu_bridge.npu_init.npu_run_config_init"
    assert names.qualify("npu_strategy.NPUStrategy") == "npu_bridge.npu_init.npu_strategy.NPUStrategy"
    assert names.qualify("print") is None and names.qualify("os") is None
    assert ImportNames(tree("import npu_bridge\nx = npu_run_config_init()\n"),
                   root="npu_bridge").qualify("npu_run_config_init") is None


class CallsNpuName(Rule):
    id = "TST001"
    name = "calls-npu-name"
    description = "Reports calls of a star-imported NPU name."
    calls = ("npu_bridge.npu_init.FixedLossScaleManager",)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        ctx.report(reference, "migrated", f"uses {reference.spelled}")


def test_the_engine_offers_calls_of_star_imported_names():
    source = ("from npu_bridge.npu_init import *\nimport tensorflow as tf\n\n"
              "a = FixedLossScaleManager(loss_scale=2)\ndef f(manager):\n    return FixedLossScaleManager()\n")
    outcome = run_rules(CallsNpuName(), source)
    assert sites(outcome.findings) == [("TST001", 4, 4, "migrated"), ("TST001", 6, 11, "migrated")]
    assert sites(run_rules(CallsNpuName(), source.replace("import *", "import npu_ops")).findings) == []


class WrapsAndSets(Rule):
    """Two edits of one call in the order that used to lose the inner one: wrapping an argument
    (deferred first) and giving the call inside it a keyword (deferred second)."""

    id = "TST002"
    name = "wraps-and-sets"
    description = "Wraps config, then edits the RunConfig inside it."
    calls = ("tensorflow.estimator.Estimator", "tensorflow.estimator.RunConfig")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        call = reference.call
        if reference.name.endswith("Estimator"):
            ctx.defer(lambda: wrap_argument(call, "config", "wrap(run_config={})"))
        else:
            ctx.defer(lambda: set_keyword(call, "save_summary_steps", "0"))
        ctx.report(reference, "migrated", "added")


def test_wrapping_an_argument_keeps_the_nodes_other_edits_hold():
    before = "import tensorflow as tf\nest = tf.estimator.Estimator(config=tf.estimator.RunConfig(  # dir\n    d))\n"
    after = ("import tensorflow as tf\nest = tf.estimator.Estimator(config=wrap(run_config="
             "tf.estimator.RunConfig(  # dir\n    d, save_summary_steps=0)))\n")
    assert run_rules(WrapsAndSets(), before).new == after


def test_rename_argument_names_a_positional_and_renames_a_keyword():
    module = tree("x = f(2 ** 15,  # start\n      increment_period=1000)\n")
    call = module.children[0].children[0].children[2].children[1]
    first, second = arguments(call)
    rename_argument(first, "init_loss_scale")
    rename_argument(second, "incr_every_n_steps")
    assert tree_text(module) == "x = f(init_loss_scale=2 ** 15,  # start\n      incr_every_n_steps=1000)\n"


@pytest.mark.parametrize("source, path, expected", [
    # after a compound statement: the line's indentation sits in front of its DEDENT tokens
    ("if gpus:\n    try:\n        for gpu in gpus:\n            grow(gpu)\n        limit(gpus)\n"
     "    except RuntimeError as e:\n        print(e)\n", (0, 3, 2, 2, 3),
     "if gpus:\n    try:\n        for gpu in gpus:\n            grow(gpu)\n"
     "    except RuntimeError as e:\n        print(e)\n"),
    ("def f():\n    if a:\n        if b:\n            x()\n    # about y\n    y()\n    z()\n", (0, 4, 3),
     "def f():\n    if a:\n        if b:\n            x()\n    # about y\n    z()\n"),
    # a one-line body keeps its comment
    ("if gpus: grow(gpus[0])  # grow\nz()\n", (0, 3), "if gpus: pass  # grow\nz()\n"),
    # the blank lines in front of the last statement of a function and those after it: the
    # longer run stays, not both (tensorflow/similarity's ``tf_cap_memory``: three blank lines)
    ("def f():\n    gpus = g()\n\n    if gpus:\n        grow(gpus)\n\n\ndef h():\n    pass\n", (0, 4, 3),
     "def f():\n    gpus = g()\n\n\ndef h():\n    pass\n"),
    ("x = 1\n\n\nif gpus:\n    grow(gpus)\n\ny = 2\n", (1,), "x = 1\n\n\ny = 2\n"),
    ("x = 1\n\n# grow them\nif gpus:\n    grow(gpus)\n\ny = 2\n", (1,), "x = 1\n\n# grow them\n\ny = 2\n"),
])
def test_remove_statement_after_blocks_and_in_one_line_bodies(source: str, path: tuple, expected: str):
    module = tree(source)
    node = module
    for index in path:
        node = node.children[index]
    remove_statement(node)
    assert tree_text(module) == expected
    compile(expected, "x.py", "exec")


def test_assigned_values_come_from_the_scope_the_name_is_read_from():
    module = tree("config = make()\n\ndef f():\n    return use(config)\n\n"
                  "def g(config):\n    return use(config)\n\ndef h():\n    config = a\n    config = b\n"
                  "    return use(config)\n")
    reads = [leaf for leaf in module.leaves() if leaf.value == "config"
             and str(leaf.parent.parent).strip() == "use(config)"]
    values = [assigned_values(leaf, "config") for leaf in reads]
    assert [None if found is None else [tree_text(v).strip() for v in found] for found in values] == [
        ["make()"], None, ["a", "b"]]


def test_subclass_calls_follow_the_repositorys_classes_across_files():
    facts = class_facts("models/base.py", "import tensorflow.compat.v1 as tf\n\n\n"
                        "class Base(tf.estimator.Estimator):\n    pass\n") | class_facts(
        "models/text.py", "from .base import Base\n\n\nclass TextModel(Base):\n"
                          "    def __init__(self, vocab, *, config=None):\n        pass\n")
    assert facts == {"class:models.base.Base=tensorflow.compat.v1.estimator.Estimator;-",
                     "class:models.text.TextModel=models.base.Base;vocab,*,config"}
    module = tree("import models.text as text\nfrom models.base import Base as B\n\n"
                  "a = text.TextModel(v, config=c)\nb = B(f)\nc = text.Other()\n")
    ctx = _Context(repo="r", path="train.py", original=tree_text(module), newline="\n", tree=module,
                   facts=frozenset(facts))
    found = subclass_calls(ctx, {"tensorflow.estimator.Estimator"})
    assert [(call.reference.name, call.reference.line, call.cls.init) for call in found] == [
        ("models.text.TextModel", 4, ("vocab", "*", "config")), ("models.base.Base", 5, None)]
    assert found[0].cls.parameter("config") == (None, True)  # keyword-only
    assert found[0].cls.parameter("params") is None


def test_assert_migrates_accepts_sites_whose_code_the_rewrite_removes():
    before = "import tensorflow as tf\n\ntf.config.experimental.set_memory_growth(gpu, True)\nx = 1\n"
    after = "from npu_bridge.npu_init import *\nimport tensorflow as tf\n\nx = 1\n"
    with pytest.raises(AssertionError, match="the second run reports other sites"):
        assert_migrates({"NPU001", "NPU052"}, before, after)
    assert_migrates({"NPU001", "NPU052"}, before, after, removed=[("NPU052", 3, 0, "migrated")])
    with pytest.raises(AssertionError, match="removed= names sites the first run did not report"):
        assert_migrates({"NPU001", "NPU052"}, before, after, removed=[("NPU052", 9, 0, "migrated")])
