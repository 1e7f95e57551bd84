"""NPU061 tf2-device-init: every TF 2.x entry script opens the NPU as the default device
first, once (``spec/rules-tf2.md``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from npu_codemod.codemods.tf_programs import program_facts, with_programs
from npu_codemod.codemods.tf_runtime import decide, with_runtime
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.cli import cli
from support.git import make_repo, show
from support.rules import assert_migrates, assert_unchanged, sites
from support.tf2_scripts import CUSTOM_LOOP, DEVICE_INIT, KERAS_FIT, with_init

TF2_RUNTIME = {"tf-runtime:2"}
UNDETERMINED = {"tf-runtime:undetermined"}
RULES = {"NPU061"}
BRANCH = "npu-codemod/sess-run-to-npu"
INIT = DEVICE_INIT


@pytest.mark.parametrize("script", [KERAS_FIT, CUSTOM_LOOP])
def test_an_entry_script_gets_the_device_init_above_every_import(script: str) -> None:
    findings = assert_migrates(script, with_init(script), RULES, facts=UNDETERMINED)
    assert sites(findings) == [("NPU061", 2, 0, "migrated")]
    assert findings[0].message.startswith(
        "added 'import npu_device as npu' and 'npu.open().as_default()' at the top")


def test_an_init_already_there_in_any_alias_is_left_alone_and_a_second_one_named() -> None:
    done = with_init(KERAS_FIT, "import npu_device\nnpu_device.open(device_id=0).as_default()\n")
    findings = assert_unchanged(done, RULES, facts=TF2_RUNTIME)
    assert [(f.status, f.message) for f in findings] == [
        ("migrated", "the NPU device is opened as the default device first")]
    twice = with_init(KERAS_FIT, INIT + "npu.open().as_default()\n")
    messages = [f.message for f in assert_unchanged(twice, RULES, facts=TF2_RUNTIME)]
    assert messages[1].startswith("duplicate npu.open().as_default(): harmless")


def test_an_init_below_other_imports_or_without_as_default_is_reported_not_moved() -> None:
    late = KERAS_FIT.replace("import tensorflow as tf\n", "import tensorflow as tf\n" + INIT)
    findings = assert_unchanged(late, RULES, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 6, 0, "unmigrated")]
    assert findings[0].message.startswith("move import npu_device as npu; npu.open().as_default() "
                                          "above all other imports")
    bare = with_init(KERAS_FIT, "import npu_device as npu\nnpu.open()\n")
    assert [f.message.split(":")[0] for f in assert_unchanged(bare, RULES, facts=TF2_RUNTIME)] == [
        "npu.open() without .as_default()"]


def test_a_file_that_binds_npu_otherwise_spells_npu_device() -> None:
    before = KERAS_FIT.replace("import argparse\n", "import argparse\nfrom nets import npu\n")
    after = with_init(before, "import npu_device\nnpu_device.open().as_default()\n")
    assert_migrates(before, after, RULES, facts=TF2_RUNTIME)


def test_the_environment_npu_open_reads_must_be_set_before_it() -> None:
    before = KERAS_FIT.replace(
        "def main(args):\n",
        "def main(args):\n    os.environ['RANK_ID'] = str(args.rank)\n"
        "    os.environ.setdefault(\"NPU_LOOP_SIZE\", \"100\")\n").replace(
        "import argparse\n", "import argparse\nimport os\n")
    findings = assert_migrates(before, with_init(before), RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status, f.message.split(":")[0]) for f in findings][1:] == [
        (19, "unmigrated", "set RANK_ID in the launcher or above npu.open()"),
        (20, "unmigrated", "set NPU_LOOP_SIZE in the launcher or above import npu_device")]


def test_a_tf2_script_that_trains_nothing_is_noted() -> None:
    source = '''\
"""Convert the raw CSV files to TFRecords."""
import sys

import tensorflow as tf


def convert(path, out):
    with tf.io.TFRecordWriter(out) as writer:
        for line in open(path):
            feature = {"text": tf.train.Feature(bytes_list=tf.train.BytesList(value=[line.encode()]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


if __name__ == "__main__":
    tf.random.set_seed(0)
    convert(sys.argv[1], sys.argv[2])
'''
    findings = assert_unchanged(source, RULES, facts=TF2_RUNTIME)
    assert [(f.status, f.level, f.message.split(":")[0]) for f in findings] == [
        ("unmigrated", "note", "TF 2.x script without training code")]


def test_library_modules_get_no_init() -> None:
    library = CUSTOM_LOOP[:CUSTOM_LOOP.index('if __name__ == "__main__":')]
    assert assert_unchanged(library, RULES, facts=TF2_RUNTIME) == []


# --- a package: the entry found through the imports ------------------------------------------

TRAINER = '''\
"""The training loop of the text model."""
import tensorflow as tf


def train(model, dataset, epochs, learning_rate):
    optimizer = tf.keras.optimizers.Adam(learning_rate)

    @tf.function
    def step(tokens, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(
                labels, model(tokens, training=True), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for epoch in range(epochs):
        for tokens, labels in dataset:
            loss = step(tokens, labels)
        tf.print("epoch", epoch, "loss", loss)
'''

MAIN = '''\
#!/usr/bin/env python
"""Entry point: python -m textmodel.main --epochs 3"""
from absl import app, flags
import tensorflow as tf

from textmodel import train
from textmodel.model import build_model

FLAGS = flags.DEFINE_integer("epochs", 3, "epochs")


def main(_):
    tf.get_logger().setLevel("INFO")
    dataset = tf.data.TFRecordDataset(["train.tfrecord"]).map(lambda x: (x, x))
    train(build_model(), dataset, flags.FLAGS.epochs, 1e-3)


if __name__ == "__main__":
    app.run(main)
'''

MODEL = '''\
"""The text model."""
import tensorflow as tf


def build_model(vocab=32000):
    return tf.keras.Sequential([tf.keras.layers.Embedding(vocab, 256), tf.keras.layers.Dense(2)])
'''

SKLEARN = '''\
"""Baseline without TensorFlow."""
from sklearn.linear_model import LogisticRegression

if __name__ == "__main__":
    LogisticRegression().fit([[0.0], [1.0]], [0, 1])
'''


@pytest.fixture()
def package_repo(tmp_path: Path) -> Path:
    make_repo(tmp_path / "text", {
        "requirements.txt": "tensorflow==2.6.5\nabsl-py\n",
        "textmodel/__init__.py": '"""The text model package."""\nfrom textmodel.trainer import train\n',
        "textmodel/main.py": MAIN,
        "textmodel/trainer.py": TRAINER,
        "textmodel/model.py": MODEL,
        "baseline.py": SKLEARN,
    })
    (tmp_path / "repos.txt").write_text("text\n")
    return tmp_path


def test_the_entry_of_a_package_is_found_through_its_imports(package_repo: Path) -> None:
    """main.py trains through ``from textmodel import train``, re-exported by the package."""
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=package_repo)
    assert done.returncode == 0, done.stderr
    record = json.loads((package_repo / "rep" / "run.json").read_text())["repos"][0]
    assert record["files_changed"] == ["textmodel/main.py"]
    main = show(package_repo / "text", BRANCH, "textmodel/main.py").decode()
    assert main == MAIN.replace('"""Entry point: python -m textmodel.main --epochs 3"""\n',
                                '"""Entry point: python -m textmodel.main --epochs 3"""\n' + INIT)
    assert record["file_kinds"] == {"tf2": 1, "tf-neutral": 2, "non-tf": 2}
    again = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--jobs", "1", cwd=package_repo)
    assert again.returncode == 0, again.stderr
    second = json.loads((package_repo / "rep2" / "run.json").read_text())["repos"][0]
    assert second["status"] == "unchanged"


def test_the_demo_has_a_tf2_repository(tmp_path: Path) -> None:
    done = cli("demo", "--report-dir", "rep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = next(repo for repo in json.loads((tmp_path / "rep" / "run.json").read_text())["repos"]
                  if repo["repo"] == "keras-tf2")
    assert record["status"] == "changed" and record["file_kinds"] == {"tf2": 1}
    assert sorted((f["rule_id"], f["line"], f["status"]) for f in record["findings"]) == [
        ("NPU061", 2, "migrated"), ("NPU064", 23, "migrated"), ("NPU065", 20, "migrated")]


# --- programs: entries that import no TF, transitive imports, configuration, mixed modes -------

LAUNCHER = '''\
"""Run an experiment: python run.py --config configs/base.yaml"""
import argparse
import sys

from experiments.runner import run_experiment


def parse(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/base.yaml")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(run_experiment(parse(sys.argv[1:])))
'''

RUNNER = '''\
"""Builds the data and the model, then trains."""
import tensorflow as tf

from experiments.trainer import fit_model


def run_experiment(args):
    tf.get_logger().setLevel("INFO")
    history = fit_model(args.config)
    return 0 if history else 1
'''

FIT = '''\
"""Keras training."""
import tensorflow as tf


def fit_model(config):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    features, targets = tf.random.normal([256, 8]), tf.random.normal([256, 1])
    return model.fit(features, targets, epochs=2).history
'''

LEGACY = '''\
"""Graph-mode evaluation kept from the TF 1.x code base."""
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def evaluate(checkpoint):
    with tf.Session() as sess:
        saver = tf.train.import_meta_graph(checkpoint + ".meta")
        saver.restore(sess, checkpoint)
        return sess.run("accuracy:0")
'''


def experiment_repo(root: Path, files: dict[str, str]) -> Path:
    """A TF 2.x repository whose entry imports no TensorFlow and trains two imports away."""
    base = {"requirements.txt": "tensorflow==2.6.5\npyyaml\n", "run.py": LAUNCHER,
            "experiments/__init__.py": "", "experiments/runner.py": RUNNER,
            "experiments/trainer.py": FIT}
    base.update(files)
    make_repo(root / "exp", {path: text for path, text in base.items() if text is not None})
    return root / "exp"


def check_lines(folder: Path) -> list[str]:
    done = cli("check", folder.name, cwd=folder.parent)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.splitlines()


def test_an_entry_that_imports_no_tf_gets_the_init_through_transitive_imports(tmp_path: Path) -> None:
    repo = experiment_repo(tmp_path, {})
    assert check_lines(repo) == [
        "exp/run.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and 'npu.open().as_default()' "
        "at the top of the entry script"]
    (tmp_path / "repos.txt").write_text("exp\n")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"][0]
    assert record["files_changed"] == ["run.py"]
    assert show(repo, BRANCH, "run.py").decode() == with_init(LAUNCHER)
    again = cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--jobs", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "rep2" / "run.json").read_text())["repos"][0]["status"] == "unchanged"


def test_the_configured_entry_is_the_entry_and_none_at_all_is_one_finding(tmp_path: Path) -> None:
    configured = experiment_repo(tmp_path / "a", {
        "run.py": None, "pyproject.toml": '[tool.npu-codemod]\nentry = ["experiments/trainer.py"]\n'})
    assert check_lines(configured) == [
        "exp/experiments/trainer.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and "
        "'npu.open().as_default()' at the top of the entry script"]
    without = experiment_repo(tmp_path / "b", {"run.py": None})
    assert check_lines(without) == [
        "exp:1:1: NPU061 no entry script found: add import npu_device as npu; npu.open().as_default() "
        "at the top of the script you run, or list it in [tool.npu-codemod] entry"]


def test_a_program_that_mixes_eager_and_compat_files_is_reported_not_rewritten(tmp_path: Path) -> None:
    repo = experiment_repo(tmp_path, {
        "experiments/legacy.py": LEGACY,
        "experiments/runner.py": RUNNER.replace("from experiments.trainer import fit_model\n",
                                                "from experiments.legacy import evaluate\n"
                                                "from experiments.trainer import fit_model\n")})
    lines = check_lines(repo)
    assert lines[-1] == (
        "exp/run.py:1:1: NPU061 this program mixes eager TF 2.x files (exp/experiments/trainer.py) and "
        "compat.v1 graph files (exp/experiments/legacy.py): npu_device.compat.enable_v1() switches the "
        "whole process to graph mode; port one mode (nothing in this program was rewritten)")
    assert [line.split(" ", 2)[:2] for line in lines[:-1]] == [  # the compat file's is NPU062's
        ["exp/experiments/legacy.py:1:1:", "NPU062"], ["exp/experiments/runner.py:1:1:", "NPU061"],
        ["exp/experiments/trainer.py:1:1:", "NPU061"]]
    assert all(line.endswith("(entry exp/run.py): not rewritten; port one mode") for line in lines[:-1])
    assert not any("fixable" in line for line in lines)


def test_a_module_two_mixed_programs_reach_names_the_same_entry_on_every_run(tmp_path: Path) -> None:
    # Regression: the entry a shared module's finding names was the first of a set's facts, so
    # it changed with the interpreter's hash seed (selective and full runs disagreed on Horovod).
    repo = experiment_repo(tmp_path, {
        "experiments/legacy.py": LEGACY, "b_run.py": LAUNCHER, "z_run.py": LAUNCHER,
        "experiments/runner.py": RUNNER.replace("from experiments.trainer import fit_model\n",
                                                "from experiments.legacy import evaluate\n"
                                                "from experiments.trainer import fit_model\n")})
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        done = cli("check", repo.name, cwd=repo.parent, env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode in (0, 1), done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    shared = [line for line in outputs.pop().splitlines() if line.startswith("exp/experiments/")]
    assert len(shared) == 3
    assert all(line.endswith("(entry exp/b_run.py): not rewritten; port one mode") for line in shared)


def test_global_options_changed_after_open_are_reported() -> None:
    before = KERAS_FIT.replace(
        "def main(args):\n",
        "def main(args):\n    npu.global_options().precision_mode = \"allow_mix_precision\"\n").replace(
        "import argparse\n", "import argparse\n\nimport npu_device as npu\n")
    after = before.replace('"""Fine-tune a text classifier with Keras fit (TensorFlow 2.x)."""\n',
                           '"""Fine-tune a text classifier with Keras fit (TensorFlow 2.x)."""\n'
                           "npu.open().as_default()\n")
    findings = assert_migrates(before, after, RULES, facts=TF2_RUNTIME)
    assert [(f.line, f.status, f.message.split(":")[0]) for f in findings] == [
        (2, "migrated", "added 'import npu_device as npu' and 'npu.open().as_default()' at the top of "
                        "the entry script"),
        (20, "unmigrated", "set npu.global_options() before npu.open()")]


def test_another_file_s_imports_leave_the_facts_the_rules_get_as_they_were() -> None:
    """The import graph is read for the entries only: the rules (and the result cache keyed by
    their facts) see what it decided, so adding an import elsewhere re-runs no other file."""
    loaded = load_rules(RuleSelection())

    def rule_facts(runner: str) -> frozenset[str]:
        files = {"run.py": LAUNCHER, "experiments/runner.py": runner, "experiments/trainer.py": FIT}
        facts = loaded.repository_facts((path, text.encode()) for path, text in files.items()).facts
        runtime = decide("2", {}, facts)
        return with_programs(with_runtime(facts, runtime), program_facts(facts, runtime.value)[0])

    before = rule_facts(RUNNER)
    after = rule_facts(RUNNER.replace("import tensorflow as tf\n", "import json\n\nimport tensorflow as tf\n"))
    assert before == after
    assert "tf2-entry:run.py" in before


def test_an_entry_setting_that_is_not_a_list_of_paths_is_one_finding(tmp_path: Path) -> None:
    repo = experiment_repo(tmp_path, {"pyproject.toml": "[tool.npu-codemod]\nentry = 3\n"})
    lines = check_lines(repo)
    assert "exp/pyproject.toml:1:1: NPU061 [tool.npu-codemod] entry must be a list of paths, got 3: " \
        "ignored" in lines  # the repository's pyproject.toml, spelled from where check ran
    assert any(line.startswith("exp/run.py:2:1: NPU061 [fixable]") for line in lines)  # __main__ scripts then
