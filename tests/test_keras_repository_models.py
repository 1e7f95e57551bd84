"""NPU041 on a Keras model a function of the repository returns, however the script reaches it.

The spec (``rules-beyond-sess-run.md``, NPU041): "A model counts as built by the file as in
NPU027", whose definition takes a call of a function of the repository that returns one. The
script may import that function through its package's re-export (``from lib.models import Net``,
``lib/models/__init__.py``: ``from .net import Net``: DeepCTR's examples) and the function may
return the model in a tuple (``model, prediction_model = efficientdet(...)``, ``build()[0]``:
EfficientDet's ``train.py``).

A script that imports no TensorFlow itself but trains such a model (DeepCTR's examples: ``from
deepctr.models import DeepFM``, ``model.fit``) trains in ``tf.keras``'s session under TF 1.x all
the same: the repository's analysis names it (``tf-keras-script:<path>``) and NPU041 gives it the
same session setup as a script that imports TensorFlow (under TF 2.x it is an entry of NPU061's).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.built_models import ModelFacts
from npu_codemod.codemods.tf_model_idioms import KERAS_SCRIPT_FACT
from npu_codemod.codemods.tf_scopes import decided_facts
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show
from support.packs import INIT, KERAS, repository_facts

NET = '''\
import tensorflow as tf


def Net(units):
    inputs = tf.keras.layers.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(units)(inputs)
    return tf.keras.models.Model(inputs=inputs, outputs=outputs)
'''
TUPLE_NET = '''\
from tensorflow import keras


def build(units):
    inputs = keras.layers.Input(shape=(4,))
    outputs = keras.layers.Dense(units)(inputs)
    train_model = keras.models.Model(inputs=inputs, outputs=outputs)
    if units > 8:
        return keras.models.Model(inputs=inputs, outputs=outputs), outputs
    return train_model, outputs
'''
PACKAGE = {"lib/__init__.py": "", "lib/models/__init__.py": "from .net import Net\n", "lib/models/net.py": NET}


def script(imports: str, model: str) -> str:
    """A TF 1.x Keras script that trains ``model`` (an expression) imported by ``imports``."""
    return f'''\
import numpy as np
import tensorflow as tf
{imports}


def main():
    model = {model}
    model.compile("adam", "mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 2)), epochs=1)


if __name__ == "__main__":
    main()
'''


def configured(source: str) -> str:
    """``source`` with NPU041's session set first and closed last in its ``__main__`` block."""
    return INIT + source.replace("    main()\n", "    npu_keras_sess = set_keras_session_npu_config()\n"
                                 "    main()\n    close_session(npu_keras_sess)\n")


@pytest.mark.parametrize("imports, model", [
    ("from lib.models import Net", "Net(2)"),
    ("from lib import models", "models.Net(2)"),
    ("import lib.models as models", "models.Net(2)"),
    ("from lib.models.net import Net", "Net(2)"),  # the module itself: found before too
], ids=["package", "package-module", "import-as", "module"])
def test_a_model_function_re_exported_by_its_package_trains_in_the_npu_session(imports: str, model: str):
    before = script(imports, model)
    facts = repository_facts({**PACKAGE, "train.py": before})
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 9, 4, "migrated")])


def test_a_name_the_package_does_not_re_export_is_not_guessed_at():
    before = script("from lib.models import Other", "Other(2)")
    facts = repository_facts({**PACKAGE, "train.py": before})
    assert_reports(KERAS, before, facts=facts, path="train.py", findings=[])


@pytest.mark.parametrize("model", ["build(2)[0]", "build(units=2)[0]"])
def test_the_model_element_of_a_returned_tuple_trains_in_the_npu_session(model: str):
    before = script("from net import build", model)
    facts = repository_facts({"net.py": TUPLE_NET, "train.py": before})
    assert {"model-function:net.build#0=keras"} == {fact for fact in facts if fact.startswith("model-function:")}
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 9, 4, "migrated")])


@pytest.mark.parametrize("target", ["model, outputs", "(model, outputs)", "[model, outputs]"])
def test_a_model_unpacked_from_a_returned_tuple_trains_in_the_npu_session(target: str):
    before = script("import net", "None").replace("    model = None\n", f"    {target} = net.build(2)\n")
    facts = repository_facts({"net.py": TUPLE_NET, "train.py": before})
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 9, 4, "migrated")])


@pytest.mark.parametrize("binding", [
    "    outputs, model = net.build(2)\n",  # the element that is no model
    "    model = net.build(2)[1]\n",
    "    model = net.build(2)\n",  # the tuple itself
    "    *rest, model = net.build(2)\n",  # starred: not followed
    "    model, outputs = net.build(2)\n    model = make()\n",  # rebound to the unknown
])
def test_an_element_not_shown_to_be_a_model_is_left_alone(binding: str):
    before = script("import net", "None").replace("    model = None\n", binding)
    facts = repository_facts({"net.py": TUPLE_NET, "train.py": before})
    assert_reports(KERAS, before, facts=facts, path="train.py", findings=[])


