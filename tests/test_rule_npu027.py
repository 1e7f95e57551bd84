"""NPU027 distributed-hooks: golden before/after per bullet of the spec, and which receivers
count as an Estimator or Keras model the repository builds (``BuiltModels``)."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.packs import (
    BOTH_REPO,
    HOROVOD_REPO,
    INIT,
    STRATEGY_REPO,
    message_of,
    pack_migrates,
    repository_facts,
)

RULES = {"NPU027"}
TF = "import tensorflow as tf\n"
ESTIMATOR = TF + "estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)\n"
KERAS = TF + "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
UNKNOWN = (".train() is not shown to train an Estimator or a Keras model this repository builds, "
           "so it is left alone: if it does, pass callbacks=npu_callbacks_append(callbacks_list=...) "
           "(Keras) or hooks=npu_hooks_append(hooks_list=...) (Estimator)")


@pytest.mark.parametrize("before, after", [
    ("estimator.train(input_fn=train_input_fn, steps=1000)\n",
     "estimator.train(input_fn=train_input_fn, steps=1000, hooks=npu_hooks_append())\n"),
    ("estimator.train(train_input_fn, hooks=[logging_hook])\n",
     "estimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=[logging_hook]))\n"),
    ("estimator.train(train_input_fn, [logging_hook], 1000)\n",
     "estimator.train(train_input_fn, npu_hooks_append(hooks_list=[logging_hook]), 1000)\n"),
    ("estimator.train(train_input_fn, hooks=None)\n",
     "estimator.train(train_input_fn, hooks=npu_hooks_append())\n"),
    ("estimator.train(train_input_fn, hooks=hooks + [bcast_hook])\n",
     "estimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=hooks + [bcast_hook]))\n"),
])
def test_estimator_train_gets_the_npu_hooks(before: str, after: str) -> None:
    pack_migrates(RULES, before, after, header=ESTIMATOR, findings=[("NPU027", 3, 0, "migrated")])


@pytest.mark.parametrize("before, after", [
    ("spec = tf.estimator.TrainSpec(train_input_fn, 1000, [hook])\n",
     "spec = tf.estimator.TrainSpec(train_input_fn, 1000, npu_hooks_append(hooks_list=[hook]))\n"),
    ("spec = tf.estimator.EvalSpec(eval_input_fn, 100, 'eval', [hook])\n",
     "spec = tf.estimator.EvalSpec(eval_input_fn, 100, 'eval', npu_hooks_append(hooks_list=[hook]))\n"),
    ("spec = tf.compat.v1.estimator.TrainSpec(input_fn=train_input_fn)\n",
     "spec = tf.compat.v1.estimator.TrainSpec(input_fn=train_input_fn, hooks=npu_hooks_append())\n"),
])
def test_train_and_eval_specs_get_the_npu_hooks(before: str, after: str) -> None:
    pack_migrates(RULES, before, after, header=TF, findings=[("NPU027", 2, 7, "migrated")])


@pytest.mark.parametrize("before, after", [
    ("model.fit(x, y, epochs=3, callbacks=callbacks)\n",
     "model.fit(x, y, epochs=3, callbacks=npu_callbacks_append(callbacks_list=callbacks))\n"),
    ("model.fit(x, y, 32, 3, 1, [checkpoint])\n",
     "model.fit(x, y, 32, 3, 1, npu_callbacks_append(callbacks_list=[checkpoint]))\n"),
    ("model.fit(dataset, epochs=3)\n", "model.fit(dataset, epochs=3, callbacks=npu_callbacks_append())\n"),
    ("model.fit_generator(batches, 100, 3, 1, [checkpoint])\n",
     "model.fit_generator(batches, 100, 3, 1, npu_callbacks_append(callbacks_list=[checkpoint]))\n"),
])
def test_keras_fit_gets_the_npu_callbacks(before: str, after: str) -> None:
    pack_migrates(RULES, before, after, header=KERAS, findings=[("NPU027", 3, 0, "migrated")])


def test_a_second_run_and_a_name_bound_to_the_append_call_are_migrated() -> None:
    source = INIT + ESTIMATOR + (
        "estimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=[hook]))\n"
        "hooks = npu_hooks_append(hooks_list=[hook])\nestimator.train(train_input_fn, hooks=hooks)\n")
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[
        ("NPU027", 4, 0, "migrated"), ("NPU027", 6, 0, "migrated")])
    assert findings[0].message == "hooks are npu_hooks_append(...)"


@pytest.mark.parametrize("built", [
    "tf.estimator.DNNClassifier(feature_columns=columns, hidden_units=[10])",
    "tf.compat.v1.estimator.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False)",
    "tf.contrib.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False)",
    "npu_estimator.NPUEstimator(model_fn=model_fn)",
    "tf.keras.estimator.model_to_estimator(keras_model=model, config=config)",
])
def test_every_estimator_class(built: str) -> None:
    header = TF + "from npu_bridge.estimator.npu import npu_estimator\n" + f"est = {built}\n"
    pack_migrates(RULES, "est.train(input_fn)\n",
                  "est.train(input_fn, hooks=npu_hooks_append())\n", header=header)


SUBCLASS = '''\
import tensorflow as tf


class RankingEstimator(tf.estimator.Estimator):
    def __init__(self, model_dir, config=None):
        super().__init__(model_fn=ranking_model_fn, model_dir=model_dir, config=config)


class WarmStartedEstimator(RankingEstimator):
    pass


def make_estimator(model_dir):
    return WarmStartedEstimator(model_dir)
'''
TRAINER = '''\
import tensorflow as tf

from models.ranking import RankingEstimator, make_estimator


class Trainer:
    def __init__(self, model_dir):
        self.estimator = make_estimator(model_dir)

    def run(self, input_fn):
        self.estimator.train(input_fn)


def train(model_dir, input_fn):
    estimator = RankingEstimator(model_dir)
    estimator.train(input_fn)
'''


def test_estimator_subclasses_and_factories_of_other_files() -> None:
    facts = repository_facts({"models/ranking.py": SUBCLASS, "train.py": TRAINER})
    assert {"class:models.ranking.RankingEstimator=tensorflow.estimator.Estimator;model_dir,config",
            "class:models.ranking.WarmStartedEstimator=models.ranking.RankingEstimator;-",
            "model-function:models.ranking.make_estimator=estimator"} <= facts
    after = INIT + TRAINER.replace("train(input_fn)", "train(input_fn, hooks=npu_hooks_append())")
    assert_migrates(RULES, TRAINER, after, facts=facts | HOROVOD_REPO, findings=[
        ("NPU027", 11, 8, "migrated"), ("NPU027", 16, 4, "migrated")])


def test_a_keras_model_subclass_and_its_forwarded_factory() -> None:
    network = ("import tensorflow as tf\n\n\nclass Net(tf.keras.Model):\n"
               "    def call(self, x):\n        return x\n")
    factory = "import tensorflow as tf\nfrom net import Net\n\n\ndef build():\n    return Net()\n"
    script = TF + "from factory import build\n\nmodel = build()\nmodel.fit(x, y)\n"
    facts = repository_facts({"net.py": network, "factory.py": factory, "train.py": script})
    assert "model-function:factory.build=@net.Net" in facts
    assert_migrates(RULES, script, INIT + script.replace("fit(x, y)", "fit(x, y, callbacks=npu_callbacks_append())"),
                    facts=facts | HOROVOD_REPO, findings=[("NPU027", 5, 0, "migrated")])


@pytest.mark.parametrize("source, line, column", [
    ("class Trainer:\n    def train(self):\n        pass\n\n\nTrainer().train()\n", 7, 0),
    ("from trainers import Trainer\ntrainer = Trainer(epochs=3)\ntrainer.fit(x, y)\n", 4, 0),
    ("def run(estimator):\n    estimator.train(input_fn)\n", 3, 4),  # a parameter: type unknown
    ("model = tf.keras.Sequential()\nmodel = load_weights(model)\nmodel.fit(x, y)\n", 4, 0),  # rebound
    ("from keras.models import Sequential\nmodel = Sequential()\nmodel.fit(x, y)\n", 4, 0),  # not tf.keras
])
def test_train_or_fit_of_anything_else_is_reported_once_and_left_alone(source: str, line: int,
                                                                       column: int) -> None:
    findings = assert_reports(RULES, TF + source + "trainer.train()\n", facts=HOROVOD_REPO,
                              findings=[("NPU027", line, column, "unmigrated")])
    assert findings[0].message.startswith("." + ("fit" if ".fit(" in source else "train") + UNKNOWN[6:])


LIGHTNING = '''\
"""Fine-tune the PyTorch classifier; the TensorFlow input pipeline feeds it."""
import pytorch_lightning as pl
import tensorflow as tf
from sklearn.linear_model import LogisticRegression

from classifier import LitClassifier, batches


def main(files):
    baseline = LogisticRegression(max_iter=200)
    baseline.fit(*batches(tf.data.TFRecordDataset(files)))
    trainer = pl.Trainer(max_epochs=3, accelerator="gpu", devices=8, strategy="ddp")
    trainer.fit(LitClassifier(), batches(tf.data.TFRecordDataset(files)))
    pl.Trainer(max_epochs=1).fit(LitClassifier())
'''


def test_fit_of_a_library_that_trains_no_tensorflow_model_is_left_alone() -> None:
    """PyTorch Lightning's and scikit-learn's fit take no NPU callbacks: nothing to report."""
    assert_reports(RULES, LIGHTNING, facts=HOROVOD_REPO, findings=[])
    unknown = LIGHTNING.replace("    pl.Trainer(max_epochs=1)", "    make_trainer()")
    assert_reports(RULES, unknown, facts=HOROVOD_REPO, findings=[("NPU027", 14, 4, "unmigrated")])


def test_a_download_script_with_a_requests_session_is_left_alone() -> None:
    source = '''\
import requests
import tensorflow as tf


def download(urls, target):
    session = requests.Session()
    for url in urls:
        response = session.get(url, timeout=30)
        tf.gfile.GFile(target, "wb").write(response.content)
'''
    assert_reports({"NPU021", "NPU022", "NPU023", "NPU024", "NPU025", "NPU026", "NPU027"}, source,
                   facts=HOROVOD_REPO, findings=[])


def test_nothing_happens_outside_a_distributed_repository() -> None:
    source = ESTIMATOR + "estimator.train(input_fn)\ntrainer.train()\n"
    outcome = run_rules(RULES, source)
    assert (outcome.new, outcome.findings) == (None, [])


def test_a_strategy_repository_gets_the_hooks_too() -> None:
    pack_migrates(RULES, "estimator.train(input_fn)\n",
                  "estimator.train(input_fn, hooks=npu_hooks_append())\n", header=ESTIMATOR,
                  facts=STRATEGY_REPO)


def test_both_modes_and_unpacked_arguments_are_reported() -> None:
    source = ESTIMATOR + "estimator.train(input_fn)\nestimator.train(**train_args)\n"
    findings = assert_reports(RULES, source, facts=BOTH_REPO, findings=[
        ("NPU027", 3, 0, "unmigrated"), ("NPU027", 4, 0, "unmigrated")])
    assert message_of(findings, "NPU027", 3).startswith(
        "the repository trains with Horovod and with a tf.distribute strategy: pick one "
        "distribution mode, then pass hooks=npu_hooks_append(...)")
    assert message_of(findings, "NPU027", 4).startswith(
        "hooks may be in the unpacked arguments: pass hooks=npu_hooks_append(hooks_list=<hooks>)")


def test_inner_edits_survive_the_wrapping() -> None:
    header = TF + "import horovod.tensorflow as hvd\n" + \
        "estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)\n"
    before = header + "estimator.train(input_fn, hooks=[hvd.BroadcastGlobalVariablesHook(0), hvd_timer])\n"
    after = INIT + header + (
        "estimator.train(input_fn, hooks=npu_hooks_append(hooks_list=[hvd.BroadcastGlobalVariablesHook("
        "0), hvd_timer]))\n")
    assert_migrates({"NPU022", "NPU027"}, before, after, facts=HOROVOD_REPO)  # NPU024 off: Horovod's stays


BROADCAST = (TF + "import horovod.tensorflow as hvd\n"
             "estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)\n")
NPU_HOOK = "NPUBroadcastGlobalVariablesHook(0, int(os.getenv('RANK_ID', '0')))"


@pytest.mark.parametrize("before, after", [
    ("estimator.train(input_fn, hooks=[hvd.BroadcastGlobalVariablesHook(0)])\n",
     f"estimator.train(input_fn, hooks=[{NPU_HOOK}])\n"),
    ("bcast_hook = hvd.BroadcastGlobalVariablesHook(0)\nestimator.train(input_fn, hooks=[bcast_hook, timer])\n",
     f"bcast_hook = {NPU_HOOK}\nestimator.train(input_fn, hooks=[bcast_hook, timer])\n"),
    ("hooks = [hvd.BroadcastGlobalVariablesHook(0)]\nestimator.train(input_fn, hooks=hooks)\n",
     f"hooks = [{NPU_HOOK}]\nestimator.train(input_fn, hooks=hooks)\n"),
    ("estimator.train(input_fn, hooks=(timer, hvd.BroadcastGlobalVariablesHook(0)))\n",
     f"estimator.train(input_fn, hooks=(timer, {NPU_HOOK}))\n"),
    # NVIDIA's DeepLearningExamples: appended where the script tests that it runs distributed
    ("training_hooks = []\nif hvd.size() > 1:\n    bcast_hook = hvd.BroadcastGlobalVariablesHook(0)\n"
     "    training_hooks.append(bcast_hook)\nestimator.train(input_fn, hooks=training_hooks)\n",
     f"training_hooks = []\nif hvd.size() > 1:\n    bcast_hook = {NPU_HOOK}\n"
     "    training_hooks.append(bcast_hook)\nestimator.train(input_fn, hooks=training_hooks)\n"),
    ("hooks = [timer]\nhooks += [hvd.BroadcastGlobalVariablesHook(0)]\nestimator.train(input_fn, hooks=hooks)\n",
     f"hooks = [timer]\nhooks += [{NPU_HOOK}]\nestimator.train(input_fn, hooks=hooks)\n"),
    ("hooks = [timer]\nhooks.extend([hvd.BroadcastGlobalVariablesHook(0)])\nestimator.train(input_fn, hooks=hooks)\n",
     f"hooks = [timer]\nhooks.extend([{NPU_HOOK}])\nestimator.train(input_fn, hooks=hooks)\n"),
    ("hooks = [timer]\nhooks.insert(0, hvd.BroadcastGlobalVariablesHook(0))\nestimator.train(input_fn, hooks=hooks)\n",
     f"hooks = [timer]\nhooks.insert(0, {NPU_HOOK})\nestimator.train(input_fn, hooks=hooks)\n"),
    ("estimator.train(input_fn, hooks=hooks + [hvd.BroadcastGlobalVariablesHook(0)])\n",
     f"estimator.train(input_fn, hooks=hooks + [{NPU_HOOK}])\n"),
    ("def training_hooks():\n    hooks = [timer]\n    hooks.append(hvd.BroadcastGlobalVariablesHook(0))\n"
     "    return hooks\n\n\nestimator.train(input_fn, hooks=training_hooks())\n",
     f"def training_hooks():\n    hooks = [timer]\n    hooks.append({NPU_HOOK})\n"
     "    return hooks\n\n\nestimator.train(input_fn, hooks=training_hooks())\n"),
    ("def training_hooks():\n    return [hvd.BroadcastGlobalVariablesHook(0)]\n\n\n"
     "hooks = training_hooks()\nestimator.train(input_fn, hooks=hooks)\n",
     f"def training_hooks():\n    return [{NPU_HOOK}]\n\n\n"
     "hooks = training_hooks()\nestimator.train(input_fn, hooks=hooks)\n"),
    ("base = [timer]\nhooks = base + [hvd.BroadcastGlobalVariablesHook(0)]\nall_hooks = hooks\n"
     "estimator.train(input_fn, hooks=all_hooks)\n",
     f"base = [timer]\nhooks = base + [{NPU_HOOK}]\nall_hooks = hooks\nestimator.train(input_fn, hooks=all_hooks)\n"),
])
def test_hooks_that_broadcast_through_npu024_get_no_second_broadcast_hook(before: str, after: str) -> None:
    """npu_hooks_append appends NPUBroadcastGlobalVariablesHook(0, ...) to the list: around a
    list holding the one NPU024 wrote, every variable was broadcast twice at each start."""
    findings = assert_migrates({"NPU024", "NPU027"}, BROADCAST + before, INIT + "import os\n" + BROADCAST + after,
                               facts=HOROVOD_REPO)
    (hooks,) = [f.message for f in findings if f.rule_id == "NPU027"]
    assert hooks == ("the hooks already hold NPUBroadcastGlobalVariablesHook(...) (or Horovod's, which "
                     "NPU024 replaces with it): npu_hooks_append(...) would add a second broadcast of "
                     "the variables, so they stay as they are")


def test_a_list_that_broadcasts_on_one_path_only_is_still_wrapped() -> None:
    before = BROADCAST + ("hooks = [hvd.BroadcastGlobalVariablesHook(0)] if multi else [timer]\n"
                          "if multi:\n    hooks = [hvd.BroadcastGlobalVariablesHook(0)]\nelse:\n"
                          "    hooks = [timer]\nestimator.train(input_fn, hooks=hooks)\n")
    outcome = run_rules({"NPU024", "NPU027"}, before, HOROVOD_REPO)
    assert outcome.new is not None and "hooks=npu_hooks_append(hooks_list=hooks)" in outcome.new


@pytest.mark.parametrize("hooks", [
    "hooks = [timer]\nestimator.train(input_fn, hooks=hooks)\nhooks.append(hvd.BroadcastGlobalVariablesHook(0))\n",
    "hooks = [timer]\nhooks.append(hvd.BroadcastGlobalVariablesHook)\nestimator.train(input_fn, hooks=hooks)\n",
    "hooks = [timer]\nhooks.append(hvd.BroadcastGlobalVariablesHook(0).begin())\nestimator.train(input_fn, hooks=hooks)\n",
    "hooks = [hook() for hook in (hvd.BroadcastGlobalVariablesHook,)]\nestimator.train(input_fn, hooks=hooks)\n",
    "hooks = hooks + [timer]\nestimator.train(input_fn, hooks=hooks)\n",  # names itself: followed no further
    "hooks = [timer] - [hvd.BroadcastGlobalVariablesHook(0)]\nestimator.train(input_fn, hooks=hooks)\n",
    "def training_hooks():\n    if multi:\n        return [hvd.BroadcastGlobalVariablesHook(0)]\n    return [timer]\n\n\n"
    "estimator.train(input_fn, hooks=training_hooks())\n",  # on one path only
])
def test_hooks_not_shown_to_broadcast_before_the_call_are_wrapped(hooks: str) -> None:
    outcome = run_rules({"NPU024", "NPU027"}, BROADCAST + hooks, HOROVOD_REPO)
    assert outcome.new is not None and "hooks=npu_hooks_append(hooks_list=" in outcome.new


def test_hooks_the_script_gives_the_npu_s_broadcast_hook_stay_as_they_are() -> None:
    script = (INIT + BROADCAST + "estimator.train(input_fn, hooks=[NPUBroadcastGlobalVariablesHook(0, 1)])\n"
              "model = tf.keras.Sequential([])\nmodel.fit(x, y, callbacks=[NPUBroadcastGlobalVariablesCallback(0)])\n")
    outcome = run_rules({"NPU027"}, script, HOROVOD_REPO)
    assert outcome.new is None
    assert [f.message.partition(" (")[0] for f in outcome.findings if f.rule_id == "NPU027"] == [
        "the hooks already hold NPUBroadcastGlobalVariablesHook(...)",
        "the callbacks already hold NPUBroadcastGlobalVariablesCallback(...)"]


ESTIMATOR_ONLY = '''\
import tensorflow_estimator as tf_estimator
from tensorflow_estimator.python.estimator.canned import dnn

from trainer import distributed  # Horovod is set up there


def train_and_evaluate(feature_columns, steps):
    classifier = dnn.DNNClassifier(hidden_units=[256, 64], feature_columns=feature_columns,
                                   model_dir=distributed.model_dir())
    classifier.train(input_fn=train_input_fn, steps=steps // distributed.size())
    train_spec = tf_estimator.estimator.TrainSpec(train_input_fn, max_steps=steps)
    eval_spec = tf_estimator.estimator.EvalSpec(eval_input_fn, hooks=distributed.hooks())
    tf_estimator.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
'''


def test_a_file_that_imports_only_tensorflow_estimator_gets_the_npu_hooks() -> None:
    """A trainer of a Horovod repository that imports neither TensorFlow nor Horovod itself."""
    after = ESTIMATOR_ONLY.replace(
        "steps // distributed.size())", "steps // distributed.size(), hooks=npu_hooks_append())"
    ).replace("max_steps=steps)", "max_steps=steps, hooks=npu_hooks_append())").replace(
        "hooks=distributed.hooks())", "hooks=npu_hooks_append(hooks_list=distributed.hooks()))")
    assert_migrates(RULES, ESTIMATOR_ONLY, INIT + after, facts=HOROVOD_REPO, findings=[
        ("NPU027", 10, 4, "migrated"), ("NPU027", 11, 17, "migrated"),
        ("NPU027", 12, 16, "migrated")])


TRAIN_LIB = '''\
import tensorflow as tf


def train(steps):
    estimator = tf.estimator.Estimator(model_fn)
    estimator.train(input_fn, max_steps=steps)
'''


@pytest.mark.parametrize("path, imported", [
    ("train_lib.py", "import train_lib\n"),
    ("examples/mnist/train_lib.py", "from examples.mnist import train_lib\n"),
    ("examples/mnist/train_lib.py", "import examples.mnist.train_lib as train_lib\n"),
])
def test_a_call_of_a_function_of_the_repository_is_no_estimator_call(path: str, imported: str) -> None:
    """``train_lib.train(100)`` calls the repository's own function: NPU027 migrates the
    Estimator inside it, and reports nothing at the call (it was a ``left`` site)."""
    main = TF + imported + "\n\ndef main(_):\n    train_lib.train(100)\n"
    script = path.rpartition("/")[0] + "/train.py" if "/" in path else "train.py"
    facts = repository_facts({path: TRAIN_LIB, script: main})
    assert f"own-function:{path[:-3].replace('/', '.')}.train" in facts
    assert_reports(RULES, main, facts=facts | STRATEGY_REPO, path=script, findings=[])
    pack_migrates(RULES, TRAIN_LIB[len(TF):],
                  TRAIN_LIB[len(TF):].replace("steps)\n", "steps, hooks=npu_hooks_append())\n"),
                  header=TF, facts=facts | STRATEGY_REPO, findings=[("NPU027", 6, 4, "migrated")])


@pytest.mark.parametrize("source", [
    "import train_lib\ntrain_lib.Trainer().train()\n",  # a method of a class of that module
    "import mylib\nmylib.train()\n",  # a module the repository does not have
    "import train_lib\ntrain_lib.fit(x)\n",  # that module defines no fit
])
def test_other_calls_through_a_module_are_still_reported(source: str) -> None:
    facts = repository_facts({"train_lib.py": TRAIN_LIB, "train.py": TF + source})
    assert_reports(RULES, TF + source, facts=facts | STRATEGY_REPO,
                   findings=[("NPU027", 3, 0, "unmigrated")])


FINE_TUNE = '''\


def main(_):
    training_hooks = []
    training_hooks.append(LogTrainRunHook(global_batch_size, num_steps_ignore_xla=25))
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config)
    train_start_time = time.time()
    estimator.train(input_fn=train_input_fn, max_steps=num_train_steps, hooks=training_hooks)
    train_time_elapsed = time.time() - train_start_time
    train_time_wo_overhead = training_hooks[-1].total_time
    tf.logging.info("Throughput w/o overhead = %0.2f", num_train_steps / train_time_wo_overhead)
'''


def test_hooks_read_after_training_go_in_as_a_copy() -> None:
    """npu_hooks_append appends the NPU's broadcast hook to the list it is given, in place:
    ``training_hooks[-1]`` after training would be that hook, whose ``total_time`` does not
    exist (a BERT fine-tuning script). The list goes in as a copy, ``list(training_hooks)``."""
    after = FINE_TUNE.replace("hooks=training_hooks)", "hooks=npu_hooks_append(hooks_list=list(training_hooks)))")
    findings = pack_migrates(RULES, FINE_TUNE, after, header=TF, findings=[("NPU027", 9, 4, "migrated")])
    assert findings[0].message == (
        "wrapped a copy of the hooks in npu_hooks_append(hooks_list=list(...)): it appends to the "
        "list it is given, and training_hooks is used after this call")


RUNNER = '''\


class Runner(object):

    def __init__(self, model_fn, model_dir, benchmark):
        self._classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
        self._training_hooks = [tf.train.StepCounterHook(every_n_steps=100)]
        if benchmark:
            self._training_hooks.append(ProfilerHook(model_dir))

    def train(self, input_fn, max_steps):
        self._classifier.train(input_fn=input_fn, steps=max_steps, hooks=self._training_hooks)

    def benchmark(self, input_fn, max_steps):
        self._classifier.evaluate(input_fn=input_fn, steps=max_steps, hooks=[self._training_hooks[-1]])
'''


def test_hooks_of_an_attribute_go_in_as_a_copy() -> None:
    """``self._training_hooks`` outlives ``train``: the NPU's hook appended to it would run in
    ``benchmark``'s evaluation, and each call of ``train`` would add one more."""
    after = RUNNER.replace("hooks=self._training_hooks)",
                           "hooks=npu_hooks_append(hooks_list=list(self._training_hooks)))")
    pack_migrates(RULES, RUNNER, after, header=TF, findings=[("NPU027", 13, 8, "migrated")])


