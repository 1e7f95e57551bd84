"""The distributed pack never breaks Horovod training (issue #26), on whole scripts as Horovod's
users write them: ``hvd.init()`` stays while Horovod calls still need it (in the file, or in a
file that imports from it), and always after a ``shutdown()``; a package's imports of Horovod
are its API and stay; a repository that is Horovod itself is library code, reported once per
file and not migrated; and with the pack off every Horovod use gets a finding naming the opt-in.
"""

from __future__ import annotations

import csv
from pathlib import Path

from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.cli import cli
from support.git import make_repo, show
from support.packs import DISTRIBUTED, INIT, KERAS, message_of, repository_facts

OPT_IN = "npu-codemod migrates this with `--rules default,distributed`"

MONITORED = '''\
#!/usr/bin/env python
"""Horovod MNIST with tf.train.MonitoredTrainingSession (TF 1.x graph mode).

Run with: horovodrun -np 4 python tensorflow_mnist.py --use-adasum
"""
import argparse
import errno
import os

import numpy as np
import tensorflow as tf
import horovod.tensorflow as hvd

layers = tf.layers

tf.logging.set_verbosity(tf.logging.INFO)

parser = argparse.ArgumentParser(description="Tensorflow MNIST Example")
parser.add_argument("--use-adasum", action="store_true", default=False,
                    help="use adasum algorithm to do reduction")
args = parser.parse_args()


def conv_model(feature, target, mode):
    """2-layer convolution model."""
    target = tf.one_hot(tf.cast(target, tf.int32), 10, 1, 0)
    feature = tf.reshape(feature, [-1, 28, 28, 1])
    with tf.variable_scope("conv_layer1"):
        h_conv1 = layers.conv2d(feature, 32, kernel_size=[5, 5], activation=tf.nn.relu, padding="SAME")
        h_pool1 = tf.nn.max_pool(h_conv1, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    h_pool2_flat = tf.reshape(h_pool1, [-1, 14 * 14 * 32])
    h_fc1 = layers.dropout(layers.dense(h_pool2_flat, 1024, activation=tf.nn.relu),
                           rate=0.5, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = layers.dense(h_fc1, 10, activation=None)
    loss = tf.losses.softmax_cross_entropy(target, logits)
    return tf.argmax(logits, 1), loss


def train_input_generator(x_train, y_train, batch_size=64):
    assert len(x_train) == len(y_train)
    while True:
        p = np.random.permutation(len(x_train))
        x_train, y_train = x_train[p], y_train[p]
        index = 0
        while index <= len(x_train) - batch_size:
            yield x_train[index:index + batch_size], y_train[index:index + batch_size],
            index += batch_size


def main(_):
    # Horovod: initialize Horovod.
    hvd.init()

    # Keras automatically creates a cache directory in ~/.keras/datasets for
    # storing the downloaded MNIST data. This creates a race condition among the
    # workers that share the same filesystem.
    cache_dir = os.path.join(os.path.expanduser("~"), ".keras", "datasets")
    if not os.path.exists(cache_dir):
        try:
            os.mkdir(cache_dir)
        except OSError as e:
            if e.errno == errno.EEXIST and os.path.isdir(cache_dir):
                pass
            else:
                raise

    # Download and load MNIST dataset.
    (x_train, y_train), (x_test, y_test) = \\
        tf.keras.datasets.mnist.load_data("MNIST-data-%d" % hvd.rank())
    x_train = np.reshape(x_train, (-1, 784)) / 255.0

    with tf.name_scope("input"):
        image = tf.placeholder(tf.float32, [None, 784], name="image")
        label = tf.placeholder(tf.float32, [None], name="label")
    predict, loss = conv_model(image, label, tf.estimator.ModeKeys.TRAIN)

    # Horovod: adjust learning rate based on number of GPUs.
    lr_scaler = hvd.size()
    # By default, Adasum doesn't need scaling when increasing batch size. If used with
    # NCCL, scale lr by local_size.
    if args.use_adasum:
        lr_scaler = hvd.local_size() if hvd.nccl_built() else 1
    opt = tf.train.AdamOptimizer(0.001 * lr_scaler)

    # Horovod: add Horovod Distributed Optimizer.
    opt = hvd.DistributedOptimizer(opt, op=hvd.Adasum if args.use_adasum else hvd.Average)

    global_step = tf.train.get_or_create_global_step()
    train_op = opt.minimize(loss, global_step=global_step)

    hooks = [
        # Horovod: BroadcastGlobalVariablesHook broadcasts initial variable states
        # from rank 0 to all other processes. This is necessary to ensure consistent
        # initialization of all workers when training is started with random weights
        # or restored from a checkpoint.
        hvd.BroadcastGlobalVariablesHook(0),

        # Horovod: adjust number of steps based on number of GPUs.
        tf.train.StopAtStepHook(last_step=20000 // hvd.size()),

        tf.train.LoggingTensorHook(tensors={"step": global_step, "loss": loss},
                                   every_n_iter=10),
    ]

    # Horovod: pin GPU to be used to process local rank (one GPU per process)
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    config.gpu_options.visible_device_list = str(hvd.local_rank())

    # Horovod: save checkpoints only on worker 0 to prevent other workers from
    # corrupting them.
    checkpoint_dir = "./checkpoints" if hvd.rank() == 0 else None
    training_batch_generator = train_input_generator(x_train, y_train, batch_size=100)
    # The MonitoredTrainingSession takes care of session initialization,
    # restoring from a checkpoint, saving to a checkpoint, and closing when done
    # or an error occurs.
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir,
                                           hooks=hooks,
                                           config=config) as mon_sess:
        while not mon_sess.should_stop():
            # Run a training step synchronously.
            image_, label_ = next(training_batch_generator)
            mon_sess.run(train_op, feed_dict={image: image_, label: label_})


if __name__ == "__main__":
    tf.app.run()
'''
KERAS_ADVANCED = '''\
"""Horovod + Keras MNIST with learning-rate warmup, resumed from the last checkpoint.

Run with: horovodrun -np 4 python keras_mnist_advanced.py --epochs 24
"""
import argparse
import os

import keras
import tensorflow as tf
import horovod.keras as hvd
from keras import backend as K
from keras.datasets import mnist
from keras.layers import Conv2D, Dense, Dropout, Flatten, MaxPooling2D

parser = argparse.ArgumentParser(description="Keras MNIST Example")
parser.add_argument("--epochs", type=int, default=24, help="number of epochs to train")
parser.add_argument("--checkpoint-format", default="./checkpoint-{epoch}.h5")
args = parser.parse_args()

# Horovod: initialize Horovod.
hvd.init()

# Horovod: pin GPU to be used to process local rank (one GPU per process)
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
config.gpu_options.visible_device_list = str(hvd.local_rank())
K.set_session(tf.Session(config=config))

batch_size = 128
num_classes = 10

# If set > 0, will resume training from a given checkpoint.
resume_from_epoch = 0
for try_epoch in range(args.epochs, 0, -1):
    if os.path.exists(args.checkpoint_format.format(epoch=try_epoch)):
        resume_from_epoch = try_epoch
        break

# Horovod: broadcast resume_from_epoch from rank 0 (which will have
# checkpoints) to other ranks.
resume_from_epoch = hvd.broadcast(resume_from_epoch, 0, name="resume_from_epoch")

(x_train, y_train), (x_test, y_test) = mnist.load_data()
x_train = x_train.reshape(x_train.shape[0], 28, 28, 1).astype("float32") / 255
y_train = keras.utils.to_categorical(y_train, num_classes)


def build_model():
    model = keras.models.Sequential()
    model.add(Conv2D(32, kernel_size=(3, 3), activation="relu", input_shape=(28, 28, 1)))
    model.add(MaxPooling2D(pool_size=(2, 2)))
    model.add(Dropout(0.25))
    model.add(Flatten())
    model.add(Dense(num_classes, activation="softmax"))
    return model


# Restore from a previous checkpoint, if initial_epoch is specified.
# Horovod: restore on the first worker which will broadcast both model and optimizer weights
# to other workers.
if resume_from_epoch > 0 and hvd.rank() == 0:
    model = hvd.load_model(args.checkpoint_format.format(epoch=resume_from_epoch))
else:
    model = build_model()
    # Horovod: adjust learning rate based on number of GPUs.
    opt = keras.optimizers.Adadelta(lr=1.0 * hvd.size())
    # Horovod: add Horovod Distributed Optimizer.
    opt = hvd.DistributedOptimizer(opt)
    model.compile(loss=keras.losses.categorical_crossentropy, optimizer=opt, metrics=["accuracy"])

callbacks = [
    # Horovod: broadcast initial variable states from rank 0 to all other processes.
    hvd.callbacks.BroadcastGlobalVariablesCallback(0),
    # Horovod: average metrics among workers at the end of every epoch.
    hvd.callbacks.MetricAverageCallback(),
    # Horovod: using `lr = 1.0 * hvd.size()` from the very beginning leads to worse final
    # accuracy. Scale the learning rate `lr = 1.0` ---> `lr = 1.0 * hvd.size()` during
    # the first five epochs.
    hvd.callbacks.LearningRateWarmupCallback(warmup_epochs=5, verbose=1),
    keras.callbacks.ReduceLROnPlateau(patience=10, verbose=1),
]

# Horovod: save checkpoints only on worker 0 to prevent other workers from corrupting them.
if hvd.rank() == 0:
    callbacks.append(keras.callbacks.ModelCheckpoint(args.checkpoint_format))

model.fit(x_train, y_train, batch_size=batch_size, callbacks=callbacks,
          epochs=args.epochs, initial_epoch=resume_from_epoch,
          verbose=1 if hvd.rank() == 0 else 0)
'''
ELASTIC = '''\
"""Elastic Horovod on tf.keras (TF 1.x graph mode): workers may join or leave while it trains.

Run with: horovodrun -np 8 --min-np 4 --host-discovery-script ./discover_hosts.sh python train.py
"""
import tensorflow as tf
import horovod.tensorflow.keras as hvd

from data import mnist_dataset

LEARNING_RATE = 0.001
EPOCHS = 24


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Flatten(input_shape=(28, 28)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10, activation="softmax"),
    ])
    opt = tf.keras.optimizers.Adam(LEARNING_RATE * hvd.size())
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=hvd.DistributedOptimizer(opt), metrics=["accuracy"])
    return model


def restart_horovod():
    """A reset after a host failure: Horovod is torn down and set up again with the workers
    that are left, before the state is synchronised."""
    hvd.shutdown()
    hvd.init()


@hvd.elastic.run
def train(state):
    state.model.fit(mnist_dataset(batch=128, shard=(hvd.size(), hvd.rank())),
                    steps_per_epoch=500 // hvd.size(), epochs=EPOCHS - state.epoch,
                    callbacks=[hvd.elastic.CommitStateCallback(state),
                               hvd.elastic.UpdateEpochStateCallback(state)],
                    verbose=1 if hvd.rank() == 0 else 0)


def main():
    hvd.init()
    state = hvd.elastic.KerasState(build_model(), batch=0, epoch=0)
    state.register_reset_callbacks([restart_horovod])
    train(state)


if __name__ == "__main__":
    main()
'''
RANK_ID = "int(os.getenv('RANK_ID', '0'))"


