"""NPU011 estimator-run-config: every Estimator runs with npu_run_config_init(...), exactly once.

Golden before/after tests through ``npu_codemod.testing`` (every one also checks that a second
run changes nothing and reports the same sites ``migrated``), one per bullet of the spec.
"""

from __future__ import annotations

import pytest

from npu_codemod.api._toolkit import class_facts
from npu_codemod.testing import assert_migrates, assert_reports, run_rules, sites

from support.rules import messages

RULES = {"NPU001", "NPU011"}
HEADER = "from npu_bridge.npu_init import *\n"
GUIDE = ("(guide: Estimator migration: the run configuration (npu_run_config_init), "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu011-estimator-run-config)")



TRAIN = '''\
"""Trains the census wide-and-deep model."""
import tensorflow as tf

from census import input_fn, model_fn


def main(flags):
    run_config = tf.estimator.RunConfig(model_dir=flags.model_dir, save_checkpoints_steps=1000)
    estimator = tf.estimator.Estimator(model_fn, config=run_config, params={"hidden": [64, 32]})
    estimator.train(input_fn=lambda: input_fn(flags.train_data), max_steps=flags.steps)
'''


def test_the_config_argument_is_wrapped_in_npu_run_config_init():
    after = TRAIN.replace('"""Trains the census wide-and-deep model."""\n',
                          '"""Trains the census wide-and-deep model."""\n' + HEADER).replace(
        "config=run_config,", "config=npu_run_config_init(run_config=run_config),")
    findings = assert_migrates(RULES, TRAIN, after, findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU011", 9, 16, "migrated")])
    assert messages(findings, "NPU011") == ["wrapped config in npu_run_config_init(run_config=...)"]
    assert messages(run_rules(RULES, after).findings, "NPU011") == ["config is npu_run_config_init(...)"]


def test_an_estimator_without_config_gets_one():
    before = ("import tensorflow as tf\n\n"
              "estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=FLAGS.model_dir)\n")
    after = HEADER + before.replace("model_dir=FLAGS.model_dir)",
                                    "model_dir=FLAGS.model_dir, config=npu_run_config_init())")
    findings = assert_migrates(RULES, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 3, 12, "migrated")])
    assert messages(findings, "NPU011") == ["added config=npu_run_config_init()"]


def test_a_positional_config_is_wrapped_in_place():
    before = ("import tensorflow as tf\n\n"
              "estimator = tf.estimator.Estimator(model_fn, FLAGS.model_dir, run_config, params)\n")
    after = HEADER + before.replace(" run_config,", " npu_run_config_init(run_config=run_config),")
    assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                    ("NPU011", 3, 12, "migrated")])


def test_config_none_becomes_npu_run_config_init():
    before = "import tensorflow as tf\n\nestimator = tf.estimator.Estimator(model_fn, config=None)\n"
    after = HEADER + before.replace("config=None", "config=npu_run_config_init()")
    findings = assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                               ("NPU011", 3, 12, "migrated")])
    assert messages(findings, "NPU011") == ["replaced config=None with npu_run_config_init()"]


def test_a_config_that_already_is_npu_run_config_init_is_never_wrapped_again():
    source = HEADER + ("import tensorflow as tf\n\n"
                       "estimator = tf.estimator.Estimator(\n"
                       "    model_fn, config=npu_run_config_init(run_config=tf.estimator.RunConfig()))\n")
    findings = assert_reports(RULES, source, findings=[("NPU001", 1, 0, "migrated"),
                                                       ("NPU011", 4, 12, "migrated")])
    assert messages(findings, "NPU011") == ["config is npu_run_config_init(...)"]


@pytest.mark.parametrize("binding", [
    # the same scope
    "def main():\n    run_config = npu_run_config_init(run_config=tf.estimator.RunConfig())\n"
    "    return tf.estimator.Estimator(model_fn, config=run_config)\n",
    # the module, read from a function that does not bind the name itself
    "run_config = npu_run_config_init()\n\n\ndef main():\n"
    "    return tf.estimator.Estimator(model_fn, config=run_config)\n",
])
def test_a_name_bound_to_npu_run_config_init_is_migrated_as_it_is(binding: str):
    source = f"{HEADER}import tensorflow as tf\n\n{binding}"
    findings = assert_reports(RULES, source)
    assert [f.message for f in findings if f.rule_id == "NPU011"] == [
        "config=run_config is npu_run_config_init(...)"]