def test_hooks_in_a_tuple_go_in_as_a_list() -> None:
    """npu_hooks_append replaces what is not a list by a new list: the tuple's hooks would
    never run."""
    before = "estimator.train(train_input_fn, hooks=(logging_hook, summary_hook))\n"
    after = "estimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=list((logging_hook, summary_hook))))\n"
    findings = pack_migrates(RULES, before, after, header=ESTIMATOR, findings=[("NPU027", 3, 0, "migrated")])
    assert findings[0].message.endswith("it drops hooks that are not in a list")


@pytest.mark.parametrize("before, after", [
    ("hooks = [logging_hook]\nfor epoch in range(3):\n    estimator.train(train_input_fn, hooks=hooks)\n",
     "hooks = [logging_hook]\nfor epoch in range(3):\n"
     "    estimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=list(hooks)))\n"),
    ("hooks = [logging_hook]\nestimator.train(train_input_fn, hooks=hooks)\nhooks = []\n",
     "hooks = [logging_hook]\nestimator.train(train_input_fn, hooks=npu_hooks_append(hooks_list=hooks))\n"
     "hooks = []\n"),
])
def test_a_list_goes_in_as_a_copy_only_where_it_is_handed_over_again(before: str, after: str) -> None:
    """Trained in a loop, the same list would collect one NPU hook per epoch; a list nothing
    reads again goes in as it is, as the spec writes it."""
    pack_migrates(RULES, before, after, header=ESTIMATOR)


