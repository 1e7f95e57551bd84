"""TF 2.x code is not TF 1.x code: file kinds, the repository runtime, and what the TF 1.x
rules must not do to TF 2.x files (``spec/rules-tf2.md``, "Detecting TF 2.x files"; issue
#25 "TF 2.x code is not TF 1.x code", #31)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from npu_codemod.codemods.engine import FILE_RULE_ID
from npu_codemod.codemods.tf_runtime import (
    BAD_SETTING,
    DISAGREE,
    UNDETERMINED,
    UNREADABLE_PIN,
    admitted,
    decide,
    pins_of,
)
from npu_codemod.codemods.tf_versions import (
    CODE_COMPAT,
    CODE_E_ONLY,
    CODE_T1,
    CODE_T2,
    RUNTIME_UNKNOWN,
    TF1,
    TF2,
    TF2_CODE,
    TF2_COMPAT,
    TF2_ONLY_FROM_USES,
    TF2_ONLY_PROMOTED,
    TF_NEUTRAL,
    Use,
    file_kind,
    python2_use,
    signals_of,
    support_names,
)
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules

from support.cli import cli
from support.git import make_repo, show
from support.rules import assert_migrates, assert_unchanged, process, run_rules, sites
from support.tf2_scripts import COMPAT_KERAS, COMPAT_SESSION, CUSTOM_LOOP, KERAS_FIT

UNDETERMINED_RUNTIME = {"tf-runtime:undetermined"}
TF1_RUNTIME = {"tf-runtime:1"}
TF2_RUNTIME = {"tf-runtime:2"}
#: The rules of every pack but the tf2 pack: what npu-codemod ran before it.
TF1_RULES = frozenset(rule.id for rule in load_plugins().rules()
                      if rule.pack not in ("tf2", "tf2-distributed"))
#: What a run has when no rule is named.
DEFAULT_RULES = frozenset(rule.id for rule in default_rules(load_plugins().rules()))

KERAS_TF1 = '''\
"""Trains an MNIST MLP with tf.keras on TensorFlow 1.15 (graph mode)."""
import tensorflow as tf


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(512, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    return model


if __name__ == "__main__":
    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
    model = build_model()
    model.fit(x_train / 255.0, y_train, epochs=5, batch_size=128)
'''

LAYERS_ONLY = '''\
"""Building blocks shared by the training scripts."""
import tensorflow as tf


def conv_block(filters, strides=1):
    return tf.keras.Sequential([
        tf.keras.layers.Conv2D(filters, 3, strides=strides, padding="same", use_bias=False),
        tf.keras.layers.BatchNormalization(),
        tf.keras.layers.ReLU(),
    ])
'''

MIXED = '''\
"""A script half ported to TF 2: a Session and a TF 2.x seed."""
import tensorflow as tf


def run(loss):
    tf.random.set_seed(7)
    with tf.Session() as sess:
        return sess.run(loss)
'''


def kind(source: str, runtime: str) -> str:
    return file_kind(signals_of(source), runtime).kind


@pytest.mark.parametrize("source, runtime, expected", [
    (CUSTOM_LOOP, "undetermined", TF2),              # tf.function + GradientTape, no pins
    (CUSTOM_LOOP, "1", TF1),                         # same with tensorflow==1.15 pinned
    (COMPAT_SESSION, "2", TF2_COMPAT),               # compat.v1 + disable_v2_behavior, TF 2 pin
    (COMPAT_SESSION, "undetermined", TF1),           # ... and with no pin
    (MIXED, "undetermined", "conflict"),             # tf.Session + tf.random.set_seed
    (LAYERS_ONLY, "2", TF_NEUTRAL),                  # only tf.keras.layers in a TF 2 repository
    (KERAS_TF1, "1", TF1),                           # Keras fit with tensorflow-gpu==1.15.0
    (KERAS_TF1, "undetermined", TF2),                # ... and with nothing to say it is TF 1.x
    (KERAS_FIT, "undetermined", TF2),                # a TF 2.x-only API
    (KERAS_FIT, "1", "conflict"),                    # ... in a repository pinned to TF 1.x
])
def test_the_kinds_of_the_spec(source: str, runtime: str, expected: str) -> None:
    assert kind(source, runtime) == expected


def test_a_tf1_only_api_in_a_tf2_repository_is_a_conflict_not_a_rewrite() -> None:
    source = CUSTOM_LOOP.replace("    optimizer = tf.keras.optimizers.Adam(args.learning_rate)\n",
                                 "    optimizer = tf.train.AdamOptimizer(args.learning_rate)\n")
    findings = assert_unchanged(source, facts=TF2_RUNTIME)
    assert sites(findings) == [(FILE_RULE_ID, 23, 16, "unmigrated")]
    assert findings[0].message.startswith("TF 1.x-only API tf.train.AdamOptimizer in a repository "
                                          "pinned to TF 2.x: move it to tf.compat.v1")


def test_a_file_using_both_versions_apis_is_reported_at_the_later_one() -> None:
    findings = assert_unchanged(MIXED, facts=UNDETERMINED_RUNTIME)
    assert sites(findings) == [(FILE_RULE_ID, 7, 9, "unmigrated")]
    assert "tf.random.set_seed, tf.Session" in findings[0].message


def test_graph_api_through_compat_v1_in_eager_code_is_a_conflict() -> None:
    source = CUSTOM_LOOP.replace(
        "    model = small_cnn(num_classes=10)\n",
        "    model = small_cnn(num_classes=10)\n    tf.compat.v1.add_to_collection('models', model)\n")
    findings = assert_unchanged(source, facts=UNDETERMINED_RUNTIME)
    assert [f.message.split(" (")[0] for f in findings] == [
        "graph-mode compat.v1 API tf.compat.v1.add_to_collection in eager TF 2.x code"]


@pytest.mark.parametrize("source", [CUSTOM_LOOP, KERAS_FIT])
def test_no_tf1_rule_writes_into_a_tf2_file(source: str) -> None:
    """A batch (NPU002), a dropout (NPU004), Keras fit (NPU041): none is rewritten; without the
    tf2 pack one finding says how the file is migrated."""
    findings = assert_unchanged(source, TF1_RULES, facts=UNDETERMINED_RUNTIME)
    assert [(f.rule_id, f.status, f.message) for f in findings] == [
        (FILE_RULE_ID, "unmigrated", TF2_CODE)]


@pytest.mark.parametrize("source", [CUSTOM_LOOP, KERAS_FIT])
def test_with_every_default_rule_a_tf2_entry_gets_only_the_tf2_steps(source: str) -> None:
    """The device init and static batches, nothing of the TF 1.x rules (no npu_bridge, the
    tf.nn.dropout and Keras fit left as they are)."""
    new, findings = run_rules(source, DEFAULT_RULES, facts=UNDETERMINED_RUNTIME)
    init = "import npu_device as npu\nnpu.open().as_default()\n"
    assert new is not None
    assert new.replace(init, "", 1).replace(", drop_remainder=True", "") == source
    assert {f.rule_id for f in findings if f.status == "migrated"} == {"NPU061", "NPU064"}
    assert {f.rule_id for f in findings} <= {"NPU061", "NPU064", "NPU071"}


def test_the_same_loop_on_a_tf1_runtime_gets_the_tf1_rules() -> None:
    new, findings = run_rules(CUSTOM_LOOP, facts=TF1_RUNTIME)
    assert new is not None and "from npu_bridge.npu_init import *" in new
    assert {f.rule_id for f in findings} == {"NPU001", "NPU002"}


def test_a_keras_script_of_a_tf1_repository_keeps_the_keras_session_rules() -> None:
    new, findings = run_rules(KERAS_TF1, facts=TF1_RUNTIME)
    assert new is not None and "set_keras_session_npu_config()" in new
    assert "NPU041" in {f.rule_id for f in findings}


def test_compat_v1_code_on_tf2_gets_the_compat_header_not_npu_bridge() -> None:
    new, findings = run_rules(COMPAT_SESSION, facts=TF2_RUNTIME)
    assert new is not None
    assert "npu_bridge" not in new
    header = "import npu_device\nfrom npu_device.compat.v1.npu_init import *\nnpu_device.compat.enable_v1()\n"
    assert header in new and new.index(header) < new.index("import tensorflow.compat.v1 as tf")
    assert {f.rule_id for f in findings} == {"NPU007", "NPU062", "NPU071"}
    assert_migrates(COMPAT_SESSION, new, facts=TF2_RUNTIME)  # compiles; a second run changes nothing


def test_a_compat_file_migrated_with_npu_bridge_gets_the_tf2_header_instead() -> None:
    """npu-codemod before the TF 2.x pack wrote the TF 1.15 adapter's import."""
    old = run_rules(COMPAT_SESSION, facts=TF1_RUNTIME)[0]
    assert old is not None and "from npu_bridge.npu_init import *" in old
    new, findings = run_rules(old, facts=TF2_RUNTIME)
    assert new is not None and "npu_bridge" not in new and "npu_device.compat.enable_v1()" in new
    assert [f.message.split(":")[0] for f in findings if f.rule_id == "NPU062"] == [
        "replaced 'from npu_bridge.npu_init import *' by the TF Adapter 2.x compat header"]