def test_tuples_of_different_shapes_give_no_element():
    varied = TUPLE_NET.replace("Model(inputs=inputs, outputs=outputs), outputs", "Model(inputs=inputs, outputs=outputs)")
    facts = repository_facts({"net.py": varied})
    assert not any(fact.startswith("model-function:") for fact in facts)
    assert ModelFacts(repository_facts({"net.py": TUPLE_NET})).kind("net.build", "train.py", element=0) == "keras"


def plain(imports: str, model: str) -> str:
    """:func:`script` importing no TensorFlow."""
    return script(imports, model).replace("import tensorflow as tf\n", "")


def decided(files: dict[str, str], tensorflow: str = "1") -> frozenset[str]:
    """The facts the rules get in a repository of ``files`` running TF ``tensorflow``."""
    return decided_facts(tensorflow, {}, repository_facts(files))[0]


@pytest.mark.parametrize("imports, model", [
    ("from lib.models import Net", "Net(2)"),
    ("from lib.models.net import Net", "Net(2)"),
    ("from net import build", "build(2)[0]"),
])
def test_a_script_importing_no_tf_that_trains_a_repository_model_gets_the_session(imports: str, model: str):
    before = plain(imports, model)
    facts = decided({**PACKAGE, "net.py": TUPLE_NET, "train.py": before})
    assert KERAS_SCRIPT_FACT + "train.py" in facts
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 8, 4, "migrated")])


def test_such_a_script_unpacking_the_model_from_a_tuple_gets_the_session():
    before = plain("import net", "None").replace("    model = None\n", "    model, outputs = net.build(2)\n")
    facts = decided({"net.py": TUPLE_NET, "train.py": before})
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 8, 4, "migrated")])


def test_such_a_script_without_a_main_block_is_reported():
    before = plain("from lib.models import Net", "Net(2)").split("\n\nif __name__")[0] + "\n"
    facts = decided({**PACKAGE, "train.py": before})
    (finding,) = assert_reports(KERAS, before, facts=facts, path="train.py",
                                findings=[("NPU041", 8, 4, "unmigrated")])
    assert finding.message.startswith('no if __name__ == "__main__": block: configure the Keras session: '
                                      "npu_keras_sess = set_keras_session_npu_config() before training")


def test_such_a_script_under_tf2_is_left_to_the_tf2_pack():
    before = plain("from lib.models import Net", "Net(2)")
    assert_reports(KERAS, before, facts=decided({**PACKAGE, "train.py": before}, "2"), path="train.py",
                   findings=[])


@pytest.mark.parametrize("imports, model, listed", [
    ("from sklearn.linear_model import LinearRegression", "LinearRegression()", False),  # not TF's
    ("from lib.models import Other", "Other(2)", False),  # nothing the package re-exports
    ("from keras.models import Sequential", "Sequential()", False),  # standalone Keras: NPU000's
    # the analysis lists a script calling a function that returns a model; NPU041 sees the element
    ("from net import build", "build(2)[1]", True),
])
def test_a_script_importing_no_tf_that_trains_anything_else_is_left_alone(imports: str, model: str, listed: bool):
    before = plain(imports, model)
    facts = decided({**PACKAGE, "net.py": TUPLE_NET, "train.py": before})
    assert (KERAS_SCRIPT_FACT + "train.py" in facts) == listed
    assert_reports(KERAS, before, facts=facts, path="train.py", findings=[])


#: The reproducers: TF 1.x scripts training a model of the package's re-export and a tuple's.
REPO = {
    "requirements.txt": "tensorflow==1.15.5\n",
    **PACKAGE,
    "net.py": TUPLE_NET,
    "train_package.py": script("from lib.models import Net", "Net(2)"),
    "train_tuple.py": script("from net import build", "None").replace(
        "    model = None\n", "    model, outputs = build(2)\n"),
    "train_element.py": script("from net import build", "build(2)[0]"),
    "train_plain.py": plain("from lib.models import Net", "Net(2)"),
}
SCRIPTS = ("train_element.py", "train_package.py", "train_plain.py", "train_tuple.py")