def after(source: str, *replacements: tuple[str, str]) -> str:
    """``source`` with NPU001's import after its docstring and each (old, new) replaced once."""
    docstring_end = source.index('"""\n', source.index('"""') + 3) + 4
    text = source[:docstring_end] + INIT + source[docstring_end:]
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


MONITORED_AFTER = after(
    MONITORED,
    ('load_data("MNIST-data-%d" % hvd.rank())', 'load_data("MNIST-data-%d" % get_npu_rank_id())'),
    ("lr_scaler = hvd.size()", "lr_scaler = get_npu_rank_size()"),
    ("hvd.local_size() if", "get_npu_local_rank_size() if"),
    ("hvd.BroadcastGlobalVariablesHook(0),", f"NPUBroadcastGlobalVariablesHook(0, {RANK_ID}),"),
    ("20000 // hvd.size()", "20000 // get_npu_rank_size()"),
    ("    config.gpu_options.visible_device_list = str(hvd.local_rank())\n", ""),
    ('"./checkpoints" if hvd.rank() == 0', '"./checkpoints" if get_npu_rank_id() == 0'),
)


def test_an_adasum_optimizer_keeps_the_init_of_a_monitored_training_session_script() -> None:
    """The optimizer reduces with Adasum (no NPU equivalent): it stays, and so does the
    init it needs; the topology, the broadcast hook and the GPU pinning are migrated."""
    facts = repository_facts({"tensorflow_mnist.py": MONITORED})
    findings = assert_migrates(DISTRIBUTED | KERAS, MONITORED, MONITORED_AFTER, facts=facts,
                               removed=[("NPU022", 108, 4, "migrated")], findings=[
                                   ("NPU021", 52, 4, "unmigrated"),  # hvd.init(): kept
                                   ("NPU022", 69, 60, "migrated"),
                                   ("NPU022", 78, 16, "migrated"),
                                   ("NPU022", 82, 20, "migrated"),
                                   ("NPU022", 99, 51, "migrated"),
                                   ("NPU022", 108, 4, "migrated"),  # GPU pinning
                                   ("NPU022", 112, 40, "migrated"),
                                   ("NPU023", 86, 10, "unmigrated"),  # op=hvd.Adasum ...
                                   ("NPU024", 96, 8, "migrated"),
                                   ("NPU025", 82, 40, "unmigrated"),  # hvd.nccl_built()
                                   ("NPU025", 86, 43, "unmigrated"),  # hvd.Adasum
                                   ("NPU025", 86, 78, "unmigrated"),  # hvd.Average
                               ])
    assert message_of(findings, "NPU021", 52).startswith(
        "kept: hvd.DistributedOptimizer(...) (line 86) still need Horovod initialised; migrate "
        "or remove them first (guide: Migrating Horovod scripts, ")
    assert "import horovod.tensorflow as hvd\n" in MONITORED_AFTER