def test_eager_execution_enabled_on_tf2_is_no_eager_finding() -> None:
    """enable_v2_behavior is a TF 2.x idiom: TF 2.x code, not the TF 1.x eager-file finding."""
    source = CUSTOM_LOOP.replace("import tensorflow as tf\n",
                                 "import tensorflow.compat.v1 as tf1\nimport tensorflow as tf\n\n"
                                 "tf1.enable_v2_behavior()\n")
    findings = assert_unchanged(source, TF1_RULES, facts=UNDETERMINED_RUNTIME)
    assert [f.message for f in findings] == [TF2_CODE]


def test_neutral_files_of_a_tf2_repository_are_left_to_the_tf2_pack() -> None:
    assert process(LAYERS_ONLY, facts=TF2_RUNTIME).kind == TF_NEUTRAL
    assert assert_unchanged(LAYERS_ONLY, facts=TF2_RUNTIME) == []


def test_the_signals_a_file_gives_the_repository() -> None:
    assert signals_of(CUSTOM_LOOP).facts() == {CODE_E_ONLY}
    assert signals_of(KERAS_FIT).facts() == {CODE_T2}
    assert signals_of(MIXED).facts() == {CODE_T1, CODE_T2}
    assert signals_of(COMPAT_SESSION).facts() == {CODE_COMPAT}  # its kind depends on the runtime


