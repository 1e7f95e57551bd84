"""The repository facts of TF 2.x datasets (``codemods/tf2_dataset_facts.py``) that NPU064 and
NPU069 read across files: every TF file of a repository gives them, whichever its TensorFlow
version, so they are worked out cheaply (the module index's calls and assignments, no walk of
the tree, no parent map) and must say the same as the plain reading of the file."""

from __future__ import annotations

import ast
import textwrap

from npu_codemod.codemods.modules import module_ast
from npu_codemod.codemods.tf2_dataset_facts import dataset_function_facts, dataset_use_facts
from npu_codemod.codemods.tf2_dataset_uses import USE_FACT, _trains, file_trains
from npu_codemod.codemods.tf2_datasets import FUNCTION_FACT, file_datasets
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.testing import assert_migrates

from support.packs import repository_facts


def uses(text: str, path: str = "tools/decode.py") -> set[str]:
    return {fact[len(USE_FACT):] for fact in dataset_use_facts(path, textwrap.dedent(text))}


def test_a_loop_in_a_file_that_trains_only_in_a_nested_function_is_a_loop():
    """The file trains in a method's nested function and in a lambda: calls the module
    index holds (not the module's statements alone)."""
    text = """\
        from vocoder.data import Frames


        class Runner:
            def run(self, model, files):
                for batch in Frames(files).build(8):
                    print(batch)

                def step(x):
                    return (lambda: model.fit(x))()
                return step
        """
    assert uses(text) == {"tools|vocoder.data.Frames.build|*|loop"}
    assert uses(text.replace("model.fit(x)", "model(x)")) == {"tools|vocoder.data.Frames.build|*|looked-at@tools/decode.py:6"}


def test_file_trains_reads_every_call_of_the_module():
    for text in ("import tensorflow as tf\nclass A:\n    x = [train_step(b) for b in ds]\n",
                 "f = lambda m, x: m.fit(x)\n",
                 "def outer():\n    def inner():\n        with tf.GradientTape() as tape:\n            pass\n",
                 "@decorate(trainer.train())\ndef f(x=opt.minimize(loss)):\n    pass\n",
                 "def f():\n    return model(x) + evaluate(y)\n"):
        datasets = file_datasets(text, "m.py")
        assert datasets is not None
        assert file_trains(datasets) is _trains(datasets.tree) is (text != "def f():\n    return model(x) + evaluate(y)\n")


def test_function_assignments_are_the_functions_own():
    """Names a function assigns a repository call's result: in its nested blocks, not in its
    nested functions; ``loader = Loader(...)`` is an instance, the last assignment of it wins."""
    text = """\
        from pets.data import Loader, make_dataset, make_hidden, read_split


        def evaluate(model, files, eval_only):
            if eval_only:
                with open(files) as handle:
                    val = make_dataset(handle.read())
            train, test = read_split(files)

            def inner():
                hidden = make_hidden(files)
                log(hidden)
            loader = Other(files)
            loader = Loader(files)
            model.evaluate(val)
            model.evaluate(test)
            model.evaluate(hidden)
            model.fit(loader.create(32))
            model.fit(train)
        """
    assert uses(text, "train.py") == {"|pets.data.make_dataset|*|evaluate", "|pets.data.read_split|1|evaluate",
                                      "|pets.data.Loader.create|*|fit", "|pets.data.read_split|0|fit",
                                      "|pets.data.make_hidden|*|passed"}  # ``inner``'s own


def test_only_names_imported_from_the_repository_are_its_functions():
    text = """\
        import numpy as np
        import data.pipeline
        from .splits import load
        from . import readers


        def run(model, files):
            model.fit(data.pipeline.make(files))
            model.fit(np.load(files))
            model.fit(load(files))
            model.evaluate(readers.tfrecords(files).prefetch(2))
            model.evaluate(make(files))
            model.evaluate(files.make(files))
            model.evaluate(get()(files))
        """
    assert uses(text, "project/train.py") == {"project|data.pipeline.make|*|fit",
                                              "project|project.readers.tfrecords|*|evaluate",
                                              "project|project.splits.load|*|fit"}


def test_a_module_without_tf2_signals_still_gives_its_dataset_functions():
    """A TF 2.x script imports its pipeline from a helper module written for TF 1.x (a graph
    API, no TF 2.x signal of its own): the helper's facts are read by the script's NPU064,
    which rewrites the batch of the helper's dataset; without them it could only note it."""
    helper = textwrap.dedent("""\
        import tensorflow as tf


        def make_dataset(files):
            return tf.data.TFRecordDataset(files).map(tf.io.parse_single_example)


        def build_graph():
            return tf.placeholder(tf.float32, [None, 10])
        """)
    script = textwrap.dedent("""\
        import tensorflow as tf
        from pipeline import make_dataset


        @tf.function
        def train(model, files):
            model.fit(make_dataset(files).batch(32))
        """)
    assert f"{FUNCTION_FACT}pipeline.make_dataset:*" in dataset_function_facts("pipeline.py", helper)
    facts = repository_facts({"pipeline.py": helper, "train.py": script})
    assert f"{FUNCTION_FACT}pipeline.make_dataset:*" in facts
    assert f"{USE_FACT}|pipeline.make_dataset|*|fit" in facts
    assert_migrates({"NPU064"}, script, script.replace("batch(32)", "batch(32, drop_remainder=True)"),
                    path="train.py", facts=facts | {"tf-runtime:2"})


def test_the_analysis_reads_the_same_tree_it_was_given():
    """The facts come from the shared ``ast`` (``module_ast``), which they must not edit."""
    text = "from lib import make_dataset\nfor x in make_dataset(1):\n    print(x)\n"
    before = ast.dump(module_ast(text))
    assert dataset_use_facts("run.py", text)
    assert ast.dump(module_ast(text)) == before
    assert load_rules(RuleSelection()).file_facts("run.py", text.encode()).facts >= dataset_use_facts("run.py", text)
