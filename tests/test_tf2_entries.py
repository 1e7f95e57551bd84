"""NPU061's entry scripts without a ``__main__`` block, and the import graph through modules
that import no TensorFlow (``codemods/tf_programs``, ``codemods/module_training``).

Real TF 2.x scripts often train at module level: Horovod's TF 2.x benchmarks time a
``@tf.function`` step with a ``GradientTape`` in a module-level loop, or call ``model.fit`` at
the top. Such a file is an entry when nothing imports it and it is no test file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_codemod.codemods.modules import import_statements, imported_names, module_ast
from npu_codemod.codemods.tf_programs import program_facts
from npu_codemod.codemods.tf_runtime import decide
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.cli import cli
from support.git import make_repo, show
from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import DEVICE_INIT, with_init

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU061"}
BRANCH = "npu-codemod/sess-run-to-npu"
INIT = DEVICE_INIT

#: Horovod's custom-loop benchmark shape: module-level setup, a traced step, a timed loop.
LOOP_BENCHMARK = '''\
"""Synthetic throughput of a Keras application with a custom training step."""
import argparse
import timeit

import numpy as np
import tensorflow as tf
import horovod.tensorflow as hvd
from tensorflow.keras import applications

parser = argparse.ArgumentParser(description="synthetic benchmark")
parser.add_argument("--model", default="ResNet50")
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--num-iters", type=int, default=10)
args = parser.parse_args()

hvd.init()
for device in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(device, True)

model = getattr(applications, args.model)(weights=None)
optimizer = tf.optimizers.SGD(0.01)
images = tf.random.uniform([args.batch_size, 224, 224, 3])
labels = tf.random.uniform([args.batch_size, 1], maxval=999, dtype=tf.int64)


@tf.function
def step(first):
    with tf.GradientTape() as tape:
        loss = tf.losses.sparse_categorical_crossentropy(labels, model(images, training=True))
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if first:
        hvd.broadcast_variables(model.variables, root_rank=0)


def report(text):
    if hvd.rank() == 0:
        print(text)


report("model: %s" % args.model)
with tf.device("GPU"):
    step(True)
    rates = []
    for _ in range(args.num_iters):
        seconds = timeit.timeit(lambda: step(False), number=10)
        rates.append(args.batch_size * 10 / seconds)
    report("img/sec: %.1f" % np.mean(rates))
'''

#: Horovod's Keras benchmark shape: module-level compile and fit, a callback class.
FIT_BENCHMARK = '''\
"""Synthetic throughput of a Keras application trained with fit."""
import argparse
from timeit import default_timer as timer

import tensorflow as tf
import horovod.tensorflow.keras as hvd

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()
hvd.init()

model = tf.keras.applications.ResNet50(weights=None)
data = tf.random.uniform([args.batch_size, 224, 224, 3])
target = tf.random.uniform([args.batch_size, 1], maxval=999, dtype=tf.int64)
dataset = tf.data.Dataset.from_tensor_slices((data, target)).cache().repeat().batch(args.batch_size)
model.compile(loss=tf.losses.SparseCategoricalCrossentropy(),
              optimizer=hvd.DistributedOptimizer(tf.optimizers.SGD(0.01)))


class Timing(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.start = timer()

    def on_epoch_end(self, epoch, logs=None):
        print("epoch %d: %.1f img/sec" % (epoch, args.batch_size * 10 / (timer() - self.start)))


callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
if hvd.rank() == 0:
    callbacks.append(Timing())

model.fit(dataset, steps_per_epoch=10, callbacks=callbacks, epochs=3, verbose=0)
'''

#: A Keras script that trains at module level through a function of its own.
KERAS_SCRIPT = '''\
#!/usr/bin/env python
"""Train an MNIST classifier; run as: python mnist_keras.py"""
import tensorflow as tf


def build():
    return tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])


def train(epochs):
    (x, y), _ = tf.keras.datasets.mnist.load_data()
    model = build()
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x / 255.0, y, batch_size=128, epochs=epochs)
    return model


train(epochs=2).save("mnist.h5")
'''

#: A library module: functions only, and module-level code that trains nothing.
LIBRARY = '''\
"""Data and model helpers shared by the scripts."""
import re

import tensorflow as tf

PATTERN = re.compile(r"^train-(\\d+)\\.tfrecord$")
AUTOTUNE = tf.data.experimental.AUTOTUNE


def make_dataset(files, batch_size):
    return tf.data.TFRecordDataset(files).batch(batch_size, drop_remainder=True).prefetch(AUTOTUNE)


def fit(model, dataset, epochs):
    model.compile(optimizer="adam", loss="mse")
    return model.fit(dataset, epochs=epochs)
'''


@pytest.mark.parametrize("script", [LOOP_BENCHMARK, FIT_BENCHMARK, KERAS_SCRIPT])
def test_a_script_that_trains_at_module_level_gets_the_init(script: str) -> None:
    findings = assert_migrates(script, with_init(script), RULES, facts=TF2_RUNTIME)
    assert [(rule, status) for rule, _, _, status in sites(findings)][:1] == [("NPU061", "migrated")]


def test_a_library_module_is_never_an_entry() -> None:
    assert assert_unchanged(LIBRARY, RULES, facts=TF2_RUNTIME) == []


# --- a repository: which module-level scripts are entries ---------------------------------------

#: A module that trains when imported: ``import experiment`` runs it.
EXPERIMENT = '''\
"""The experiment: importing this module trains the model."""
import tensorflow as tf

from helpers import make_dataset, fit

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
history = fit(model, make_dataset(["train-0.tfrecord"], 64), epochs=1)
model.fit(make_dataset(["train-1.tfrecord"], 64), epochs=1)
'''

#: What imports it: a sweep that imports the experiment (no TensorFlow of its own).
SWEEP = '''\
"""Runs the experiment once per seed."""
import importlib
import random

for seed in range(3):
    random.seed(seed)
    importlib.reload(importlib.import_module("experiment"))
'''

IMPORTER = '''\
"""Helpers around the experiment's results."""
import json