# --- the repository runtime ------------------------------------------------------------------


@pytest.mark.parametrize("specifier, expected", [
    (">=2.4", "2"), ("==2.3.0", "2"), ("==2.0.0b1", "2"), (">=2.0.0rc0", "2"), ("~=2.6", "2"), (">=2.4,<2.7", "2"), ("==2.6.*", "2"),
    ("==1.15", "1"), ("<2", "1"), ("==1.15.5", "1"), ("~=1.14", "1"),
    ("", None), (">=1.14", None), (">=1.15,<3", None),
])
def test_pins_are_pep440_specifiers(specifier: str, expected: str) -> None:
    assert admitted(SpecifierSet(specifier)) == expected


@pytest.mark.parametrize("path, text", [
    ("requirements.txt", "numpy>=1.19\ntensorflow-gpu==2.3.0  # CUDA 10.1\nabsl-py\n"),
    ("setup.py", "from setuptools import setup\n\nsetup(name='vit', install_requires=[\n"
                 "    'numpy', 'tensorflow>=2.4,<2.7'])\n"),
    ("setup.cfg", "[metadata]\nname = vit\n\n[options]\ninstall_requires =\n    numpy\n"
                  "    tensorflow~=2.6\n"),
    ("pyproject.toml", "[project]\nname = 'vit'\ndependencies = ['tensorflow-cpu>=2.5']\n"),
    ("pyproject.toml", "[tool.poetry.dependencies]\npython = '^3.8'\ntensorflow = '^2.6'\n"),
    ("Pipfile", "[packages]\nnumpy = '*'\ntensorflow = '==2.6.5'\n"),
    ("environment.yml", "name: vit\ndependencies:\n  - python=3.8\n  - tensorflow=2.6\n"
                        "  - pip:\n    - tf-models-official\n"),
])
def test_each_kind_of_manifest_pins_tf2(path: str, text: str) -> None:
    assert [pin.runtime for pin in pins_of(path, text)] == ["2"]
    assert decide(None, {path: text}, ()).value == "2"


def test_requirements_follow_includes() -> None:
    manifests = {"requirements.txt": "-r requirements/base.txt\npytest\n",
                 "requirements/base.txt": "intel-tensorflow==1.15.2\n"}
    assert decide(None, manifests, ()).value == "1"


def test_configuration_wins_then_pins_then_code() -> None:
    pinned = {"requirements.txt": "tensorflow==1.15.5\n"}
    assert decide("2", pinned, {CODE_T1}).value == "2"
    assert decide(None, pinned, {CODE_T2}).value == "1"
    assert decide(None, {}, {CODE_T2}).value == "2"
    assert decide(None, {}, {CODE_T1}).value == "1"
    assert decide(None, {"requirements.txt": "tensorflow\n"}, {CODE_T1, CODE_T2}).value == "undetermined"


def test_the_repositorys_own_configuration_decides_before_its_pins() -> None:
    manifests = {"pyproject.toml": "[project]\nname = 'x'\ndependencies = ['tensorflow>=1.15']\n\n"
                                   "[tool.npu-codemod]\ntensorflow = \"2\"\n",
                 "requirements.txt": "tensorflow==1.15.5\n"}
    assert decide(None, manifests, {CODE_T1}).value == "2"
    assert decide("1", manifests, ()).value == "1"  # the run's configuration first


def test_disagreeing_pins_decide_nothing_and_are_named() -> None:
    manifests = {"requirements.txt": "tensorflow==1.15.5\n",
                 "tf2/requirements.txt": "tensorflow>=2.4\n"}
    runtime = decide(None, manifests, {CODE_E_ONLY})
    assert runtime.value == "undetermined"
    assert runtime.messages == (
        ("requirements.txt", DISAGREE.format(pins="requirements.txt: tensorflow==1.15.5; "
                                                  "tf2/requirements.txt: tensorflow>=2.4")),
        ("", UNDETERMINED))


def test_a_broken_pin_and_a_bad_setting_are_each_one_message_never_silent() -> None:
    manifests = {"requirements.txt": "numpy>=1.19\ntensorflow-gpu=1.15\nscipy\n",
                 "tf2/requirements.txt": "tensorflow>=2.4\n",
                 "pyproject.toml": "[tool.npu-codemod]\ntensorflow = 2\n"}
    runtime = decide(None, manifests, {CODE_T1})
    assert runtime.value == "2"  # the one readable pin decides; the broken one decides nothing
    assert runtime.messages == (
        ("requirements.txt", UNREADABLE_PIN.format(pin="tensorflow-gpu=1.15")),
        ("pyproject.toml", BAD_SETTING.format(value=2)))
    assert decide(None, {"requirements.txt": "tensorflowjs==4.0\nnot a requirement at all\n"},
                  {CODE_T1}).messages == ()  # other packages' lines are none of its business


