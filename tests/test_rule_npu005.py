"""NPU005 layers-dropout: one convert import per file, every call site migrated, calls unchanged."""

from __future__ import annotations

import pytest

from npu_codemod.codemods.findings import Finding

from support.rules import Golden, assert_migrates, assert_unchanged, sites

RULES = {"NPU005", "NPU001"}
INIT = "from npu_bridge.npu_init import *\n"
CONVERT = "from npu_bridge.estimator.npu import npu_convert_dropout\n"
HEADER = INIT + CONVERT
NPU005 = Golden("NPU005", added=HEADER, rule_ids=RULES)


def gains_the_imports(before: str, *expected: tuple[int, int]) -> list[Finding]:
    """``before`` gains the two header imports (2 lines, so sites shift by 2) and nothing else."""
    return NPU005.migrated(before, before, *expected)


@pytest.mark.parametrize("call", [
    "tf.layers.dropout(h, rate=0.1, training=is_training)",
    "tf.layers.Dropout(0.2)(h)",
    "tf.keras.layers.Dropout(0.5)(h)",
    "tf.keras.layers.SpatialDropout1D(0.5)(h)",
    "tf.keras.layers.SpatialDropout2D(0.5)(h)",
    "tf.keras.layers.SpatialDropout3D(0.5)(h)",
    "tf.compat.v1.layers.dropout(h, 0.1)",
    "tf.compat.v1.keras.layers.Dropout(0.1)(h)",
])
def test_every_spelling_of_tf(call: str) -> None:
    gains_the_imports(f"import tensorflow as tf\nh = {call}\n", (2, 4))


def test_keras_layers_module_imported_by_name() -> None:
    gains_the_imports("import tensorflow as tf\nfrom tensorflow.keras import layers\n"
                      "model.add(layers.Dropout(0.5))\n", (3, 10))


def test_layer_class_imported_by_name_and_alias() -> None:
    gains_the_imports("from tensorflow.keras.layers import Dropout, SpatialDropout2D as SD\n"
                      "a = Dropout(0.3)\nb = SD(0.1)\n", (2, 4), (3, 4))


def test_keras_alias_assignment() -> None:
    gains_the_imports("import tensorflow as tf\nkeras = tf.keras\nx = keras.layers.Dropout(0.2)(x)\n", (3, 4))


def test_compat_v1_alias() -> None:
    gains_the_imports("import tensorflow.compat.v1 as tf\nh = tf.layers.dropout(h)\n", (2, 4))


def test_several_sites_one_import() -> None:
    findings = gains_the_imports(
        "import tensorflow as tf\n\n\ndef model(h, training):\n"
        "    h = tf.layers.dropout(h, 0.1, training=training)\n"
        "    h = tf.layers.dense(h, 10)\n"
        "    return tf.layers.dropout(h, 0.1, training=training)\n",
        (5, 8), (7, 11))
    assert "check the model's accuracy" in findings[0].message


def test_import_goes_after_docstring_and_future() -> None:
    before = ('"""Model."""\nfrom __future__ import print_function\nimport tensorflow as tf\n'
              "h = tf.layers.dropout(h)\n")
    after = ('"""Model."""\nfrom __future__ import print_function\n' + HEADER
             + "import tensorflow as tf\nh = tf.layers.dropout(h)\n")
    assert_migrates(before, after, RULES)


def test_only_the_convert_import_when_npu_init_is_there() -> None:
    before = "from npu_bridge.npu_init import *\nimport tensorflow as tf\nh = tf.layers.dropout(h)\n"
    after = HEADER + "import tensorflow as tf\nh = tf.layers.dropout(h)\n"
    assert_migrates(before, after, RULES)


def test_second_run_reports_sites_and_changes_nothing() -> None:
    source = HEADER + "import tensorflow as tf\nh = tf.layers.dropout(h)\nk = tf.keras.layers.Dropout(.1)\n"
    findings = assert_unchanged(source, RULES)
    assert sites([f for f in findings if f.rule_id == "NPU005"]) == [
        ("NPU005", 4, 4, "migrated"), ("NPU005", 5, 4, "migrated")]


def test_existing_convert_import_alone_is_left_alone() -> None:
    source = CONVERT + "import tensorflow as tf\nh = tf.layers.dropout(h)\n"
    findings = assert_unchanged(source, RULES)
    assert sites(findings) == [("NPU005", 3, 4, "migrated")]


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\nh = tf.nn.dropout(h, 0.5)\n",  # NPU004's business
    "import tensorflow as tf\nimport keras\nh = keras.layers.Dropout(0.5)(h)\n",  # not tf.keras
    "import tensorflow as tf\ndropout = 0.5\nf(dropout=dropout, rate=dropout)\n",
    "import tensorflow as tf\nfrom tensorflow.keras.layers import Dropout\n",  # imported, unused
    "import tensorflow as tf\nclass Dropout(object):\n    pass\nd = my.layers.Dropout(0.1)\n",
    "import tensorflow as tf\ntf.layers.dense(h, 3)\n",
])
def test_not_a_tf_dropout_layer(source: str) -> None:
    assert assert_unchanged(source, RULES) == []


def test_without_npu001_the_rule_still_adds_its_import() -> None:
    # The engine owns imports: a rule set without NPU001 never leaves a file without the
    # import a rule asked for.
    assert_migrates("import tensorflow as tf\nh = tf.layers.dropout(h)\n",
                    CONVERT + "import tensorflow as tf\nh = tf.layers.dropout(h)\n", {"NPU005"})


#: facenet's ``models/inception_resnet_v1.py`` shape: TF-Slim's dropout, also through
#: ``arg_scope``. In TF 1.15 ``slim.dropout`` (``tf.contrib.layers.dropout``) applies a
#: ``tf.layers.Dropout``, whose call is the Keras one npu_convert_dropout replaces.
SLIM_MODEL = """\
import tensorflow as tf
import tensorflow.contrib.slim as slim
from tensorflow.contrib import layers
from tensorflow.contrib.slim import dropout as slim_dropout


def inference(images, keep_probability, phase_train=True):
    with slim.arg_scope([slim.batch_norm, slim.dropout], is_training=phase_train):
        net = slim.conv2d(images, 32, 3, stride=2, scope='Conv2d_1a_3x3')
        net = slim.dropout(net, keep_probability, is_training=phase_train, scope='Dropout')
        net = tf.contrib.layers.dropout(net, keep_prob=0.8)
        net = layers.dropout(net)
        return slim_dropout(net)
"""


def test_slim_dropout_goes_through_tf_layers_dropout_and_is_migrated() -> None:
    """It was only reported deprecated (NPU100); the import makes it the NPU dropout."""
    findings = gains_the_imports(SLIM_MODEL, (8, 42), (10, 14), (11, 14), (12, 14), (13, 15))
    assert {f.message.partition(" runs the NPU dropout")[0] for f in findings if f.rule_id == "NPU005"} == {
        f"imported npu_convert_dropout, so {spelled} (a tf.layers.Dropout inside)"
        for spelled in ("slim.dropout", "tf.contrib.layers.dropout", "layers.dropout", "slim_dropout")}