def test_a_name_bound_to_something_else_too_is_wrapped():
    before = ("import tensorflow as tf\n\n\ndef main(tpu):\n"
              "    run_config = npu_run_config_init()\n"
              "    if tpu:\n        run_config = tf.estimator.RunConfig()\n"
              "    return tf.estimator.Estimator(model_fn, config=run_config)\n")
    after = HEADER + before.replace("config=run_config)", "config=npu_run_config_init(run_config=run_config))")
    assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                    ("NPU011", 8, 11, "migrated")])


@pytest.mark.parametrize("imports, spelled", [
    ("import tensorflow as tf", "tf.estimator.Estimator"),
    ("import tensorflow.compat.v1 as tf", "tf.estimator.Estimator"),
    ("import tensorflow as tf", "tf.compat.v1.estimator.Estimator"),
    ("from tensorflow.estimator import Estimator", "Estimator"),
    ("from tensorflow import estimator as tf_estimator", "tf_estimator.Estimator"),
    ("from tensorflow.python.estimator import estimator as estimator_lib", "estimator_lib.Estimator"),
    ("import tensorflow as tf", "tf.estimator.DNNClassifier"),
    ("import tensorflow as tf", "tf.estimator.BoostedTreesRegressor"),
    ("from tensorflow.python.estimator.canned import dnn", "dnn.DNNRegressor"),
    ("import tensorflow as tf", "tf.contrib.tpu.TPUEstimator"),
    ("import tensorflow as tf", "tf.compat.v1.estimator.tpu.TPUEstimator"),
])
def test_every_estimator_class_in_every_spelling(imports: str, spelled: str):
    before = f"{imports}\n\nestimator = {spelled}(model_fn=model_fn, config=config)\n"
    after = HEADER + before.replace("config=config", "config=npu_run_config_init(run_config=config)")
    assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                    ("NPU011", 3, 12, "migrated")])


def test_premade_estimators_take_config_as_a_keyword():
    before = '''\
import tensorflow as tf


def build_estimator(model_dir, model_type, columns, config):
    if model_type == "wide":
        return tf.estimator.LinearClassifier(model_dir=model_dir, feature_columns=columns, config=config)
    if model_type == "deep":
        return tf.estimator.DNNClassifier(hidden_units=[100, 75, 50], feature_columns=columns)
    return tf.estimator.DNNLinearCombinedClassifier(
        model_dir=model_dir,
        linear_feature_columns=columns,
        dnn_feature_columns=columns,
        dnn_hidden_units=[100, 50],
        config=config)
'''
    after = HEADER + before.replace(
        "feature_columns=columns, config=config)",
        "feature_columns=columns, config=npu_run_config_init(run_config=config))").replace(
        "feature_columns=columns)", "feature_columns=columns, config=npu_run_config_init())").replace(
        "        config=config)", "        config=npu_run_config_init(run_config=config))")
    assert_migrates(RULES, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 6, 15, "migrated"), ("NPU011", 8, 15, "migrated"),
        ("NPU011", 9, 11, "migrated")])


def test_a_premade_estimator_with_config_possibly_positional_is_reported():
    # DNNClassifier's config is the 11th parameter in the v1 signature, the 10th in v2.
    source = ("import tensorflow as tf\n\nclassifier = tf.estimator.DNNClassifier(\n"
              "    units, columns, model_dir, 2, None, None, 'Adagrad', tf.nn.relu, 0.1, None, cfg)\n")
    findings = assert_reports(RULES, source, findings=[("NPU011", 3, 13, "unmigrated")])
    assert messages(findings, "NPU011") == [("config may be passed positionally: pass it as "
                                   f"config=npu_run_config_init(run_config=<the run config>) {GUIDE}")]


def test_a_config_that_may_come_in_kwargs_is_reported_an_explicit_one_wrapped():
    before = ("import tensorflow as tf\n\n"
              "a = tf.estimator.Estimator(model_fn, **estimator_args)\n"
              "b = tf.estimator.Estimator(model_fn, config=config, **estimator_args)\n")
    after = HEADER + before.replace("config=config,", "config=npu_run_config_init(run_config=config),")
    findings = assert_migrates(RULES, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 3, 4, "unmigrated"), ("NPU011", 4, 4, "migrated")])
    assert messages(findings, "NPU011")[0].startswith("config may come in the unpacked arguments: pass "
                                            "config=npu_run_config_init(run_config=<the run config>)")