KERAS_ADVANCED_AFTER = after(
    KERAS_ADVANCED,
    ("config.gpu_options.visible_device_list = str(hvd.local_rank())\n", ""),
    ("resume_from_epoch > 0 and hvd.rank() == 0", "resume_from_epoch > 0 and get_npu_rank_id() == 0"),
    ("Adadelta(lr=1.0 * hvd.size())", "Adadelta(lr=1.0 * get_npu_rank_size())"),
    ("opt = hvd.DistributedOptimizer(opt)", "opt = npu_distributed_optimizer_wrapper(opt)"),
    ("hvd.callbacks.BroadcastGlobalVariablesCallback(0),", "NPUBroadcastGlobalVariablesCallback(root_rank=0),"),
    ("if hvd.rank() == 0:\n    callbacks", "if get_npu_rank_id() == 0:\n    callbacks"),
    ("verbose=1 if hvd.rank() == 0 else 0)", "verbose=1 if get_npu_rank_id() == 0 else 0)"),
)


def test_a_keras_script_with_horovod_callbacks_keeps_the_init_they_need() -> None:
    """``horovod.keras`` is Horovod like ``horovod.tensorflow``: its topology, optimizer and
    broadcast callback are migrated; the metric average and warmup callbacks, the broadcast
    of the resume epoch and ``hvd.load_model`` are reported and keep ``hvd.init()``."""
    facts = repository_facts({"keras_mnist_advanced.py": KERAS_ADVANCED})
    findings = assert_migrates(DISTRIBUTED | KERAS, KERAS_ADVANCED, KERAS_ADVANCED_AFTER, facts=facts,
                               removed=[("NPU022", 26, 0, "migrated")], findings=[
                                   ("NPU021", 21, 0, "unmigrated"),
                                   ("NPU022", 26, 0, "migrated"),
                                   ("NPU022", 61, 29, "migrated"),
                                   ("NPU022", 66, 45, "migrated"),
                                   ("NPU022", 84, 3, "migrated"),
                                   ("NPU022", 89, 23, "migrated"),
                                   ("NPU023", 68, 10, "migrated"),
                                   ("NPU024", 73, 4, "migrated"),
                                   ("NPU025", 41, 20, "unmigrated"),  # hvd.broadcast
                                   ("NPU025", 62, 12, "unmigrated"),  # hvd.load_model
                                   ("NPU025", 75, 4, "unmigrated"),  # MetricAverageCallback
                                   ("NPU025", 79, 4, "unmigrated"),  # LearningRateWarmupCallback
                                   ("NPU027", 87, 0, "unmigrated"),  # a standalone Keras model
                               ])
    assert message_of(findings, "NPU021", 21).startswith(
        "kept: hvd.broadcast(...) (line 41), hvd.load_model(...) (line 62), "
        "hvd.callbacks.MetricAverageCallback() (line 75), "
        "hvd.callbacks.LearningRateWarmupCallback(...) (line 79) still need Horovod initialised")
    assert "(hvd.load_model is not in Ascend's API list)" in message_of(findings, "NPU025", 62)