def test_a_requirement_setup_py_builds_at_run_time_is_no_pin() -> None:
    """Regression (tensorflow/addons ``setup.py:93,98,103``): ``"tensorflow>={},<{}".format(
    MIN, MAX)`` in ``extras_require`` was read as its template and reported three times "not
    valid PEP 508 ... fix it" (a site left each); a formatted, concatenated or f-string
    requirement is valid when setup.py runs: no pin, the version comes from elsewhere."""
    setup = ("from setuptools import setup\nMIN, MAX = '2.8.0', '2.11.0'\n"
             "setup(name='addons', install_requires=['typeguard', 'tensorflow' + SUFFIX],\n"
             "      extras_require={'tensorflow': ['tensorflow>={},<{}'.format(MIN, MAX)],\n"
             "                      'tensorflow-gpu': [f'tensorflow-gpu>={MIN},<{MAX}'],\n"
             "                      'tensorflow-cpu': ['tensorflow-cpu>=%s' % MIN]})\n")
    assert pins_of("setup.py", setup) == []
    runtime = decide(None, {"setup.py": setup, "requirements.txt": "tensorflow==2.9.1\n"}, ())
    assert (runtime.value, runtime.messages) == ("2", ())
    assert decide(None, {"setup.py": setup.replace("MIN, MAX)", "MIN, MAX), 'tensorflow=1'")},
                  ()).messages == (("setup.py", UNREADABLE_PIN.format(pin="tensorflow=1")),)


# --- through a run -----------------------------------------------------------------------------


@pytest.fixture()
def mixed_repo(tmp_path: Path) -> Path:
    """A TF 1.x repository with a TF 2.x example folder (a real campaign's shape)."""
    make_repo(tmp_path / "models", {
        "requirements.txt": "tensorflow-gpu==1.15.0\nnumpy\n",
        "keras_mnist.py": KERAS_TF1,
        "examples/tf2/train_text.py": KERAS_FIT,
        "examples/tf2/README.md": "Needs TensorFlow 2.6.\n",
        "utils/blocks.py": LAYERS_ONLY,
        "tools/plot.py": "import matplotlib.pyplot as plt\n",
    })
    (tmp_path / "repos.txt").write_text("models\n")
    return tmp_path


def test_a_run_counts_files_per_kind_and_reports_the_tf2_file(mixed_repo: Path) -> None:
    done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=mixed_repo)
    assert done.returncode == 0, done.stderr
    record = json.loads((mixed_repo / "rep" / "run.json").read_text())["repos"][0]
    assert record["file_kinds"] == {"tf1": 1, "tf-neutral": 1, "conflict": 1, "non-tf": 1}
    conflict = [f for f in record["findings"] if f["path"] == "examples/tf2/train_text.py"]
    assert [(f["rule_id"], f["status"]) for f in conflict] == [(FILE_RULE_ID, "unmigrated")]
    assert "in a repository pinned to TF 1.x" in conflict[0]["message"]
    assert record["files_changed"] == ["keras_mnist.py"]
    assert show(mixed_repo / "models", "npu-codemod/sess-run-to-npu",
                "examples/tf2/train_text.py").decode() == KERAS_FIT
    page = (mixed_repo / "rep" / "report.html").read_text()
    assert "tf1 1 · tf-neutral 1 · conflict 1 · non-tf 1" in page


def test_tensorflow_option_overrides_the_pins(mixed_repo: Path) -> None:
    done = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--tensorflow", "2",
               cwd=mixed_repo)
    assert done.returncode == 0, done.stderr
    record = json.loads((mixed_repo / "rep" / "run.json").read_text())["repos"][0]
    assert record["file_kinds"] == {"tf2": 2, "tf-neutral": 1, "non-tf": 1}
    found = {(f["path"], f["rule_id"]) for f in record["findings"] if f["rule_id"] != "NPU071"}
    assert found == {("keras_mnist.py", "NPU061"), ("examples/tf2/train_text.py", "NPU061"),
                     ("examples/tf2/train_text.py", "NPU064")}


def test_check_reads_the_pins_of_the_folder(mixed_repo: Path) -> None:
    repo = mixed_repo / "models"
    done = cli("check", ".", cwd=repo, expect=1)
    lines = done.stdout.splitlines()
    assert any(line.startswith("examples/tf2/train_text.py:18:") and "pinned to TF 1.x" in line
               for line in lines), lines


