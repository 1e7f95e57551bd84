"""NPU067 on a model the entry builds and hands to a trainer of the repository
(``trainer = Trainer(model, optimizer)`` or ``trainer.compile(model=model)``, then
``trainer.fit(...)``): before, neither a broadcast nor a finding (TensorFlowTTS's ten training
scripts, a package's custom trainer). A ``trained-parameter:`` fact of the trainer's file says
which parameter its method trains: then the model is a site as if the entry trained it; a
trainer the repository does not show training it still makes the model a reported site."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.api._toolkit import model_facts
from npu_codemod.plugins.rules.tf2_distributed._trainers import parameter_facts

from support.cli import cli
from support.git import git, make_repo
from support.rules import assert_migrates, assert_unchanged, sites

TRAINER = '''\
"""A custom trainer (library)."""
import tensorflow as tf


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
        gradients = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))

    def fit(self, dataset):
        for x, y in dataset:
            self._step(x, y)


class Compiled(Trainer):
    def __init__(self):
        pass

    def compile(self, model, optimizer):
        self._model = model
        self.optimizer = optimizer

    def _step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self._model(x))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self._model.trainable_variables),
                                           self._model.trainable_variables))


class Forwarding(Compiled):
    def compile(self, model, optimizer):
        super().compile(model, optimizer)
'''
ENTRY = '''\
"""Train with the custom trainer."""
import tensorflow as tf

from pkg.trainer import Trainer


def main(ds):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    trainer = Trainer(model, tf.keras.optimizers.Adam(1e-3))
    trainer.fit(ds)
'''
FACTS = {"tf-runtime:2", *parameter_facts("pkg/trainer.py", TRAINER)}
BROADCAST = "    npu.distribute.broadcast(model.trainable_variables)\n"
NPU = "import npu_device as npu\n"


def test_the_trainer_s_parameters_it_trains_are_facts() -> None:
    assert parameter_facts("pkg/trainer.py", TRAINER) == {
        "trained-parameter:pkg.trainer.Trainer.__init__=0:model",
        "trained-parameter:pkg.trainer.Compiled.compile=0:model"}


def test_a_built_model_handed_to_a_repository_trainer_is_broadcast() -> None:
    """The review's reproducer: ``Trainer(model, ...)`` keeps the model on ``self`` and its
    step trains ``self.model.trainable_variables``."""
    after = ENTRY.replace('"""Train with the custom trainer."""\n', '"""Train with the custom trainer."""\n' + NPU) \
        .replace("input_shape=(4,))])\n", "input_shape=(4,))])\n" + BROADCAST)
    findings = assert_migrates(ENTRY, after, {"NPU067"}, facts=FACTS)
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 8, 4, "migrated")]


def test_a_model_given_to_the_trainer_s_compile_by_keyword_is_broadcast() -> None:
    source = ENTRY.replace("Trainer", "Compiled").replace(
        "    trainer = Compiled(model, tf.keras.optimizers.Adam(1e-3))\n",
        "    trainer = Compiled()\n    trainer.compile(model=model, optimizer=tf.keras.optimizers.Adam(1e-3))\n")
    after = source.replace('"""Train with the custom trainer."""\n', '"""Train with the custom trainer."""\n' + NPU) \
        .replace("input_shape=(4,))])\n", "input_shape=(4,))])\n" + BROADCAST)
    findings = assert_migrates(source, after, {"NPU067"}, facts=FACTS)
    assert sites(f for f in findings if f.rule_id == "NPU067") == [("NPU067", 8, 4, "migrated")]


def test_a_trainer_not_shown_to_train_the_model_makes_it_reported() -> None:
    """``Forwarding.compile`` hands the model on through ``super()``: no fact, but the
    trainer is fitted. Reported with the line to add, not rewritten, never silent."""
    source = ENTRY.replace("Trainer", "Forwarding").replace(
        "    trainer = Forwarding(model, tf.keras.optimizers.Adam(1e-3))\n",
        "    trainer = Forwarding()\n    trainer.compile(model, tf.keras.optimizers.Adam(1e-3))\n")
    findings = [f for f in assert_unchanged(source, {"NPU067"}, facts=FACTS) if f.rule_id == "NPU067"]
    assert sites(findings) == [("NPU067", 8, 4, "unmigrated")]
    assert findings[0].message.startswith("handed to trainer.compile, which may train it")
    assert "npu.distribute.broadcast(model.trainable_variables) after the model is built" in findings[0].message


def test_a_model_handed_to_something_untrained_or_to_tensorflow_is_no_site() -> None:
    """A repository helper whose result nobody fits (a logger), a TensorFlow API (a checkpoint):
    no trainer, no site."""
    source = ENTRY.replace("    trainer = Trainer(model, tf.keras.optimizers.Adam(1e-3))\n    trainer.fit(ds)\n",
                           "    logger = Trainer(model, None)\n    logger.log(ds)\n"
                           "    ckpt = tf.train.Checkpoint(model=model)\n    ckpt.save('x')\n") \
        .replace("from pkg.trainer import Trainer", "from pkg.log import Trainer")
    assert [f for f in assert_unchanged(source, {"NPU067"}, facts=FACTS) if f.rule_id == "NPU067"] == []


NET = '''\
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self, n):
        super().__init__()
        self.dense = tf.keras.layers.Dense(n)

    def call(self, x):
        return self.dense(x)
'''


def test_a_subclassed_model_handed_to_a_trainer_in_a_scope_is_reported_at_its_construction() -> None:
    """TensorFlowTTS's shape: the model built in ``strategy.scope()``, ``trainer.compile(model=...)``
    after the block: variables created lazily, reported where the model is made."""
    source = '''\
import tensorflow as tf

from model import Net
from pkg.trainer import Forwarding


def main(ds):
    strategy = tf.distribute.MirroredStrategy()
    trainer = Forwarding()
    with strategy.scope():
        net = Net(3)
        optimizer = tf.keras.optimizers.Adam()
    trainer.compile(model=net, optimizer=optimizer)
    trainer.fit(ds)
'''
    facts = {*FACTS, *model_facts("model.py", NET)}
    findings = [f for f in assert_unchanged(source, {"NPU067"}, facts=facts) if f.rule_id == "NPU067"]
    assert sites(findings) == [("NPU067", 11, 8, "unmigrated")]
    assert findings[0].message.startswith("variables are created lazily: call npu.distribute.broadcast("
                                          "net.trainable_variables)")


BASE_MODEL = "import tensorflow as tf\n\n\nclass BaseModel(tf.keras.Model):\n    pass\n"
TTS_NET = NET.replace("import tensorflow as tf\n", "import tensorflow as tf\n\nfrom tts.models import BaseModel\n") \
    .replace("class Net(tf.keras.Model):", "class Net(BaseModel):")
TTS_ENTRY = '''\
"""Train the TTS model (TensorFlowTTS-shaped)."""
import tensorflow as tf

from tts.models import Net
from tts.trainers import Forwarding


def main():
    ds = tf.data.Dataset.from_tensor_slices(([[1.0]], [[0.0]])).repeat()
    strategy = tf.distribute.MirroredStrategy()
    trainer = Forwarding()
    with strategy.scope():
        net = Net(3)
        optimizer = tf.keras.optimizers.Adam()
    trainer.compile(model=net, optimizer=optimizer)
    trainer.fit(ds)


if __name__ == "__main__":
    main()
'''
FILES = {
    "tts/__init__.py": "",
    "tts/models/__init__.py": "from tts.models.base_model import BaseModel\nfrom tts.models.net import Net\n",
    "tts/models/base_model.py": BASE_MODEL,
    "tts/models/net.py": TTS_NET,
    "tts/trainers/__init__.py": "from tts.trainers.base import Trainer, Compiled, Forwarding\n",
    "tts/trainers/base.py": TRAINER,
    "train_tts.py": TTS_ENTRY,
    "train_dense.py": ENTRY.replace("pkg.trainer", "tts.trainers").replace(
        "def main(ds):\n", "def main():\n    ds = tf.data.Dataset.from_tensor_slices(([[1.0] * 4], [[0.0]]))\n")
    + '\n\nif __name__ == "__main__":\n    main()\n',
    "requirements.txt": "tensorflow>=2.4\n",
}


def _npu067(tmp_path: Path, list_name: str, report: str, *extra: str) -> tuple[dict, list[tuple]]:
    rules = ("--rules", "default,tf2-distributed")
    cli("run", "--repos", list_name, "--report-dir", report, "--no-progress", "--no-cache", *rules, *extra,
        cwd=tmp_path, expect=0)
    (record,) = json.loads((tmp_path / report / "run.json").read_text())["repos"]
    return record, sorted((f["path"], f["line"], f["status"], f["message"].split(":")[0])
                          for f in record["findings"] if f["rule_id"] == "NPU067")


def test_models_handed_to_a_package_s_trainers_through_the_cli(tmp_path: Path) -> None:
    """A package re-exporting its models (a base class imported through the package, as
    TensorFlowTTS's ``from tensorflow_tts.models import BaseModel``) and its trainers: the
    subclassed model is reported at its construction, the built one is broadcast; both
    engines agree; a rerun on the branch changes nothing."""
    make_repo(tmp_path / "tts", FILES)
    (tmp_path / "repos.txt").write_text("tts\n")
    record, npu067 = _npu067(tmp_path, "repos.txt", "one", "--dry-run", "--engine", "selective")
    assert npu067 == [
        ("train_dense.py", 9, "migrated", "added npu.distribute.broadcast(model.trainable_variables) after the "
                                          "model is built"),
        ("train_tts.py", 13, "unmigrated", "variables are created lazily")]
    full, _ = _npu067(tmp_path, "repos.txt", "full", "--dry-run", "--engine", "full")
    assert full["findings"] == record["findings"]
    patches = {engine: {path.name: path.read_bytes() for path in (tmp_path / engine / "patches").rglob("*.patch")}
               for engine in ("one", "full")}
    assert patches["one"] == patches["full"] and patches["one"]
    _npu067(tmp_path, "repos.txt", "apply")
    dense = git(tmp_path / "tts", "show", "npu-codemod/sess-run-to-npu:train_dense.py")
    assert "input_shape=(4,))])\n" + BROADCAST in dense
    (tmp_path / "again.txt").write_text("tts npu-codemod/sess-run-to-npu\n")
    rerun, again = _npu067(tmp_path, "again.txt", "two", "--branch", "again")
    assert rerun["files_changed"] == []
    assert again == [("train_dense.py", 11, "compliant", "the model's initial variables are broadcast to every worker"),
                     ("train_tts.py", 15, "unmigrated", "variables are created lazily")]


#: TensorFlow Examples' ``nmt_with_attention/train.py``: two models kept on ``self``, their
#: variables summed over a continuation line.
TWO_MODELS = '''\
import tensorflow as tf


class Train(object):
    def __init__(self, epochs, encoder, decoder):
        self.epochs = epochs
        self.encoder = encoder
        self.decoder = decoder
        self.optimizer = tf.keras.optimizers.Adam()

    def train_step(self, inp):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(self.decoder(self.encoder(inp)))
        variables = (self.encoder.trainable_variables +
                     self.decoder.trainable_variables)
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
'''


def test_variables_kept_over_a_continuation_line_train_each_model() -> None:
    """Regression (tensorflow/examples): the decoder, named on the assignment's second line,
    was not trained, and NPU067 reported the encoder alone."""
    assert parameter_facts("train.py", TWO_MODELS) == {
        "trained-parameter:train.Train.__init__=1:encoder", "trained-parameter:train.Train.__init__=2:decoder"}