ELASTIC_AFTER = after(
    ELASTIC,
    ("Adam(LEARNING_RATE * hvd.size())", "Adam(LEARNING_RATE * get_npu_rank_size())"),
    ("optimizer=hvd.DistributedOptimizer(opt)", "optimizer=npu_distributed_optimizer_wrapper(opt)"),
    ("shard=(hvd.size(), hvd.rank())", "shard=(get_npu_rank_size(), get_npu_rank_id())"),
    ("500 // hvd.size()", "500 // get_npu_rank_size()"),
    ("verbose=1 if hvd.rank() == 0", "verbose=1 if get_npu_rank_id() == 0"),
)


def test_an_elastic_script_keeps_both_inits() -> None:
    """The reset's ``shutdown(); init()`` restarts Horovod: that init is never removed. The
    first one stays for the elastic state, callbacks and decorator, each named."""
    facts = repository_facts({"train.py": ELASTIC})
    findings = assert_migrates(DISTRIBUTED | KERAS, ELASTIC, ELASTIC_AFTER, facts=facts, findings=[
        ("NPU021", 30, 4, "unmigrated"),  # after hvd.shutdown()
        ("NPU021", 43, 4, "unmigrated"),  # main's
        ("NPU022", 20, 51, "migrated"), ("NPU022", 35, 52, "migrated"),
        ("NPU022", 35, 64, "migrated"), ("NPU022", 36, 43, "migrated"),
        ("NPU022", 39, 33, "migrated"),
        ("NPU023", 22, 28, "migrated"),
        ("NPU025", 29, 4, "unmigrated"),  # hvd.shutdown()
        ("NPU025", 33, 1, "unmigrated"),  # @hvd.elastic.run
        ("NPU025", 37, 31, "unmigrated"), ("NPU025", 38, 31, "unmigrated"),
        ("NPU025", 44, 12, "unmigrated"),  # hvd.elastic.KerasState
        ("NPU027", 35, 4, "unmigrated"),  # state.model: not shown to be a Keras model
    ])
    assert message_of(findings, "NPU021", 30).startswith(
        "kept: hvd.init() follows hvd.shutdown() (a reset that restarts Horovod): remove both "
        "once nothing uses Horovod")
    assert message_of(findings, "NPU021", 43).startswith(
        "kept: hvd.elastic.run (line 33), hvd.elastic.CommitStateCallback(...) (line 37), "
        "hvd.elastic.UpdateEpochStateCallback(...) (line 38), hvd.elastic.KerasState(...) (line "
        "44) still need Horovod initialised")
    # a decorator's message names its API
    assert message_of(findings, "NPU025", 33).startswith(
        "hvd.elastic.run has no NPU form (Ascend's API list has hvd.elastic.run under analysis)")