@pytest.mark.parametrize("partial", [
    "import npu_device\nnpu_device.compat.enable_v1()\n",
    "import npu_device as npu\nfrom npu_device.compat.v1.npu_init import *\n",
])
def test_a_partial_compat_header_is_completed_next_to_its_lines(partial: str) -> None:
    before = COMPAT_SESSION.replace("import numpy as np\n", partial + "import numpy as np\n")
    new, findings = run_rules(before, facts=TF2_RUNTIME)
    assert new is not None
    header = [line for line in new[:new.index("import numpy as np")].splitlines() if "npu" in line]
    assert sorted(header) == sorted(partial.splitlines() + [
        "from npu_device.compat.v1.npu_init import *" if "enable_v1" in partial
        else "npu.compat.enable_v1()"])
    assert header[-1].endswith("enable_v1()")
    assert [f.message.split(" (")[0] for f in findings if f.rule_id == "NPU062"] == [
        "added the missing lines of the npu_device.compat.v1 header"]
    assert_migrates(before, new, facts=TF2_RUNTIME)


def test_tf_device_in_a_compat_file_is_reported_and_keras_gets_the_compat_warning() -> None:
    """The compat.v1 guide deletes tf.device (NPU008 reports it, no soft placement set) and
    warns that some Keras features are limited in session mode (NPU041's message)."""
    new, findings = run_rules(COMPAT_KERAS, facts=TF2_RUNTIME | {"uses-tf-device"})
    assert new is not None and 'with tf.device("/cpu:0"):' in new and "allow_soft_placement" not in new
    assert "npu_keras_sess = set_keras_session_npu_config()" in new
    by_rule = {f.rule_id: f for f in findings}
    assert (by_rule["NPU008"].line, by_rule["NPU008"].status) == (18, "unmigrated")
    assert by_rule["NPU008"].message.startswith("remove tf.device(...) for the NPU")
    assert "some Keras features (such as a dynamic learning rate) are limited on the NPU" \
        in by_rule["NPU041"].message
    assert_migrates(COMPAT_KERAS, new, facts=TF2_RUNTIME | {"uses-tf-device"})
    tf1 = run_rules(COMPAT_KERAS, facts=TF1_RUNTIME | {"uses-tf-device"})[1]
    assert "limited on the NPU" not in next(f for f in tf1 if f.rule_id == "NPU041").message
    assert "NPU008" not in {f.rule_id for f in tf1}  # no session here: nothing to configure


def test_check_on_a_folder_reads_that_repository_s_own_setting(tmp_path: Path) -> None:
    """``check some/repo`` reads ``some/repo/pyproject.toml`` as ``run`` reads the repository's."""
    repo = tmp_path / "classifier"
    repo.mkdir()
    (repo / "train.py").write_text(CUSTOM_LOOP)
    undecided = cli("check", "classifier", cwd=tmp_path)
    # a finding about the repository is at the folder named
    assert undecided.stdout.splitlines()[0].startswith(
        "classifier:1:1: NPU000 TensorFlow major version undetermined")
    # TF 2.x idioms only: the file is TF 2.x code, and its __main__ block an entry
    assert "classifier/train.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and " \
        "'npu.open().as_default()' at the top of the entry script" in undecided.stdout.splitlines()
    (repo / "pyproject.toml").write_text('[tool.npu-codemod]\ntensorflow = "2"\n')
    decided = cli("check", "classifier", cwd=tmp_path)
    lines = decided.stdout.splitlines()
    assert not any("undetermined" in line for line in lines)
    assert "classifier/train.py:2:1: NPU061 [fixable] add 'import npu_device as npu' and " \
        "'npu.open().as_default()' at the top of the entry script" in lines


def test_the_device_init_npu061_writes_leaves_the_repository_runtime_as_it_was() -> None:
    """``npu.open().as_default()`` keeps a file ``tf2`` (already migrated) but is no code fact:
    a rerun over the migrated branch decides the runtime as the first run did (an idiom-only
    file stays idiom-only; DeepRL-TensorFlow2 lost its "undetermined" finding on the rerun)."""
    loop = ("import tensorflow as tf\n\n\ndef step(model, x):\n    with tf.GradientTape() as tape:\n"
            "        loss = model(x)\n    return tape.gradient(loss, model.trainable_variables)\n")
    header = "import npu_device as npu\nnpu.open().as_default()\n"
    before, after = signals_of(loop, "a2c.py"), signals_of(header + loop, "a2c.py")
    assert before.facts() == after.facts() == {CODE_E_ONLY}
    assert file_kind(after, RUNTIME_UNKNOWN).kind == TF2
    scaled = header + loop + "opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n"
    assert signals_of(scaled, "a2c.py").facts() == {CODE_T2}


@pytest.mark.parametrize("api", ["tf.optimizers.SGD", "tf.losses.SparseCategoricalCrossentropy",
                                 "tf.metrics.Mean"])
def test_tf1_has_no_optimizers_module_nor_loss_and_metric_classes(api: str) -> None:
    """None of these is in tf.compat.v1 (TF 1.x's tf.losses/tf.metrics hold functions), so each
    is TF 2.x evidence; before, a Keras script using only them was classed tf1 without pins
    and got the TF 1.x rules' npu_bridge import."""
    signals = signals_of(f"import tensorflow as tf\nx = {api}()\n", "bench.py")
    assert signals.t2 is not None and signals.t2.spelled == api
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == TF2
    reduction = signals_of("import tensorflow as tf\nr = tf.losses.Reduction.SUM\n", "bench.py")
    assert reduction.t2 is None  # in TF 1.x too