import experiment


def save(path):
    with open(path, "w") as handle:
        json.dump(experiment.history.history, handle)
'''


def benchmarks_repo(root: Path) -> Path:
    make_repo(root / "bench", {
        "requirements.txt": "tensorflow>=2.6\nhorovod\n",
        "README.md": "# Benchmarks\n",
        "examples/tensorflow2/synthetic_benchmark.py": LOOP_BENCHMARK,
        "examples/tensorflow2/keras_synthetic_benchmark.py": FIT_BENCHMARK,
        "examples/mnist_keras.py": KERAS_SCRIPT,
        "examples/helpers.py": LIBRARY,
        "examples/experiment.py": EXPERIMENT,
        "examples/results.py": IMPORTER,
        "examples/sweep.py": SWEEP,
        "tests/test_benchmark.py": FIT_BENCHMARK,
    })
    (root / "repos.txt").write_text("bench\n")
    return root / "bench"


def npu061(record: dict) -> list[tuple[str, int, str, str]]:
    return sorted((f["path"], f["line"], f["status"], f["message"].split(":")[0])
                  for f in record["findings"] if f["rule_id"] == "NPU061")


def test_module_level_training_scripts_are_entries_once(tmp_path: Path) -> None:
    repo = benchmarks_repo(tmp_path)
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"][0]
    added = "added 'import npu_device as npu' and 'npu.open().as_default()' at the top of the entry script"
    assert npu061(record) == [
        ("examples/experiment.py", 1, "unmigrated", "this module trains when it is imported (by "
                                                    "examples/results.py) and no entry script reaches it"),
        ("examples/mnist_keras.py", 3, "migrated", added),
        ("examples/tensorflow2/keras_synthetic_benchmark.py", 2, "migrated", added),
        ("examples/tensorflow2/synthetic_benchmark.py", 2, "migrated", added)]
    for path, script in [("examples/mnist_keras.py", KERAS_SCRIPT), ("examples/tensorflow2/"
                         "keras_synthetic_benchmark.py", FIT_BENCHMARK), ("examples/tensorflow2/"
                         "synthetic_benchmark.py", LOOP_BENCHMARK)]:  # other rules change the rest
        head = with_init(script)[:with_init(script).index(INIT) + len(INIT)]
        assert show(repo, BRANCH, path).decode().startswith(head)
        assert show(repo, BRANCH, path).decode().count("npu.open()") == 1
    assert {"examples/helpers.py", "examples/results.py", "examples/sweep.py",
            "examples/experiment.py"}.isdisjoint(record["files_changed"])
    again = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--jobs", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    second = json.loads((tmp_path / "rep2" / "run.json").read_text())["repos"][0]
    assert second["status"] == "unchanged"
    assert [(path, status) for path, _, status, _ in npu061(second)] == [
        ("examples/experiment.py", "unmigrated"), ("examples/mnist_keras.py", "migrated"),
        ("examples/tensorflow2/keras_synthetic_benchmark.py", "migrated"),
        ("examples/tensorflow2/synthetic_benchmark.py", "migrated")]


def entries(files: dict[str, str]) -> set[str]:
    """The entry scripts :func:`program_facts` finds in a TF 2.x repository of ``files``."""
    loaded = load_rules(RuleSelection())
    facts = loaded.repository_facts((path, text.encode()) for path, text in files.items()).facts
    found, _ = program_facts(facts, decide("2", {}, facts).value)
    return {fact.partition(":")[2] for fact in found if fact.startswith("tf2-entry:")}


def test_a_module_a_repository_file_imports_or_a_test_file_is_no_entry() -> None:
    assert entries({"bench.py": FIT_BENCHMARK, "test_bench.py": FIT_BENCHMARK,
                    "bench_test.py": FIT_BENCHMARK}) == {"bench.py"}
    assert entries({"experiment.py": EXPERIMENT, "helpers.py": LIBRARY, "results.py": IMPORTER}) == set()
    assert entries({"experiment.py": EXPERIMENT, "helpers.py": LIBRARY}) == {"experiment.py"}


# --- the import graph through modules that import no TensorFlow --------------------------------

LAUNCHER = '''\
"""python main.py --epochs 3"""
import sys