def test_the_run_config_inside_keeps_npu013s_edit():
    before = ("import tensorflow as tf\n\n"
              "estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(model_dir=d))\n")
    after = HEADER + ("import tensorflow as tf\n\n"
                      "estimator = tf.estimator.Estimator(model_fn, config=npu_run_config_init("
                      "run_config=tf.estimator.RunConfig(model_dir=d, save_summary_steps=0)))\n")
    assert_migrates(RULES | {"NPU013"}, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 3, 12, "migrated"), ("NPU013", 3, 52, "migrated")])


@pytest.mark.parametrize("source", [
    # a class of the file's own that is not a TensorFlow Estimator
    "import tensorflow as tf\n\n\nclass Estimator:\n    pass\n\n\nmodel = Estimator(config=cfg)\n",
    # scikit-learn's
    "import tensorflow as tf\nfrom sklearn.linear_model import LinearRegression as Estimator\n\n"
    "model = Estimator(config=cfg)\n",
    # TensorFlow's Estimator, in a file that does not import TensorFlow
    "from estimators import Estimator\n\nmodel = Estimator(model_fn, config=cfg)\n",
    # referenced, not built
    "import tensorflow as tf\n\nESTIMATOR = tf.estimator.Estimator\nassert issubclass(E, tf.estimator.Estimator)\n",
])
def test_what_is_not_an_estimator_construction_is_left_alone(source: str):
    assert_reports(RULES, source, findings=[])


ESTIMATOR_MODULE = '''\
"""The repository's Estimator, as BERT-like projects write it."""
import tensorflow as tf


class BertEstimator(tf.estimator.Estimator):
    def __init__(self, bert_config, model_dir=None, config=None, params=None):
        super(BertEstimator, self).__init__(
            model_fn=build_model_fn(bert_config), model_dir=model_dir, config=config,
            params=params)


class DistilledEstimator(BertEstimator):
    """Takes its parameters from BertEstimator."""


class FixedEstimator(tf.estimator.Estimator):
    def __init__(self, model_dir):
        super().__init__(build_model_fn(None), model_dir, tf.estimator.RunConfig())


class FlexibleEstimator(tf.estimator.Estimator):
    def __init__(self, model_fn, **kwargs):
        super().__init__(model_fn, **kwargs)
'''
FACTS = frozenset(class_facts("bert/estimators.py", ESTIMATOR_MODULE))


def test_the_repository_records_its_classes_and_their_init_parameters():
    assert FACTS == {
        "class:bert.estimators.BertEstimator=tensorflow.estimator.Estimator;"
        "bert_config,model_dir,config,params",
        "class:bert.estimators.DistilledEstimator=bert.estimators.BertEstimator;-",
        "class:bert.estimators.FixedEstimator=tensorflow.estimator.Estimator;model_dir",
        "class:bert.estimators.FlexibleEstimator=tensorflow.estimator.Estimator;model_fn,**kwargs",
    }


def test_the_estimator_module_itself_is_not_wrapped_inside_its_own_init():
    # super().__init__(...) is no construction: wrapping there would wrap twice.
    assert_reports(RULES, ESTIMATOR_MODULE, findings=[], facts=FACTS, path="bert/estimators.py")


def test_subclasses_of_another_file_are_wrapped_where_they_are_built():
    before = '''\
import tensorflow as tf

from bert import estimators
from bert.estimators import DistilledEstimator, FixedEstimator, FlexibleEstimator


def main(flags, run_config):
    teacher = estimators.BertEstimator(flags.bert_config, flags.output_dir, run_config)
    student = DistilledEstimator(flags.bert_config, config=run_config)
    fixed = FixedEstimator(flags.output_dir)
    flexible = FlexibleEstimator(model_fn)
    return teacher, student, fixed, flexible
'''
    after = HEADER + before.replace(
        "config=run_config)", "config=npu_run_config_init(run_config=run_config))").replace(
        "flags.output_dir, run_config)", "flags.output_dir, npu_run_config_init(run_config=run_config))").replace(
        "FlexibleEstimator(model_fn)", "FlexibleEstimator(model_fn, config=npu_run_config_init())")
    findings = assert_migrates(RULES, before, after, facts=FACTS, path="run_classifier.py", findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 8, 14, "migrated"), ("NPU011", 9, 14, "migrated"),
        ("NPU011", 10, 12, "unmigrated"), ("NPU011", 11, 15, "migrated")])
    assert messages(findings, "NPU011")[2] == ("FixedEstimator.__init__ takes no config: pass config through "
                                     f"to the Estimator so it can take npu_run_config_init() {GUIDE}")