def test_the_adapter_s_calls_are_no_signal_of_the_file_s_own_code() -> None:
    """In a TF 2.x repository a file's kind is decided without what the tf2 packs write (the
    device init, ``npu.distribute.*``): NPU068's ``all_reduce`` in a ``tf-neutral`` file keeps
    it ``tf-neutral`` on the rerun, in an undetermined repository too (its neutral files get the
    tf2 rules). Where the runtime is TF 1.x or not given, an adapter use still says the file was
    ported to TF Adapter 2.x (no TF 1.x rule must write npu_bridge into it); the repository's
    facts never come from it."""
    neutral = ("from layers import *\nfrom tensorflow.python import keras\n\n\ndef step(model, x):\n"
               "    grads = tape.gradient(model(x), model.trainable_variables)\n")
    reduced = neutral + "    grads = npu.distribute.all_reduce(grads, \"mean\")\n"
    ported = "import npu_device as npu\n" + reduced
    assert signals_of(neutral, "model.py").facts() == signals_of(ported, "model.py").facts() == frozenset()
    for source, runtime in ((neutral, "2"), (ported, "2"), (neutral, RUNTIME_UNKNOWN), (ported, RUNTIME_UNKNOWN)):
        assert file_kind(signals_of(source, "model.py"), runtime).kind == TF_NEUTRAL
    assert file_kind(signals_of(ported, "model.py"), "").kind == TF2  # no analysis: ported by hand
    assert file_kind(signals_of(ported, "model.py"), "1").kind == "conflict"


def test_the_adapter_s_loss_scale_optimizer_stands_for_the_class_it_replaced() -> None:
    """NPU065 replaces the Keras LossScaleOptimizer, a T2 API, by the adapter's: the rerun
    still sees T2 there (the file stays ``tf2``, the repository TF 2.x by its code)."""
    before = "import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam())\n"
    after = ("import npu_device as npu\nimport tensorflow as tf\n"
             "opt = npu.train.optimizer.NpuLossScaleOptimizer(tf.keras.optimizers.Adam())\n")
    imported = ("from npu_device.train.optimizer.npu_loss_scale_optimizer import NpuLossScaleOptimizer\n"
                "import tensorflow as tf\nopt = NpuLossScaleOptimizer(tf.keras.optimizers.Adam())\n")
    for source in (before, after, imported):
        signals = signals_of(source, "train.py")
        assert signals.facts() == {CODE_T2}
        assert file_kind(signals, "2").kind == TF2


@pytest.mark.parametrize("use", [
    "tf.losses.categorical_crossentropy(y, logits, from_logits=True)",  # TF 1.x: softmax_cross_entropy
    "tf.keras.losses.Reduction.NONE",
    "tf.lite.TFLiteConverter.from_keras_model(model)",  # TF 1.x: from_keras_model_file
    "tf.summary.trace_on(graph=True)",
    "tf.keras.preprocessing.image_dataset_from_directory(path, image_size=(224, 224))",
    "tf.initializers.GlorotUniform()",
    "tf.image.resize_with_pad(image, 416, 416)",  # TF 1.x: resize_image_with_pad
    "tf.data.AUTOTUNE",  # TF 1.x: tf.data.experimental.AUTOTUNE
    "tf.data.INFINITE_CARDINALITY",
])
def test_tf2_only_apis_of_real_tf2_files_are_t2(use: str) -> None:
    """Uses that classed real TF 2.x files (TensorFlow2.0-Examples, yolov3-tf2, the TF 2.x
    tutorials) ``tf-neutral`` or left their kind to TF 2.x idioms: TF 2.x-only all the same."""
    signals = signals_of(f"import tensorflow as tf\n\n\ndef export(model, y, logits, path, image):\n    return {use}\n",
                         "export.py")
    assert signals.t2 is not None and use.startswith(signals.t2.spelled)
    assert file_kind(signals, RUNTIME_UNKNOWN).kind == TF2


def test_the_t2_apis_found_in_real_code_are_absent_from_tf_1_15() -> None:
    """Each of :data:`TF2_ONLY_FROM_USES` is an API of TensorFlow 2 (the venv's), absent from its
    tf.compat.v1 (TF 1.15's API as TF 2 keeps it: a name there may have been in TF 1.15) and
    from Ascend's TF 1.15 list."""
    tf = pytest.importorskip("tensorflow")
    tf1_listed = support_names("api_support.csv")

    def found(root: object, dotted: str) -> bool:
        for part in dotted.split("."):
            if not hasattr(root, part):
                return False
            root = getattr(root, part)
        return True

    assert [name for name in TF2_ONLY_FROM_USES if not found(tf, name)] == []
    assert [name for name in TF2_ONLY_FROM_USES if found(tf.compat.v1, name)] == []
    assert [name for name in TF2_ONLY_FROM_USES if f"tf.{name}" in tf1_listed] == []