COMMON = '''\
"""Flags and the Horovod set-up that train.py and evaluate.py share."""
import tensorflow as tf
import horovod.tensorflow as hvd

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/data/imagenet", "where the TFRecords are")
flags.DEFINE_integer("batch_size", 256, "images per worker and step")
FLAGS = flags.FLAGS

# Horovod: initialize Horovod when the module is imported, before any graph is built.
hvd.init()


def shard_files(files):
    """This worker's part of the files."""
    return files[hvd.rank()::hvd.size()]
'''
EVALUATE = '''\
"""Evaluate the last checkpoint on every worker and average the accuracy."""
import tensorflow as tf
import horovod.tensorflow as hvd

from common import FLAGS, shard_files
from model import inference


def evaluate(checkpoint):
    files = shard_files(tf.gfile.Glob(FLAGS.data_dir + "/validation-*"))
    images, labels = tf.data.TFRecordDataset(files).batch(FLAGS.batch_size).make_one_shot_iterator().get_next()
    correct = tf.reduce_mean(tf.cast(tf.nn.in_top_k(inference(images), labels, 1), tf.float32))
    # Horovod: average the accuracy over the workers.
    accuracy = hvd.allreduce(correct)
    with tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(
            checkpoint_filename_with_path=checkpoint)) as session:
        return session.run(accuracy)
'''
COMMON_AFTER = after(COMMON, ("    return files[hvd.rank()::hvd.size()]",
                              "    return files[get_npu_rank_id()::get_npu_rank_size()]"))


def test_an_init_stays_while_a_module_that_imports_from_its_file_still_uses_horovod() -> None:
    facts = repository_facts({"common.py": COMMON, "evaluate.py": EVALUATE})
    findings = assert_migrates(DISTRIBUTED, COMMON, COMMON_AFTER, path="common.py", facts=facts,
                               findings=[("NPU021", 11, 0, "unmigrated"),
                                         ("NPU022", 16, 17, "migrated"), ("NPU022", 16, 29, "migrated")])
    assert message_of(findings, "NPU021", 11).startswith(
        "kept: hvd.allreduce in evaluate (it imports from this file) still need Horovod initialised")
    # once evaluate.py needs nothing of Horovod, the init and the import go
    ranked = EVALUATE.replace("accuracy = hvd.allreduce(correct)", "accuracy = correct / hvd.size()")
    facts = repository_facts({"common.py": COMMON, "evaluate.py": ranked})
    removed = COMMON_AFTER.replace("# Horovod: initialize Horovod when the module is imported, before "
                                   "any graph is built.\nhvd.init()\n", "# Horovod: initialize "
                                   "Horovod when the module is imported, before any graph is built.\n")
    removed = removed.replace("import horovod.tensorflow as hvd\n", "")
    assert_migrates(DISTRIBUTED, COMMON, removed, path="common.py", facts=facts,
                    removed=[("NPU021", 11, 0, "migrated"), ("NPU025", 3, 0, "migrated")])


