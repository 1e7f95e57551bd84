"""The distributed pack on whole scripts, as Horovod's own examples write them, and on a
repository through the command line: what the issue's acceptance asks of it."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from npu_codemod.testing import assert_migrates, run_rules

from support.cli import cli
from support.git import make_repo, show
from support.packs import DISTRIBUTED, KERAS, message_of, repository_facts
from support.rules import assert_check_lists_run_sites, process

ESTIMATOR_TRAINER = '''\
#!/usr/bin/env python
"""Horovod MNIST on tf.estimator (TF 1.x): one process per GPU, launched by horovodrun."""
import os

import numpy as np
import tensorflow as tf
import horovod.tensorflow as hvd

tf.logging.set_verbosity(tf.logging.INFO)


def cnn_model_fn(features, labels, mode):
    input_layer = tf.reshape(features["x"], [-1, 28, 28, 1])
    dense = tf.layers.dense(tf.layers.flatten(input_layer), units=1024, activation=tf.nn.relu)
    logits = tf.layers.dense(dense, units=10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    # Horovod: scale the learning rate by the number of workers.
    optimizer = tf.train.MomentumOptimizer(learning_rate=0.001 * hvd.size(), momentum=0.9)
    # Horovod: add Horovod Distributed Optimizer.
    optimizer = hvd.DistributedOptimizer(optimizer)
    train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main(unused_argv):
    # Horovod: initialize Horovod.
    hvd.init()

    mnist = tf.contrib.learn.datasets.mnist.read_data_sets("MNIST-data-%d" % hvd.rank())
    train_data = mnist.train.images
    train_labels = np.asarray(mnist.train.labels, dtype=np.int32)

    # Horovod: pin GPU to be used to process local rank (one GPU per process)
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())

    # Horovod: save checkpoints only on worker 0 to prevent other workers from
    # corrupting them.
    model_dir = "./mnist_convnet_model" if hvd.rank() == 0 else None
    checkpoint_path = os.path.join("/tmp/checkpoints", f"rank-{hvd.rank()}")

    mnist_classifier = tf.estimator.Estimator(
        model_fn=cnn_model_fn, model_dir=model_dir,
        config=tf.estimator.RunConfig(session_config=config))

    # Horovod: BroadcastGlobalVariablesHook broadcasts initial variable states from
    # rank 0 to all other processes.
    bcast_hook = hvd.BroadcastGlobalVariablesHook(0)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": train_data}, train_labels))
        dataset = dataset.shard(hvd.size(), hvd.rank())
        return dataset.shuffle(10000).batch(100).repeat()

    # Horovod: adjust number of steps based on number of GPUs.
    mnist_classifier.train(
        input_fn=train_input_fn,
        steps=20000 // hvd.size(),
        hooks=[bcast_hook])


if __name__ == "__main__":
    tf.app.run()
'''
ESTIMATOR_TRAINER_AFTER = '''\
#!/usr/bin/env python
"""Horovod MNIST on tf.estimator (TF 1.x): one process per GPU, launched by horovodrun."""
from npu_bridge.npu_init import *
import os

import numpy as np
import tensorflow as tf

tf.logging.set_verbosity(tf.logging.INFO)


def cnn_model_fn(features, labels, mode):
    input_layer = tf.reshape(features["x"], [-1, 28, 28, 1])
    dense = tf.layers.dense(tf.layers.flatten(input_layer), units=1024, activation=tf.nn.relu)
    logits = tf.layers.dense(dense, units=10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    # Horovod: scale the learning rate by the number of workers.
    optimizer = tf.train.MomentumOptimizer(learning_rate=0.001 * get_npu_rank_size(), momentum=0.9)
    # Horovod: add Horovod Distributed Optimizer.
    optimizer = npu_distributed_optimizer_wrapper(optimizer)
    train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main(unused_argv):
    # Horovod: initialize Horovod.
    mnist = tf.contrib.learn.datasets.mnist.read_data_sets("MNIST-data-%d" % get_npu_rank_id())
    train_data = mnist.train.images
    train_labels = np.asarray(mnist.train.labels, dtype=np.int32)

    # Horovod: pin GPU to be used to process local rank (one GPU per process)
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True

    # Horovod: save checkpoints only on worker 0 to prevent other workers from
    # corrupting them.
    model_dir = "./mnist_convnet_model" if get_npu_rank_id() == 0 else None
    checkpoint_path = os.path.join("/tmp/checkpoints", f"rank-{get_npu_rank_id()}")

    mnist_classifier = tf.estimator.Estimator(
        model_fn=cnn_model_fn, model_dir=model_dir,
        config=tf.estimator.RunConfig(session_config=config))

    # Horovod: BroadcastGlobalVariablesHook broadcasts initial variable states from
    # rank 0 to all other processes.
    bcast_hook = NPUBroadcastGlobalVariablesHook(0, int(os.getenv('RANK_ID', '0')))

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": train_data}, train_labels))
        dataset = dataset.shard(get_npu_rank_size(), get_npu_rank_id())
        return dataset.shuffle(10000).batch(100).repeat()

    # Horovod: adjust number of steps based on number of GPUs.
    mnist_classifier.train(
        input_fn=train_input_fn,
        steps=20000 // get_npu_rank_size(),
        hooks=[bcast_hook])


if __name__ == "__main__":
    tf.app.run()
'''
KERAS_TRAINER = '''\
"""Horovod + tf.keras MNIST (TF 1.x graph mode)."""
import math

import tensorflow as tf
import horovod.tensorflow.keras as hvd
from tensorflow.keras import backend as K

# Horovod: initialize Horovod.
hvd.init()

# Horovod: pin GPU to be used to process local rank (one GPU per process)
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
config.gpu_options.visible_device_list = str(hvd.local_rank())
K.set_session(tf.Session(config=config))


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    return model


def main():
    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data("mnist-%d.npz" % hvd.rank())
    model = build_model()
    # Horovod: adjust learning rate based on number of GPUs.
    opt = tf.keras.optimizers.Adadelta(1.0 * hvd.size())
    # Horovod: add Horovod Distributed Optimizer.
    opt = hvd.DistributedOptimizer(opt)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    callbacks = [
        # Horovod: broadcast initial variable states from rank 0 to all other processes.
        hvd.callbacks.BroadcastGlobalVariablesCallback(0),
        # Horovod: average metrics among workers at the end of every epoch.
        hvd.callbacks.MetricAverageCallback(),
    ]
    # Horovod: save checkpoints only on worker 0 to prevent other workers from corrupting them.
    if hvd.rank() == 0:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint("./checkpoint-{epoch}.h5"))
    model.fit(x_train, y_train, batch_size=128, callbacks=callbacks,
              epochs=int(math.ceil(12.0 / hvd.size())), verbose=1 if hvd.rank() == 0 else 0)
    K.clear_session()


if __name__ == "__main__":
    main()
'''
KERAS_TRAINER_AFTER = '''\
"""Horovod + tf.keras MNIST (TF 1.x graph mode)."""
from npu_bridge.npu_init import *
import math

import tensorflow as tf
import horovod.tensorflow.keras as hvd
from tensorflow.keras import backend as K

# Horovod: initialize Horovod.
hvd.init()

# Horovod: pin GPU to be used to process local rank (one GPU per process)
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
K.set_session(tf.Session(config=config))


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    return model


def main():
    (x_train, y_train), _ = tf.keras.datasets.mnist.load_data("mnist-%d.npz" % get_npu_rank_id())
    model = build_model()
    # Horovod: adjust learning rate based on number of GPUs.
    opt = tf.keras.optimizers.Adadelta(1.0 * get_npu_rank_size())
    # Horovod: add Horovod Distributed Optimizer.
    opt = npu_distributed_optimizer_wrapper(opt)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    callbacks = [
        # Horovod: broadcast initial variable states from rank 0 to all other processes.
        NPUBroadcastGlobalVariablesCallback(root_rank=0),
        # Horovod: average metrics among workers at the end of every epoch.
        hvd.callbacks.MetricAverageCallback(),
    ]
    # Horovod: save checkpoints only on worker 0 to prevent other workers from corrupting them.
    if get_npu_rank_id() == 0:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint("./checkpoint-{epoch}.h5"))
    model.fit(x_train, y_train, batch_size=128, callbacks=callbacks,
              epochs=int(math.ceil(12.0 / get_npu_rank_size())), verbose=1 if get_npu_rank_id() == 0 else 0)
    npu_clear_session()


if __name__ == "__main__":
    main()
'''


def test_a_horovod_estimator_trainer() -> None:
    facts = repository_facts({"train.py": ESTIMATOR_TRAINER})
    removed = [("NPU021", 27, 4, "migrated"), ("NPU022", 36, 4, "migrated"),
               ("NPU025", 7, 0, "migrated")]
    findings = assert_migrates(DISTRIBUTED | KERAS, ESTIMATOR_TRAINER, ESTIMATOR_TRAINER_AFTER,
                               facts=facts, removed=removed, findings=[
                                   ("NPU021", 27, 4, "migrated"),  # hvd.init()
                                   ("NPU022", 18, 65, "migrated"),  # learning rate * hvd.size()
                                   ("NPU022", 29, 77, "migrated"),  # data dir per rank
                                   ("NPU022", 36, 4, "migrated"),  # GPU pinning
                                   ("NPU022", 40, 43, "migrated"),  # model_dir on rank 0
                                   ("NPU022", 41, 63, "migrated"),  # checkpoint path f-string
                                   ("NPU022", 53, 32, "migrated"),  # dataset.shard(size, rank)
                                   ("NPU022", 53, 44, "migrated"),
                                   ("NPU022", 59, 23, "migrated"),  # steps // hvd.size()
                                   ("NPU023", 20, 16, "migrated"),  # DistributedOptimizer
                                   ("NPU024", 49, 17, "migrated"),  # BroadcastGlobalVariablesHook
                                   ("NPU025", 7, 0, "migrated"),  # the import, unused now
                                   ("NPU027", 57, 4, "migrated"),  # hooks of Estimator.train
                               ])
    assert {f.status for f in findings} == {"migrated"}
    assert "hvd" not in ESTIMATOR_TRAINER_AFTER


def test_a_horovod_keras_trainer() -> None:
    facts = repository_facts({"train.py": KERAS_TRAINER})
    removed = [("NPU022", 14, 0, "migrated")]
    findings = assert_migrates(DISTRIBUTED | KERAS, KERAS_TRAINER, KERAS_TRAINER_AFTER, facts=facts,
                               removed=removed, findings=[
                                   ("NPU021", 9, 0, "unmigrated"),  # kept: a callback needs it
                                   ("NPU022", 14, 0, "migrated"),
                                   ("NPU022", 28, 79, "migrated"),
                                   ("NPU022", 31, 45, "migrated"),
                                   ("NPU022", 42, 7, "migrated"),
                                   ("NPU022", 45, 42, "migrated"),
                                   ("NPU022", 45, 69, "migrated"),
                                   ("NPU023", 33, 10, "migrated"),
                                   ("NPU024", 37, 8, "migrated"),
                                   ("NPU025", 39, 8, "unmigrated"),  # MetricAverageCallback
                                   ("NPU027", 44, 4, "migrated"),
                                   ("NPU042", 46, 4, "migrated"),
                               ])
    # The one Horovod use left is reported and keeps Horovod initialised, so the init and the
    # import stay (K.set_session: NPU007's).
    assert [line for line in KERAS_TRAINER_AFTER.splitlines() if "hvd" in line] == [
        "import horovod.tensorflow.keras as hvd", "hvd.init()",
        "        hvd.callbacks.MetricAverageCallback(),"]
    assert [f.line for f in findings if f.rule_id == "NPU025"] == [39]
    assert message_of(findings, "NPU021", 9).startswith(
        "kept: hvd.callbacks.MetricAverageCallback() (line 39) still need Horovod initialised; "
        "migrate or remove them first")


BRANCH = "npu-codemod/sess-run-to-npu"
HELPER = '''\
"""Rank helpers shared by the training scripts."""
import horovod.tensorflow as hvd


def is_chief():
    return hvd.rank() == 0
'''
TORCH = "import torch\nimport horovod.torch as hvd\n\nhvd.init()\ntorch.cuda.set_device(hvd.local_rank())\n"
DOWNLOAD = '''\
import requests
import tensorflow as tf


def download(url, target):
    session = requests.Session()
    tf.gfile.GFile(target, "wb").write(session.get(url, timeout=30).content)
'''
FILES = {"train.py": ESTIMATOR_TRAINER, "hvd_utils.py": HELPER, "torch_train.py": TORCH,
         "download.py": DOWNLOAD}


def findings_of(report_dir: Path) -> list[dict[str, str]]:
    with (report_dir / "findings.csv").open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_a_horovod_repository_with_and_without_the_pack(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mnist", FILES)
    (tmp_path / "repos.txt").write_text("mnist\n")
    default = cli("run", "--repos", "repos.txt", "--report-dir", "default", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    migrated = show(repo, BRANCH, "train.py").decode()
    # Off by default: every Horovod line is as it was (the sess.run rules changed others).
    assert [line for line in ESTIMATOR_TRAINER.splitlines() if "hvd" in line] == \
        [line for line in migrated.splitlines() if "hvd" in line]
    assert not [row for row in findings_of(tmp_path / "default") if row["rule_id"] < "NPU030"
                and row["rule_id"] > "NPU020"]

    pack = ",".join(sorted(DISTRIBUTED))
    run = cli("run", "--repos", "repos.txt", "--rules", pack, "--report-dir", "pack", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    rows = findings_of(tmp_path / "pack")
    assert "hvd" not in show(repo, BRANCH, "train.py").decode()
    for path, text in FILES.items():  # no Horovod use of a TensorFlow Horovod file unreported
        hvd_lines = {number for number, line in enumerate(text.splitlines(), 1)
                     if re.search(r"\bhvd\.", line) and "torch" not in text}
        reported = {int(row["line"]) for row in rows if row["path"] == path}
        assert hvd_lines <= reported, path
    for path in ("hvd_utils.py", "torch_train.py", "download.py"):  # not TF files, or nothing to do
        assert show(repo, BRANCH, path).decode() == FILES[path]
    assert [(row["path"], row["line"], row["status"]) for row in rows if row["path"] != "train.py"] == [
        ("hvd_utils.py", "6", "unmigrated")]


@pytest.mark.parametrize("source", [ESTIMATOR_TRAINER, KERAS_TRAINER], ids=["estimator", "keras"])
def test_check_lists_what_run_rewrites_and_reports(source: str) -> None:
    facts = repository_facts({"train.py": source})
    outcome = process(source, DISTRIBUTED | KERAS, facts)
    again = run_rules(DISTRIBUTED | KERAS, outcome.new_data.decode("utf-8"), facts).findings
    assert_check_lists_run_sites(outcome, again)


LAUNCHER = '''\
"""Start one worker per GPU: rank and size from Horovod, the training in trainer.py."""
import sys

from horovod.tensorflow import init, local_rank, rank, size

import trainer

if __name__ == "__main__":
    init()
    trainer.main(rank(), size(), local_rank(), sys.argv[1:])
'''
TRAINER = '''\
import tensorflow as tf


def main(rank, size, local_rank, argv):
    estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="/tmp/model-%d" % rank)
    estimator.train(input_fn=train_input_fn, steps=20000 // size)
'''


@pytest.mark.parametrize("launcher", [
    LAUNCHER,
    LAUNCHER.replace("from horovod.tensorflow import init, local_rank, rank, size\n",
                     "from horovod.tensorflow.keras import init, local_rank, rank, size\n"),
    LAUNCHER.replace("from horovod.tensorflow import init, local_rank, rank, size\n",
                     "import horovod.keras as hvd\n").replace("init()", "hvd.init()").replace(
        "rank(), size(), local_rank()", "hvd.rank(), hvd.size(), hvd.local_rank()"),
])
def test_a_launcher_that_imports_horovod_but_not_tensorflow_makes_the_repository_distributed(launcher: str) -> None:
    """The launcher imports Horovod's names and no TensorFlow (``from horovod.tensorflow
    import init``: not read as a TensorFlow file), the trainer TensorFlow and no Horovod: the
    repository trains with Horovod all the same, and its Estimator needs the NPU's hooks."""
    facts = repository_facts({"launch.py": launcher, "trainer.py": TRAINER})
    assert "distributed:horovod" in facts
    outcome = run_rules(DISTRIBUTED, TRAINER, facts, path="trainer.py")
    assert outcome.new is not None and "steps=20000 // size, hooks=npu_hooks_append())" in outcome.new