def test_tf_through_a_star_import_of_the_repository_s_module_is_tensorflow() -> None:
    """MusicTransformer's model.py, train.py and generate.py reach ``tf`` only through
    ``from custom.layers import *``: their ``tf.GradientTape`` and ``tf.summary.create_file_writer``
    were no signals, so four TF 2.x files were ``tf-neutral``. A ``tf`` the file binds itself, or
    a star import of an adapter's ``npu_init`` (which binds ``tf`` itself), is left as it was."""
    model = ("from custom.layers import *\nfrom tensorflow.python import keras\n\n\n"
             "class MusicTransformer(keras.Model):\n    def train_on_batch(self, x, y):\n"
             "        with tf.GradientTape() as tape:\n            loss = self.loss(y, self(x))\n"
             "        return tape.gradient(loss, self.trainable_variables)\n")
    train = ("from custom.layers import *\nfrom tensorflow.python.keras.optimizer_v2.adam import Adam\n"
             "train_summary_writer = tf.summary.create_file_writer('logs/train')\n")
    assert signals_of(model, "model.py").e is not None
    assert file_kind(signals_of(train, "train.py"), "2").kind == TF2
    parameter = train.replace("train_summary_writer = tf", "def log(tf):\n    return tf")
    assert file_kind(signals_of(parameter, "train.py"), "2").kind == TF_NEUTRAL
    adapter = train.replace("from custom.layers import *", "from npu_bridge.npu_init import *")
    assert file_kind(signals_of(adapter, "train.py"), "2").kind == TF_NEUTRAL


def test_compat_header_imports_follow_the_header_after_future_imports() -> None:
    """The imports rules ask for (NPU007's ``RewriterConfig``) go after NPU062's header, as
    after NPU001's import in a TF 1.x file: the blank line after the ``__future__`` imports
    stays where it was."""
    before = ('"""Inference."""\nfrom __future__ import absolute_import\nfrom __future__ import print_function\n\n'
              "import base64\nimport tensorflow.compat.v1 as tf\n\ntf.disable_v2_behavior()\n\n\n"
              "def main():\n    with tf.Session() as sess:\n        print(sess.run(tf.constant(1)))\n")
    after = ('"""Inference."""\nfrom __future__ import absolute_import\nfrom __future__ import print_function\n\n'
             "import npu_device\nfrom npu_device.compat.v1.npu_init import *\nnpu_device.compat.enable_v1()\n"
             "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
             "import base64\nimport tensorflow.compat.v1 as tf\n\ntf.disable_v2_behavior()\n\n\n"
             "def main():\n    config = tf.ConfigProto()\n"
             "    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
             '    custom_op.name = "NpuOptimizer"\n'
             "    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF\n"
             "    config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF\n"
             "    with tf.Session(config=config) as sess:\n        print(sess.run(tf.constant(1)))\n")
    assert_migrates(before, after, facts=TF2_RUNTIME)


PYTHON2 = '''\
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
loss = tf.reduce_mean(tf.layers.dense(x, 1))
step = tf.train.AdamOptimizer(0.1).minimize(loss)

sess = tf.Session()
try:
    sess.run(step, feed_dict={x: [[1, 2, 3, 4]]})
except Exception, e:
    print e
'''


def test_python2_code_is_tf1_code_not_a_file_with_no_signal() -> None:
    """``ast`` cannot read Python 2, so the file had no signal at all: ``tf-neutral``, and the
    TF 2.x pack ran on it beside TF 2.x files (its session left as it was). TensorFlow 2 runs
    on Python 3 only: Python 2 syntax is a T1 signal."""
    assert python2_use(PYTHON2) == Use(10, 7, "Python 2 code")
    assert signals_of(PYTHON2, "v1/train.py").t1 == Use(10, 7, "Python 2 code")
    assert python2_use("import tensorflow as tf\nx = (\n") is None  # broken, not Python 2
    for runtime in ("undetermined", "1"):
        assert kind(PYTHON2, runtime) == TF1
    new, findings = run_rules(PYTHON2, facts=UNDETERMINED_RUNTIME)
    assert new is not None and "tf.Session(config=config)" in new
    assert {"NPU007", "NPU010"} <= {f.rule_id for f in findings}


def test_python2_code_in_a_tf2_repository_is_reported_not_rewritten() -> None:
    findings = assert_unchanged(PYTHON2, facts=TF2_RUNTIME)
    assert [(f.rule_id, f.line, f.message.split(":")[0]) for f in findings] == [
        (FILE_RULE_ID, 10, "Python 2 code in a repository pinned to TF 2.x")]


KERAS_ON_A_COMPAT_SESSION = '''\
import numpy as np
import tensorflow as tf

config = tf.compat.v1.ConfigProto()
config.gpu_options.allow_growth = True
tf.compat.v1.keras.backend.set_session(tf.compat.v1.Session(config=config))

model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
model.compile(optimizer="adam", loss="mse")
model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1)
'''