def test_run_configures_the_session_of_each_script_with_either_engine(tmp_path: Path):
    trees = {}
    for engine in ("selective", "full"):
        repo = make_repo(tmp_path / engine / "repo", REPO)
        (tmp_path / engine / "repos.txt").write_text("repo\n")
        cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
            "--report-dir", "report", "--workspace", "ws", cwd=tmp_path / engine, expect=0)
        found = sorted((row["path"], row["line"], row["status"])
                       for row in read_csv(tmp_path / engine / "report" / "findings.csv") if row["rule_id"] == "NPU041")
        assert found == [("train_element.py", "9", "migrated"), ("train_package.py", "9", "migrated"),
                         ("train_plain.py", "8", "migrated"), ("train_tuple.py", "9", "migrated")]
        for path in SCRIPTS:
            assert show(repo, DEFAULT_BRANCH, path).decode() == configured(REPO[path])
        trees[engine] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
        # a second run on the migrated files changes nothing
        make_repo(tmp_path / engine / "again", {**REPO, **{path: configured(REPO[path]) for path in SCRIPTS}})
        (tmp_path / engine / "again.txt").write_text("again\n")
        cli("run", "--repos", "again.txt", "--engine", engine, "--no-progress", "--no-cache",
            "--report-dir", "report2", "--workspace", "ws", cwd=tmp_path / engine, expect=0)
        assert read_csv(tmp_path / engine / "report2" / "repos.csv")[0]["status"] == "unchanged"
    assert trees["selective"] == trees["full"]


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_scan_with_the_keras_pack_alone_finds_the_script_importing_no_tf(tmp_path: Path, engine: str):
    # without the tf2 pack the analysis reads no import graph: the script is read for its training
    make_repo(tmp_path / "repo", REPO)
    (tmp_path / "repos.txt").write_text("repo\n")
    cli("scan", "--repos", "repos.txt", "--rules", "keras", "--engine", engine, "--no-progress", "--no-cache",
        "--report-dir", "report", "--workspace", "ws", cwd=tmp_path, expect=0)
    found = sorted(row["path"] for row in read_csv(tmp_path / "report" / "findings.csv") if row["rule_id"] == "NPU041")
    assert found == sorted(SCRIPTS)


def test_a_repository_model_replicated_over_gpus_is_still_a_keras_model():
    # DeepCTR's run_classification_criteo_multi_gpu.py: the model is rebound to its replica
    before = plain("from tensorflow.keras.utils import multi_gpu_model\nfrom lib.models import Net", "Net(2)").replace(
        "    model.compile", "    model = multi_gpu_model(model, gpus=2)\n    model.compile")
    facts = decided({**PACKAGE, "train.py": before})
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 10, 4, "migrated")])


#: Mask R-CNN's shape: a builder that returns a functional model, or the repository's own Keras
#: model class around it when there is more than one GPU (``ParallelModel``, another module).
PARALLEL = '''\
import tensorflow as tf


class ParallelModel(tf.keras.Model):
    def __init__(self, inner_model, gpu_count):
        self.inner_model = inner_model
        super(ParallelModel, self).__init__(inputs=inner_model.inputs, outputs=inner_model.outputs)
'''
REPLICATED_NET = '''\
import tensorflow as tf
from lib.parallel import ParallelModel


def build(units, gpu_count):
    inputs = tf.keras.layers.Input(shape=(4,))
    outputs = tf.keras.layers.Dense(units)(inputs)
    model = tf.keras.models.Model(inputs=inputs, outputs=outputs)
    if gpu_count > 1:
        model = ParallelModel(model, gpu_count)
    return model
'''
MASK_RCNN = '''\
import tensorflow as tf
import tensorflow.keras.layers as KL
import tensorflow.keras.models as KM


class MaskRCNN(object):
    def __init__(self, config):
        self.keras_model = self.build(config)

    def build(self, config):
        inputs = KL.Input(shape=(4,))
        model = KM.Model(inputs, KL.Dense(2)(inputs), name="mask_rcnn")
        if config.GPU_COUNT > 1:
            from lib.parallel import ParallelModel
            model = ParallelModel(model, config.GPU_COUNT)
        return model

    def train(self, generator, epochs):
        self.keras_model.compile(optimizer="sgd", loss="mse")
        self.keras_model.fit(generator, epochs=epochs)
'''


def test_a_builder_returning_a_model_or_the_repositorys_replica_of_it_makes_a_keras_model():
    files = {"lib/__init__.py": "", "lib/parallel.py": PARALLEL, "net.py": REPLICATED_NET}
    assert ModelFacts(repository_facts(files)).kind("net.build", "train.py") == "keras"
    before = script("from net import build", "build(2, 2)")
    facts = repository_facts({**files, "train.py": before})
    assert_migrates(KERAS, before, configured(before), facts=facts, path="train.py",
                    findings=[("NPU041", 9, 4, "migrated")])


def test_a_method_building_mask_rcnns_keras_model_trains_in_the_npu_session():
    facts = decided({"lib/__init__.py": "", "lib/parallel.py": PARALLEL, "mrcnn/model.py": MASK_RCNN})
    (finding,) = assert_reports(KERAS, MASK_RCNN, facts=facts, path="mrcnn/model.py",
                                findings=[("NPU041", 20, 8, "unmigrated")])
    assert finding.message.startswith('no if __name__ == "__main__": block')


def test_a_builder_returning_a_model_or_a_class_of_no_model_makes_none():
    other = PARALLEL.replace("(tf.keras.Model)", "(object)")
    files = {"lib/__init__.py": "", "lib/parallel.py": other, "net.py": REPLICATED_NET}
    assert ModelFacts(repository_facts(files)).kind("net.build", "train.py") is None