HOOKS_MODULE = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def make_hooks(steps):
    hooks = [tf.train.StopAtStepHook(last_step=steps // hvd.size())]
    if hvd.size() > 1:
        hooks.append(hvd.BroadcastGlobalVariablesHook(0))
    return hooks


def make_callbacks():
    return [hvd.callbacks.BroadcastGlobalVariablesCallback(0), tf.keras.callbacks.TerminateOnNaN()]


def logging_hooks():
    return [tf.train.LoggingTensorHook({"loss": "loss"}, every_n_iter=100)]
'''
HOOKS_TRAINER = '''\
import tensorflow as tf
import horovod.tensorflow as hvd

from trainer import utils
from trainer.utils import make_callbacks

estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
hooks = utils.make_hooks(1000)
estimator.train(input_fn, hooks=hooks)
estimator.train(input_fn, hooks=utils.make_hooks(10) + utils.logging_hooks())
estimator.train(input_fn, hooks=utils.logging_hooks())
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.fit(x, y, callbacks=make_callbacks())
'''
HOOKS_FILES = {"trainer/__init__.py": "", "trainer/utils.py": HOOKS_MODULE, "trainer/task.py": HOOKS_TRAINER}


def test_hooks_another_module_returns_with_a_broadcast_get_no_second_one() -> None:
    """``utils.make_hooks()`` returns Horovod's broadcast hook, which NPU024 replaces with the
    NPU's in ``utils.py``: wrapped in npu_hooks_append(...) in the training file, the variables
    were broadcast twice at each start. The analysis says which functions return one."""
    facts = repository_facts(HOOKS_FILES)
    assert {"broadcast-function:trainer.utils.make_hooks=hooks:horovod",
            "broadcast-function:trainer.utils.make_callbacks=callbacks:horovod"} <= facts
    assert not any(fact.startswith("broadcast-function:") and "logging_hooks" in fact for fact in facts)
    outcome = run_rules({"NPU024", "NPU027"}, HOOKS_TRAINER, facts, path="trainer/task.py")
    assert outcome.new is not None and outcome.new.count("_append(") == 1
    assert "hooks=npu_hooks_append(hooks_list=utils.logging_hooks())" in outcome.new
    assert [f.message.partition(" (")[0] for f in outcome.findings if f.rule_id == "NPU027"] == [
        "the hooks already hold NPUBroadcastGlobalVariablesHook(...)",
        "the hooks already hold NPUBroadcastGlobalVariablesHook(...)",
        "wrapped the hooks in npu_hooks_append(hooks_list=...)",
        "the callbacks already hold NPUBroadcastGlobalVariablesCallback(...)"]
    migrated = run_rules({"NPU024"}, HOOKS_MODULE, facts, path="trainer/utils.py").new
    assert migrated is not None
    rerun = repository_facts({**HOOKS_FILES, "trainer/utils.py": migrated})
    assert "broadcast-function:trainer.utils.make_hooks=hooks:npu" in rerun
    assert run_rules({"NPU024", "NPU027"}, HOOKS_TRAINER, rerun, path="trainer/task.py").new == outcome.new


@pytest.mark.parametrize("module", [
    HOOKS_MODULE.replace("import tensorflow as tf\n", ""),  # no TensorFlow file: not rewritten there
    HOOKS_MODULE.replace("BroadcastGlobalVariablesHook(0)", "BroadcastGlobalVariablesHook(0, device='/cpu:0')"),
])
def test_hooks_another_module_returns_with_horovod_s_kept_broadcast_are_reported(module: str) -> None:
    facts = repository_facts({**HOOKS_FILES, "trainer/utils.py": module})
    outcome = run_rules({"NPU024", "NPU027"}, HOOKS_TRAINER, facts, path="trainer/task.py")
    assert message_of(outcome.findings, "NPU027", 9).startswith(
        "the hooks utils.make_hooks() returns hold Horovod's broadcast, which stays in its module: replace it "
        "there with NPUBroadcastGlobalVariablesHook(...) and leave the hooks here as they are: "
        "npu_hooks_append(...) would add a second broadcast of the variables (guide: ")
    assert outcome.new is not None and "hooks=hooks)" in outcome.new
    off = run_rules({"NPU027"}, HOOKS_TRAINER, repository_facts(HOOKS_FILES), path="trainer/task.py")
    assert message_of(off.findings, "NPU027", 9).startswith("the hooks utils.make_hooks() returns hold Horovod's")


@pytest.mark.parametrize("function", [
    "def make_hooks(steps):\n    if steps:\n        return [hvd.BroadcastGlobalVariablesHook(0)]\n    return []\n",
    "def make_hooks(steps):\n    hooks = []\n    hooks.append(hvd.BroadcastGlobalVariablesHook(0))\n"
    "    hooks = [timer]\n    return hooks\n",  # rebound after the broadcast was added
    "def make_hooks(steps):\n    hooks = [timer]\n    result = hooks\n    hooks.append(hvd.BroadcastGlobalVariablesHook)\n"
    "    return result\n",
])
def test_hooks_another_module_returns_not_shown_to_broadcast_are_wrapped(function: str) -> None:
    module = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n\n\n" + function
    facts = repository_facts({**HOOKS_FILES, "trainer/utils.py": module})
    assert not any(fact.startswith("broadcast-function:") for fact in facts)
    outcome = run_rules({"NPU024", "NPU027"}, HOOKS_TRAINER, facts, path="trainer/task.py")
    assert outcome.new is not None and "hooks=npu_hooks_append(hooks_list=hooks)" in outcome.new


def test_a_star_imported_function_returning_a_broadcast_gets_no_second_one() -> None:
    trainer = HOOKS_TRAINER.replace("from trainer import utils\n", "from trainer.utils import *\n").replace(
        "utils.make_hooks(1000)", "make_hooks(1000)")
    facts = repository_facts({**HOOKS_FILES, "trainer/task.py": trainer})
    outcome = run_rules({"NPU024", "NPU027"}, trainer, facts, path="trainer/task.py")
    assert message_of(outcome.findings, "NPU027", 9).startswith("the hooks already hold")


@pytest.mark.parametrize("before, after", [
    # bound again after the call: the first call's hooks broadcast all the same
    ("hooks = [hvd.BroadcastGlobalVariablesHook(0)]\nestimator.train(input_fn, hooks=hooks)\n"
     "hooks = [timer]\nestimator.evaluate(eval_input_fn, hooks=hooks)\n",
     f"hooks = [{NPU_HOOK}]\nestimator.train(input_fn, hooks=hooks)\n"
     "hooks = [timer]\nestimator.evaluate(eval_input_fn, hooks=hooks)\n"),
    ("bcast_hook = hvd.BroadcastGlobalVariablesHook(0)\nhooks = [bcast_hook, timer]\n"
     "estimator.train(input_fn, hooks=hooks)\nbcast_hook = None\n",
     f"bcast_hook = {NPU_HOOK}\nhooks = [bcast_hook, timer]\n"
     "estimator.train(input_fn, hooks=hooks)\nbcast_hook = None\n"),
    ("with tf.Graph().as_default():\n    hooks = [timer]\n    hooks.append(hvd.BroadcastGlobalVariablesHook(0))\n"
     "    estimator.train(input_fn, hooks=hooks)\n",
     f"with tf.Graph().as_default():\n    hooks = [timer]\n    hooks.append({NPU_HOOK})\n"
     "    estimator.train(input_fn, hooks=hooks)\n"),
])
def test_what_holds_a_broadcast_follows_the_source_order(before: str, after: str) -> None:
    """What a name is bound to after the call, or before the binding that reaches it, is not
    what the call is given: the old check took every binding of the scope, and wrapped hooks
    that already broadcast (the variables broadcast twice)."""
    findings = assert_migrates({"NPU024", "NPU027"}, BROADCAST + before, INIT + "import os\n" + BROADCAST + after,
                               facts=HOROVOD_REPO)
    assert [f.message.partition(" (")[0] for f in findings if f.rule_id == "NPU027"][0] == (
        "the hooks already hold NPUBroadcastGlobalVariablesHook(...)")


@pytest.mark.parametrize("hooks, wrapped", [
    # bound again between the broadcast's append and the call: the call gets no broadcast
    ("hooks = [timer]\nhooks.append(hvd.BroadcastGlobalVariablesHook(0))\nhooks = [timer]\n"
     "estimator.train(input_fn, hooks=hooks)\n", "hooks=npu_hooks_append(hooks_list=hooks)"),
    ("hooks = [timer]\nif multi:\n    hooks.append(hvd.BroadcastGlobalVariablesHook(0))\nhooks = list(base)\n"
     "estimator.train(input_fn, hooks=hooks)\n", "hooks=npu_hooks_append(hooks_list=hooks)"),
    # a second turn of the loop is given [timer]
    ("hooks = [hvd.BroadcastGlobalVariablesHook(0)]\nfor epoch in range(3):\n"
     "    estimator.train(input_fn, hooks=hooks)\n    hooks = [timer]\n",
     "hooks=npu_hooks_append(hooks_list=list(hooks))"),
    ("hooks = [timer]\nestimator.train(input_fn, hooks=hooks)\nhooks = [hvd.BroadcastGlobalVariablesHook(0)]\n",
     "hooks=npu_hooks_append(hooks_list=hooks)"),
])
def test_a_broadcast_that_does_not_reach_the_call_gets_the_npu_s(hooks: str, wrapped: str) -> None:
    outcome = run_rules({"NPU024", "NPU027"}, BROADCAST + hooks, HOROVOD_REPO)
    assert outcome.new is not None and wrapped in outcome.new