RANKS = '''\
"""Rank helpers shared by the training scripts (no TensorFlow here: npu-codemod leaves it)."""
import horovod.tensorflow as hvd


def is_chief():
    return hvd.rank() == 0
'''
CHIEF_ONLY = COMMON.replace('''

def shard_files(files):''', '''
from ranks import is_chief


def shard_files(files):''').replace("return files[hvd.rank()::hvd.size()]", "return files if is_chief() else []")


def test_an_init_stays_while_a_module_its_file_imports_from_still_uses_horovod() -> None:
    """``ranks.py`` imports no TensorFlow, so its ``hvd.rank()`` stays: the init it relies on
    too."""
    facts = repository_facts({"common.py": CHIEF_ONLY, "ranks.py": RANKS})
    findings = assert_reports(DISTRIBUTED, CHIEF_ONLY, path="common.py", facts=facts,
                              findings=[("NPU021", 11, 0, "unmigrated")])
    assert message_of(findings, "NPU021", 11).startswith(
        "kept: hvd.rank in ranks (this file imports from it) still need Horovod initialised")


PACKAGE_INIT = '''\
"""Distributed training helpers: the one place the training scripts take Horovod from."""
import tensorflow as tf
from horovod.tensorflow import init, rank, size, local_rank, allreduce, broadcast_global_variables

from dist.topology import is_chief

DEFAULT_ROOT = 0
'''
TOPOLOGY = '''\
"""Which worker this is."""
import tensorflow as tf
from horovod.tensorflow import local_rank, rank

__all__ = ["is_chief", "local_rank"]


def is_chief():
    return rank() == 0
'''
REDUCE = '''\
"""Averaging over the workers."""
import tensorflow as tf
import horovod.tensorflow as hvd
from horovod.tensorflow import allgather


def average(tensor):
    return hvd.allreduce(tensor)
'''
TRAIN = '''\
"""Train on every worker; only the chief writes summaries."""
import tensorflow as tf

from dist import init
from dist.reduce import allgather, average
from dist.topology import is_chief


def main(_):
    init()
    loss = average(tf.constant(1.0))
    if is_chief():
        tf.summary.scalar("loss", loss)


if __name__ == "__main__":
    tf.app.run()
'''
PACKAGE = {"dist/__init__.py": PACKAGE_INIT, "dist/topology.py": TOPOLOGY, "dist/reduce.py": REDUCE,
           "train.py": TRAIN}


def test_the_imports_of_a_package_are_its_api_and_stay() -> None:
    """NPU025 removes no import another module may take a Horovod name from: not from an
    ``__init__.py``, not one ``__all__`` lists, not one another module imports."""
    facts = repository_facts(PACKAGE)
    findings = assert_reports(DISTRIBUTED, PACKAGE_INIT, path="dist/__init__.py", facts=facts,
                              findings=[("NPU025", 3, 0, "unmigrated")])
    assert message_of(findings, "NPU025", 3).startswith(
        "nothing here uses init, rank, size, local_rank, allreduce, broadcast_global_variables any "
        "more, but this is a package's __init__.py, whose imports are its API: it stays")
    topology = after(TOPOLOGY, ("return rank() == 0", "return get_npu_rank_id() == 0"))
    findings = assert_migrates(DISTRIBUTED, TOPOLOGY, topology, path="dist/topology.py",
                               facts=facts, findings=[("NPU022", 9, 11, "migrated"),
                                                      ("NPU025", 3, 0, "unmigrated")])
    assert "but the module's __all__ exports them: it stays" in message_of(findings, "NPU025", 3)
    findings = assert_reports(DISTRIBUTED, REDUCE, path="dist/reduce.py", facts=facts, findings=[
        ("NPU025", 4, 0, "unmigrated"), ("NPU025", 8, 11, "unmigrated")])
    assert "but another module of the repository imports allgather from this one: it stays" in \
        message_of(findings, "NPU025", 4)
    # the same module nobody imports from loses its unused import
    alone = {path: text for path, text in PACKAGE.items() if path != "train.py"}
    assert_migrates(DISTRIBUTED, REDUCE, REDUCE.replace("from horovod.tensorflow import allgather\n", ""),
                    path="dist/reduce.py", facts=repository_facts(alone),
                    removed=[("NPU025", 4, 0, "migrated")])