from runner import run

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
'''

RUNNER = '''\
"""Parses the options and hands over to the trainer (no TensorFlow here)."""
import argparse

import trainer


def run(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    return trainer.train(parser.parse_args(argv).epochs)
'''

TRAINER = '''\
"""Keras training."""
import tensorflow as tf


def train(epochs):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(tf.random.normal([64, 4]), tf.random.normal([64, 1]), epochs=epochs)
    return 0
'''


def test_an_entry_reaches_training_through_a_module_that_imports_no_tf(tmp_path: Path) -> None:
    make_repo(tmp_path / "chain", {"requirements.txt": "tensorflow==2.6.5\n", "main.py": LAUNCHER,
                                   "runner.py": RUNNER, "trainer.py": TRAINER})
    done = cli("check", "chain", cwd=tmp_path)
    assert done.stdout.splitlines() == [
        "chain/main.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and "
        "'npu.open().as_default()' at the top of the entry script"], done.stderr


def test_a_sharded_repository_links_its_entry_through_modules_no_worker_reads(tmp_path: Path) -> None:
    """The workers analyse the files a rule acts on; the modules that import no TensorFlow (the
    links of the graph) are read by the main process: the same entry as a serial run."""
    files = {f"models/layer_{i:02}.py": TRAINER.replace("def train", f"def train_{i}") for i in range(40)}
    files |= {"requirements.txt": "tensorflow==2.6.5\n", "main.py": LAUNCHER, "runner.py": RUNNER,
              "trainer.py": TRAINER, "models/__init__.py": '"""Model zoo."""\n'}
    records = []
    for name, jobs in (("serial", "1"), ("sharded", "2")):
        make_repo(tmp_path / name / "zoo", files)
        (tmp_path / name / "repos.txt").write_text("zoo\n")
        done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", jobs, cwd=tmp_path / name)
        assert done.returncode == 0, done.stderr
        records.append(json.loads((tmp_path / name / "rep" / "run.json").read_text())["repos"][0])
    assert records[0]["findings"] == records[1]["findings"]
    assert "main.py" in records[1]["files_changed"]
    assert show(tmp_path / "sharded" / "zoo", BRANCH, "main.py").decode() == with_init(LAUNCHER)


def test_a_module_that_imports_no_tf_is_read_for_its_imports_alone() -> None:
    """Its imports, as the whole file's ``ast`` gives them: parenthesised, continued,
    relative, nested in a function; prose that starts with "import" is no import."""
    source = '''\
"""Glue code.

import this module from the launcher.
"""
import os, sys as system
from .runner import (run,
                     parse)  # the options
from pkg.sub import \\
    helper


def late():
    from .trainer import train
    return train
'''
    tree = module_ast(source)
    assert tree is not None
    assert imported_names(import_statements(source), "pkg/glue.py") == imported_names(tree, "pkg/glue.py") == {
        "os": "os", "system": "sys", "run": "pkg.runner.run", "parse": "pkg.runner.parse",
        "helper": "pkg.sub.helper", "train": "pkg.trainer.train"}


def test_an_entry_that_imports_horovod_but_no_tf_gets_the_init(tmp_path: Path) -> None:
    """Horovod's data-service example: the launcher imports Horovod (other rules' module) and
    the training functions, but no TensorFlow."""
    launcher = LAUNCHER.replace("import sys\n", "import sys\n\nfrom horovod.runner.common.util import env\n")
    make_repo(tmp_path / "chain", {"requirements.txt": "tensorflow==2.6.5\n", "main.py": launcher,
                                   "runner.py": RUNNER, "trainer.py": TRAINER})
    done = cli("check", "chain", cwd=tmp_path)
    assert "chain/main.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and " \
           "'npu.open().as_default()' at the top of the entry script" in done.stdout.splitlines(), done.stdout


#: A MirroredStrategy script: the step is defined in a module-level ``with`` block and handed
#: to ``strategy.run``, never called by name at module level.
STRATEGY_SCRIPT = '''\
"""Multi-GPU training with a custom loop."""
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
    optimizer = tf.keras.optimizers.Adam(1e-3)

with strategy.scope():
    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, model(images)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(inputs):
        return strategy.run(train_step, args=(inputs,))

    for batch in tf.data.Dataset.from_tensors((tf.zeros([8, 4]), tf.zeros([8]))).repeat(10):
        distributed_step(batch)
'''


def test_a_step_defined_in_a_block_and_run_by_a_strategy_trains() -> None:
    assert_migrates(STRATEGY_SCRIPT, with_init(STRATEGY_SCRIPT), RULES, facts=TF2_RUNTIME)


def test_a_script_of_another_framework_is_no_entry_whatever_its_imports_reach() -> None:
    """Horovod's PyTorch examples import ``horovod.spark``, which reaches Horovod's Keras code."""
    torch_launcher = LAUNCHER.replace("import sys\n", "import sys\n\nimport torch\n")
    assert entries({"main.py": LAUNCHER, "torch_main.py": torch_launcher, "runner.py": RUNNER,
                    "trainer.py": TRAINER}) == {"main.py"}


def test_the_findings_about_programs_are_npu061_s_in_every_report(tmp_path: Path) -> None:
    make_repo(tmp_path / "lib", {"requirements.txt": "tensorflow==2.6.5\n", "trainer.py": TRAINER,
                                 "runner.py": RUNNER})
    (tmp_path / "repos.txt").write_text("lib\n")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"][0]
    assert [(f["rule_id"], f["path"], f["status"]) for f in record["findings"]] == [("NPU061", "", "unmigrated")]
    sarif = json.loads((tmp_path / "rep" / "findings.sarif").read_text())["runs"][0]
    assert [result["ruleId"] for result in sarif["results"]] == ["NPU061"]
    assert "NPU061," in (tmp_path / "rep" / "findings.csv").read_text()
    without = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--jobs", "1", "--rules", "xla-gpu",
                  cwd=tmp_path)  # NPU061 does not run: nothing about programs
    assert without.returncode == 0, without.stderr
    findings = json.loads((tmp_path / "rep2" / "run.json").read_text())["repos"][0]["findings"]
    assert [(f["rule_id"], f["path"]) for f in findings] == [("NPU000", "trainer.py")]  # "TF 2.x code"


# --- a notebook exported as a script (nbconvert --to script) ------------------------------------

#: TensorFlow2.0-Examples' ``dcgan.py``: a notebook exported as a script, whose training cell
#: (``%%time``) runs through IPython's magic: its only module-level call that trains is a string.
EXPORTED_NOTEBOOK = '''\
#!/usr/bin/env python
"""DCGAN on MNIST (exported from dcgan.ipynb)."""
# coding: utf-8

# In[1]:


import tensorflow as tf

get_ipython().run_line_magic('matplotlib', 'inline')
(train_images, _), (_, _) = tf.keras.datasets.mnist.load_data()
train_dataset = tf.data.Dataset.from_tensor_slices(train_images / 255.0).shuffle(60000).batch(256)
generator = tf.keras.Sequential([tf.keras.layers.Dense(784, input_shape=(100,))])
generator_optimizer = tf.keras.optimizers.Adam(1e-4)


@tf.function
def train_step(images):
    with tf.GradientTape() as gen_tape:
        gen_loss = tf.reduce_mean(generator(tf.random.normal([256, 100]), training=True))
    gradients = gen_tape.gradient(gen_loss, generator.trainable_variables)
    generator_optimizer.apply_gradients(zip(gradients, generator.trainable_variables))


def train(dataset, epochs):
    for epoch in range(epochs):
        for image_batch in dataset:
            train_step(image_batch)


# In[2]:


get_ipython().run_cell_magic('time', '', 'train(train_dataset, 50)')
'''


@pytest.mark.parametrize("magic", ["get_ipython().run_cell_magic('time', '', 'train(train_dataset, 50)')",
                                   "get_ipython().run_line_magic('time', 'train(train_dataset, 50)')",
                                   "get_ipython().magic('time train(train_dataset, 50)')"],
                         ids=["cell", "line", "magic"])
def test_a_notebook_exported_as_a_script_that_trains_in_a_magic_gets_the_init(magic: str) -> None:
    """Before, the training cell's code was a string to the reading of module-level code: the
    script got NPU068's ``npu.distribute.all_reduce`` and never ``npu.open()``."""
    script = EXPORTED_NOTEBOOK.replace("get_ipython().run_cell_magic('time', '', 'train(train_dataset, 50)')", magic)
    after = script.replace("\nimport tensorflow as tf\n", "\n" + DEVICE_INIT + "import tensorflow as tf\n", 1)
    findings = assert_migrates(script, after, RULES, facts=TF2_RUNTIME)
    assert [(rule, status) for rule, _, _, status in sites(findings)][:1] == [("NPU061", "migrated")]


def test_a_notebook_exported_as_a_script_that_runs_no_training_cell_gets_no_init() -> None:
    """Its magics run no training (``%matplotlib inline``, a cell that only plots)."""
    script = EXPORTED_NOTEBOOK.replace("get_ipython().run_cell_magic('time', '', 'train(train_dataset, 50)')",
                                       "get_ipython().run_cell_magic('time', '', 'print(len(train_images))')")
    assert [f for f in assert_unchanged(script, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU061"] == []