def test_a_subclass_of_the_same_file_is_wrapped_where_it_is_built():
    before = '''\
import tensorflow as tf


class TextEstimator(tf.estimator.Estimator):
    def __init__(self, vocab, config=None):
        super().__init__(model_fn=make_model_fn(vocab), config=config)


estimator = TextEstimator(vocab, config=tf.estimator.RunConfig(model_dir="/tmp/text"))
'''
    facts = class_facts("train.py", before)
    after = HEADER + before.replace(
        'config=tf.estimator.RunConfig(model_dir="/tmp/text"))',
        'config=npu_run_config_init(run_config=tf.estimator.RunConfig(model_dir="/tmp/text")))')
    assert_migrates(RULES, before, after, facts=facts, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 9, 12, "migrated")])


def test_without_the_facts_a_repository_class_is_not_guessed_at():
    source = "import tensorflow as tf\nfrom bert.estimators import BertEstimator\n\nest = BertEstimator(c, config=rc)\n"
    assert sites(run_rules(RULES, source).findings) == []


KERAS_TO_ESTIMATOR = '''\
import tensorflow as tf


def build_estimator(model, flags):
    config = tf.estimator.RunConfig(model_dir=flags.job_dir, save_summary_steps=0)
    return tf.keras.estimator.model_to_estimator(keras_model=model, config=config)
'''


def test_model_to_estimator_config_is_wrapped():
    after = HEADER + KERAS_TO_ESTIMATOR.replace(
        "config=config)", "config=npu_run_config_init(run_config=config))")
    findings = assert_migrates(RULES, KERAS_TO_ESTIMATOR, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 6, 11, "migrated")])
    assert messages(findings, "NPU011") == ["wrapped config in npu_run_config_init(run_config=...)"]
    assert messages(run_rules(RULES, after).findings, "NPU011") == ["config is npu_run_config_init(...)"]


@pytest.mark.parametrize("spelling", ["tf.keras.estimator.model_to_estimator",
                                      "tf.compat.v1.keras.estimator.model_to_estimator"])
def test_model_to_estimator_without_config_gets_one(spelling):
    before = f"import tensorflow as tf\n\nestimator = {spelling}(keras_model=model, model_dir=job_dir)\n"
    after = HEADER + before.replace("model_dir=job_dir)",
                                    "model_dir=job_dir, config=npu_run_config_init())")
    findings = assert_migrates(RULES, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 3, 12, "migrated")])
    assert messages(findings, "NPU011") == ["added config=npu_run_config_init()"]


def test_model_to_estimator_inline_and_positional_configs_are_wrapped():
    before = ("import tensorflow as tf\n"
              "from tensorflow.keras.estimator import model_to_estimator\n\n"
              "a = model_to_estimator(keras_model=model,\n"
              "                       config=tf.estimator.RunConfig(model_dir=job_dir))\n"
              "b = tf.keras.estimator.model_to_estimator(model, None, None, job_dir, run_config)\n")
    after = HEADER + before.replace(
        "config=tf.estimator.RunConfig(model_dir=job_dir))",
        "config=npu_run_config_init(run_config=tf.estimator.RunConfig(model_dir=job_dir)))").replace(
        "job_dir, run_config)", "job_dir, npu_run_config_init(run_config=run_config))")
    findings = assert_migrates(RULES, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 4, 4, "migrated"), ("NPU011", 6, 4, "migrated")])
    assert messages(findings, "NPU011") == ["wrapped config in npu_run_config_init(run_config=...)"] * 2


def test_model_to_estimator_config_in_unpacked_arguments_is_reported():
    source = ("import tensorflow as tf\n\n"
              "estimator = tf.keras.estimator.model_to_estimator(keras_model=model, **options)\n")
    findings = assert_reports(RULES, source, findings=[("NPU011", 3, 12, "unmigrated")])
    assert messages(findings, "NPU011") == [
        "config may come in the unpacked arguments: pass "
        f"config=npu_run_config_init(run_config=<the run config>) explicitly {GUIDE}"]