MPI_OPS = '''\
"""Horovod's TensorFlow ops, loaded from the compiled library (a vendored fork of Horovod)."""
import tensorflow as tf
from tensorflow.python.framework import load_library

from horovod.common.basics import HorovodBasics as _HorovodBasics

MPI_LIB = load_library.load_op_library("mpi_lib.so")
_basics = _HorovodBasics(__file__, "mpi_lib")

# import basic methods
init = _basics.init
shutdown = _basics.shutdown
is_initialized = _basics.is_initialized
size = _basics.size
local_size = _basics.local_size
rank = _basics.rank
local_rank = _basics.local_rank


def _allreduce(tensor, name=None, op=0):
    return MPI_LIB.horovod_allreduce(tensor, name=name, reduce_op=op)


def broadcast(tensor, root_rank, name=None):
    return MPI_LIB.horovod_broadcast(tensor, name=name, root_rank=root_rank)
'''
HOROVOD_INIT = '''\
"""Horovod for TensorFlow: the collectives, the broadcast hook and the distributed optimizer."""
import tensorflow as tf

from horovod.tensorflow.mpi_ops import init, shutdown, is_initialized
from horovod.tensorflow.mpi_ops import size, local_size, rank, local_rank
from horovod.tensorflow.mpi_ops import _allreduce, broadcast
from horovod.tensorflow.functions import broadcast_object

Adasum = 2


def allreduce(tensor, op=0, name=None):
    """Average ``tensor`` over the workers (Adasum needs a power-of-two size)."""
    if op == Adasum and size() & (size() - 1):
        raise NotImplementedError("Adasum needs a number of workers that is a power of two")
    summed = _allreduce(tensor, name=name, op=op)
    return summed / size() if op == 0 else summed


def broadcast_global_variables(root_rank):
    return tf.group(*[tf.assign(var, broadcast(var, root_rank)) for var in tf.global_variables()])


class BroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    def __init__(self, root_rank, device=""):
        super(BroadcastGlobalVariablesHook, self).__init__()
        self.root_rank = root_rank
        self.bcast_op = None

    def begin(self):
        if not self.bcast_op:
            self.bcast_op = broadcast_global_variables(self.root_rank)
'''
FUNCTIONS = '''\
"""Broadcast of any picklable object, through a byte tensor."""
import io
import pickle

import tensorflow as tf

from horovod.tensorflow.mpi_ops import broadcast, rank


def broadcast_object(obj, root_rank=0, name=None):
    if rank() == root_rank:
        buffer = io.BytesIO()
        pickle.dump(obj, buffer)
        payload = tf.convert_to_tensor(bytearray(buffer.getvalue()), dtype=tf.uint8)
    else:
        payload = tf.zeros([0], dtype=tf.uint8)
    return pickle.loads(bytes(broadcast(payload, root_rank, name).numpy()))
'''
HOROVOD = {"horovod/tensorflow/mpi_ops.py": MPI_OPS, "horovod/tensorflow/__init__.py": HOROVOD_INIT,
           "horovod/tensorflow/functions.py": FUNCTIONS, "examples/tensorflow_mnist.py": MONITORED}
LIBRARY = "library code: the distributed pack migrates scripts that use Horovod, not Horovod"


def test_horovod_itself_is_library_code_reported_once_per_file() -> None:
    facts = repository_facts(HOROVOD)
    assert "distributed:horovod-library" in facts
    reported = {}
    for path, source in HOROVOD.items():
        findings = assert_reports(DISTRIBUTED | {"NPU100"}, source, path=path, facts=facts)
        reported[path] = [(f.rule_id, f.line, f.message.partition(" (guide:")[0]) for f in findings
                          if f.rule_id != "NPU100" or "hvd." in f.message]
    assert reported == {
        "horovod/tensorflow/mpi_ops.py": [],  # binds no module of Horovod for TensorFlow
        "horovod/tensorflow/__init__.py": [("NPU021", 4, LIBRARY)],
        "horovod/tensorflow/functions.py": [("NPU021", 7, LIBRARY)],
        "examples/tensorflow_mnist.py": [("NPU021", 12, LIBRARY)],
    }