def test_keras_training_beside_a_compat_v1_session_is_graph_code_not_a_conflict() -> None:
    """The spec's E counts Keras training only "in a file with no C/T1 signal": a file that
    sets a compat.v1 session for Keras (C2) is graph code, not "compat.v1 API in eager code"."""
    assert signals_of(KERAS_ON_A_COMPAT_SESSION, "train.py").e is None
    assert kind(KERAS_ON_A_COMPAT_SESSION, "undetermined") == TF1
    assert kind(KERAS_ON_A_COMPAT_SESSION, "2") == TF2_COMPAT


def test_compat_v1_code_with_no_pin_is_told_its_adapter_depends_on_the_version() -> None:
    """compat.v1 code runs on TF 1.15 and on TF 2.x: undecided, it gets TF Adapter 1.x
    (``npu_bridge``), which a TF 2.x install does not have: the finding says so (spec rule 4)."""
    runtime = decide(None, {}, frozenset({CODE_COMPAT}))
    assert runtime.value == RUNTIME_UNKNOWN
    assert [text for _, text in runtime.messages] == [UNDETERMINED]
    assert "tf.compat.v1 code as TF 1.x code" in UNDETERMINED
    assert decide(None, {}, frozenset({CODE_COMPAT, CODE_T1})).messages == ()  # TF 1.x by its code


def test_the_constants_promoted_into_tf_data_after_tf_1_15_are_tf_2s() -> None:
    """Each of :data:`TF2_ONLY_PROMOTED` is in TF 2's ``tf.data`` (the venv's) and in neither of
    Ascend's TF 1.15 list nor TensorFlow 1.15's ``tf.data`` (promoted from ``experimental`` by
    TF 2.3 and 2.4), while ``tf.data.experimental``'s spelling, TF 1.15's, is no signal."""
    tf = pytest.importorskip("tensorflow")
    tf1_listed = support_names("api_support.csv")
    assert [name for name in TF2_ONLY_PROMOTED if not hasattr(tf.data, name.partition(".")[2])] == []
    assert [name for name in TF2_ONLY_PROMOTED if f"tf.{name}" in tf1_listed] == []
    legacy = signals_of("import tensorflow as tf\nAUTO = tf.data.experimental.AUTOTUNE\n", "data.py")
    assert legacy.t2 is None


DATALOADER = '''"""Reads the flowers TFRecords (reference: a TPU introduction notebook)."""

import re

import numpy as np
import tensorflow as tf

GCS_PATTERN = "gs://flowers-public/tfrecords-jpeg-224x224/*.tfrec"
AUTO = tf.data.AUTOTUNE


def count_data_items(filenames):
    n = [int(re.compile(r"-([0-9]*)\\.").search(filename).group(1)) for filename in filenames]
    return np.sum(n)


def read_tfrecord(example):
    features = {"image": tf.io.FixedLenFeature([], tf.string), "class": tf.io.FixedLenFeature([], tf.int64)}
    example = tf.io.parse_single_example(example, features)
    image = tf.cast(tf.image.decode_jpeg(example["image"], channels=3), tf.float32) / 255.0
    return image, tf.cast(example["class"], tf.int32)


def load_dataset(filenames, batch_size):
    opt = tf.data.Options()
    opt.experimental_deterministic = False
    dataset = tf.data.TFRecordDataset(filenames, num_parallel_reads=AUTO).with_options(opt)
    return dataset.map(read_tfrecord, num_parallel_calls=AUTO)


def get_training_dataset(filenames, batch_size):
    dataset = load_dataset(filenames, batch_size)
    dataset = dataset.repeat()
    dataset = dataset.shuffle(2048)
    dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(AUTO)
    return dataset
'''

MODELS = '''from tensorflow.keras.layers import *
from tensorflow.keras.models import *


def get_resnet(n_classes):
    inputs = Input((96, 96, 3))
    x = GlobalAveragePooling2D()(Conv2D(32, 3, activation="relu")(inputs))
    return Model(inputs, Dense(n_classes, activation="softmax")(x))
'''


def test_a_repository_whose_only_tf_2_name_is_tf_data_autotune_runs_tf_2(tmp_path: Path) -> None:
    """Adaptive-Gradient-Clipping's shape: its training is in notebooks, its modules hold no
    TF 2.x name but ``tf.data.AUTOTUNE`` and no pin: it was taken for TF 1.x, and its data
    loader got ``from npu_bridge.npu_init import *``, which the TF 2.x adapter has not."""
    repo = make_repo(tmp_path / "agc", {"dataloader.py": DATALOADER, "models.py": MODELS})
    (tmp_path / "repos.txt").write_text(f"{repo}\n")
    result = cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", str(tmp_path / "out"),
                 "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    patches = "".join(path.read_text() for path in (tmp_path / "out" / "patches").glob("*.patch"))
    assert "npu_bridge" not in patches
    assert "+    dataset = dataset.batch(batch_size, drop_remainder=True)" in patches
    rules = [row["rule_id"] for row in csv.DictReader((tmp_path / "out" / "findings.csv").open())
             if row["path"] == "dataloader.py"]
    assert rules == ["NPU064"]  # the tf2 pack's drop_remainder, not NPU002's