def test_with_the_pack_off_every_horovod_use_names_the_opt_in() -> None:
    """Nothing of Horovod is rewritten, and each use has a finding (NPU100's) that says how
    npu-codemod migrates it, also for the APIs Ascend's list does not name."""
    from npu_codemod.plugins.manager import load_plugins

    default = {rule.id for rule in load_plugins().rules() if rule.default_on and rule.pack != "distributed"}
    for name, source in (("monitored", MONITORED), ("keras", KERAS_ADVANCED), ("elastic", ELASTIC)):
        outcome = run_rules(default, source, repository_facts({"train.py": source}))
        new = outcome.new if outcome.new is not None else source
        assert [line for line in new.splitlines() if "hvd." in line] == \
            [line for line in source.splitlines() if "hvd." in line], name
        uses = {number for number, line in enumerate(source.splitlines(), 1)
                if "hvd." in line.split("#")[0] and "import" not in line}
        opt_in = {f.line for f in outcome.findings if OPT_IN in f.message}
        assert uses <= opt_in, (name, sorted(uses - opt_in))
    outcome = run_rules(default, ELASTIC)
    (load,) = [f.message for f in outcome.findings if f.line == 44]
    assert load.startswith("Horovod API, not in Ascend's list: hvd.elastic.KerasState has no known "
                           f"NPU form: remove it, or use the NPU's collective communication; {OPT_IN}")


BRANCH = "npu-codemod/sess-run-to-npu"
SCRIPTS = {"examples/tensorflow_mnist.py": MONITORED, "examples/keras_mnist_advanced.py": KERAS_ADVANCED,
           "examples/elastic_keras.py": ELASTIC, "common.py": COMMON, "evaluate.py": EVALUATE, **PACKAGE}


def run_on(tmp_path: Path, name: str, rules: str) -> tuple[Path, list[dict[str, str]]]:
    """``npu-codemod run --rules <rules>`` on a repository of :data:`SCRIPTS`."""
    repo = make_repo(tmp_path / name, SCRIPTS)
    (tmp_path / f"{name}.txt").write_text(f"{name}\n")
    cli("run", "--repos", f"{name}.txt", "--rules", rules, "--report-dir", f"{name}-report",
        cwd=tmp_path, expect=0)
    with (tmp_path / f"{name}-report" / "findings.csv").open(encoding="utf-8", newline="") as stream:
        return repo, list(csv.DictReader(stream))


def test_a_repository_of_horovod_scripts_with_and_without_the_pack(tmp_path: Path) -> None:
    """The issue's acceptance, through the command line: with the pack, every file that still
    calls Horovod keeps ``hvd.init()`` with a finding, no package import goes, every output
    compiles; without it, nothing of Horovod changes and each Horovod line names the opt-in."""
    repo, rows = run_on(tmp_path, "pack", "default,distributed")
    kept = {(row["path"], int(row["line"])) for row in rows
            if row["rule_id"] == "NPU021" and row["status"] == "unmigrated"}
    assert kept == {("examples/tensorflow_mnist.py", 52), ("examples/keras_mnist_advanced.py", 21),
                    ("examples/elastic_keras.py", 30), ("examples/elastic_keras.py", 43),
                    ("common.py", 11)}
    for path in SCRIPTS:
        migrated = show(repo, BRANCH, path).decode()
        compile(migrated, path, "exec")
        inits = [number for number, line in enumerate(migrated.splitlines(), 1)
                 if line.strip() == "hvd.init()"]
        assert len(inits) == len([key for key in kept if key[0] == path]), path
    assert show(repo, BRANCH, "dist/__init__.py").decode() == PACKAGE_INIT
    assert "from horovod.tensorflow import allgather" in show(repo, BRANCH, "dist/reduce.py").decode()

    repo, rows = run_on(tmp_path, "off", "default")
    opt_in = {(row["path"], int(row["line"])) for row in rows if OPT_IN in row["message"]}
    for path, source in SCRIPTS.items():
        migrated = show(repo, BRANCH, path).decode()
        lines = [line for line in source.splitlines() if "hvd." in line]
        assert lines == [line for line in migrated.splitlines() if "hvd." in line], path
        uses = {(path, number) for number, line in enumerate(source.splitlines(), 1)
                if "hvd." in line.split("#")[0] and "import" not in line}
        assert uses <= opt_in, sorted(uses - opt_in)


def test_a_use_the_pack_migrates_keeps_the_init_while_its_rule_is_off() -> None:
    """evaluate.py's ``hvd.size()`` goes with NPU022; without NPU022 it stays, and so does the
    init of common.py that it relies on."""
    ranked = EVALUATE.replace("accuracy = hvd.allreduce(correct)", "accuracy = correct / hvd.size()")
    facts = repository_facts({"common.py": COMMON, "evaluate.py": ranked})
    findings = assert_reports({"NPU021", "NPU025"}, COMMON, path="common.py", facts=facts,
                              findings=[("NPU021", 11, 0, "unmigrated")])
    assert message_of(findings, "NPU021", 11).startswith(
        "kept: hvd.rank() (line 16), hvd.size() (line 16), hvd.size in evaluate (it imports from "
        "this file) still need Horovod initialised")
