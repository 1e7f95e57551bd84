"""Seeded benchmark corpora: realistic TF 1.x training scripts among ordinary Python modules.

Every corpus is a real git repository written with ``git fast-import`` (fixed dates, so the
same seed gives the same commit shas). Nothing is checked out: npu-codemod reads git objects.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

from real_code import real_code_files

#: Bump when the generated text changes, so cached corpora are rebuilt.
GENERATOR_VERSION = 4


@dataclass(frozen=True)
class Sizes:
    """How big each corpus is; ``--quick`` and ``--tiny`` shrink them."""

    monorepo_files: int = 20_000
    monorepo_tf_share: float = 0.05
    small_repos: int = 200
    small_repo_files: int = 12
    tf_scripts: int = 500
    #: The real-code-shaped corpus (``real_code.py``): long files with few sites.
    real_code_files: int = 400
    real_code_max_lines: int = 4_000


SIZES = {
    "full": Sizes(),
    "quick": Sizes(monorepo_files=2_000, small_repos=40, tf_scripts=80, real_code_files=80),
    "tiny": Sizes(monorepo_files=40, small_repos=3, small_repo_files=4, tf_scripts=4,
                  real_code_files=4, real_code_max_lines=400),
}


@dataclass(frozen=True)
class Corpora:
    monorepo: Path
    small_repos: list[Path]
    tf_scripts: Path  # a repository holding only TF scripts
    real_code: Path  # a repository shaped like real ones: long files, few sites


def build_corpora(root: Path, sizes: Sizes, seed: int) -> Corpora:
    """The corpora under ``root``, generated unless a build with the same parameters is there."""
    stamp = repr((GENERATOR_VERSION, asdict(sizes), seed))
    stamp_file = root / "stamp"
    names = [f"repo{index:03d}" for index in range(sizes.small_repos)]
    corpora = Corpora(root / "monorepo", [root / "repos" / name for name in names], root / "tf",
                      root / "real")
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        return corpora
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    write_repo(corpora.monorepo, monorepo_files(sizes, random.Random(seed)))
    for index, path in enumerate(corpora.small_repos):
        write_repo(path, small_repo_files(sizes, random.Random(f"{seed}-repo-{index}")))
    rng = random.Random(f"{seed}-tf")
    write_repo(corpora.tf_scripts, ((f"scripts/train_{i:04d}.py", tf_only_script(rng, i))
                                    for i in range(sizes.tf_scripts)))
    write_repo(corpora.real_code, real_code_files(sizes.real_code_files, random.Random(f"{seed}-real"),
                                                  sizes.real_code_max_lines))
    stamp_file.write_text(stamp)
    return corpora


def monorepo_files(sizes: Sizes, rng: random.Random) -> Iterator[tuple[str, str]]:
    tf_every = round(1 / sizes.monorepo_tf_share)
    for index in range(sizes.monorepo_files):
        package = f"pkg{index // 200:03d}/sub{index // 25 % 8}"
        if index % tf_every == tf_every - 1:
            yield f"{package}/train_{index:05d}.py", tf_script(rng, index)
        else:
            yield f"{package}/module_{index:05d}.py", plain_module(rng, index)


def small_repo_files(sizes: Sizes, rng: random.Random) -> Iterator[tuple[str, str]]:
    scripts = rng.randint(1, 2)
    for index in range(sizes.small_repo_files):
        if index < scripts:
            yield f"train_{index}.py", tf_script(rng, index)
        else:
            yield f"lib/module_{index}.py", plain_module(rng, index)


def write_repo(path: Path, files: Iterator[tuple[str, str]]) -> None:
    """A git repository at ``path`` with one commit holding ``files`` (nothing checked out)."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stamp = b"Bench <bench@npu-codemod.invalid> 1700000000 +0000"
    stream = [b"commit refs/heads/main\nauthor %s\ncommitter %s\n" % (stamp, stamp),
              _data(b"benchmark corpus\n")]
    for name, text in files:
        stream += [b"M 100644 inline %s\n" % name.encode(), _data(text.encode())]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=b"".join(stream), check=True)


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


# --- TF 1.x training scripts: every built-in rule finds something in most of them ------------

_IMPORTS = [
    "import tensorflow as tf\n",
    "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n",
    "import tensorflow as tf\nfrom tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n",
]
_ACTIVATIONS = ["tf.nn.relu", "gelu", "tf.nn.tanh", "None"]


def tf_script(rng: random.Random, index: int) -> str:
    model = rng.choice(["bert", "resnet", "wide_deep", "transformer", "lstm", "mlp"])
    parts = [
        f'#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Train a {model} model ({index}).\n\n'
        "Reads TFRecords, builds the graph and trains it with sess.run.\n\"\"\"\n"
        "from __future__ import absolute_import\nfrom __future__ import division\n"
        "from __future__ import print_function\n\nimport math\nimport os\nimport time\n\n"
        f"import numpy as np\n{rng.choice(_IMPORTS)}\n",
        _flags(rng),
        _gelu(rng),
        _input_fn(rng),
        *(_block(rng, k) for k in range(rng.randint(4, 9))),
        _model(rng),
        _train(rng),
        _predict(rng) if rng.random() < 0.5 else "",
        'if __name__ == "__main__":\n    tf.app.run()\n',
    ]
    return "\n\n".join(parts)


def _flags(rng: random.Random) -> str:
    lines = ["flags = tf.app.flags", "FLAGS = flags.FLAGS", ""]
    for name, value in [("batch_size", rng.choice([16, 32, 64, 128])),
                        ("train_steps", rng.randint(1, 9) * 1000), ("hidden", rng.choice([256, 512]))]:
        lines.append(f'flags.DEFINE_integer("{name}", {value}, "The {name.replace("_", " ")}.")')
    lines.append(f'flags.DEFINE_float("learning_rate", {rng.choice([1e-3, 3e-4, 0.01])}, "Adam step size.")')
    lines.append('flags.DEFINE_string("data_dir", "/data/train", "Where the TFRecords are.")')
    return "\n".join(lines) + "\n"


def _gelu(rng: random.Random) -> str:
    cube = rng.choice(["tf.pow(x, 3)", "x * x * x", "x ** 3"])
    root = rng.choice(["np.sqrt(2 / np.pi)", "math.sqrt(2 / math.pi)", "0.7978845608028654"])
    return (f'def gelu(x):\n    """Gaussian Error Linear Unit (tanh approximation)."""\n'
            f"    cdf = 0.5 * (1.0 + tf.tanh({root} * (x + 0.044715 * {cube})))\n"
            "    return x * cdf\n")


def _input_fn(rng: random.Random) -> str:
    batch = rng.choice([
        "    dataset = dataset.batch(batch_size)\n",
        "    dataset = dataset.batch(batch_size, drop_remainder=is_training)\n",
        "    dataset = dataset.padded_batch(batch_size, padded_shapes=([None], []))\n",
        "    dataset = dataset.apply(tf.contrib.data.map_and_batch(_parse, batch_size))\n",
    ])
    return ("def _parse(record):\n"
            '    features = {"x": tf.FixedLenFeature([FLAGS.hidden], tf.float32),\n'
            '                "y": tf.FixedLenFeature([], tf.int64)}\n'
            "    parsed = tf.parse_single_example(record, features)\n"
            '    return parsed["x"], tf.cast(parsed["y"], tf.int32)\n\n\n'
            "def input_fn(filenames, batch_size, is_training=True):\n"
            '    """The training input pipeline."""\n'
            "    dataset = tf.data.TFRecordDataset(filenames)\n"
            "    if is_training:\n"
            f"        dataset = dataset.shuffle(buffer_size={rng.choice([1000, 10000])}).repeat()\n"
            "    dataset = dataset.map(_parse, num_parallel_calls=4)\n"
            f"{batch}"
            "    dataset = dataset.prefetch(1)\n"
            "    return dataset.make_one_shot_iterator().get_next()\n")


def _block(rng: random.Random, k: int) -> str:
    dropout = rng.choice([
        "h = tf.nn.dropout(h, keep_prob)",
        "h = tf.nn.dropout(h, rate=1 - keep_prob)",
        "h = tf.layers.dropout(h, rate=1 - keep_prob, training=training)",
        "h = tf.nn.dropout(h, keep_prob, noise_shape=[FLAGS.batch_size, 1])",
    ])
    layer = rng.choice([
        f"h = tf.layers.dense(inputs, units, activation={rng.choice(_ACTIVATIONS)})",
        "h = tf.layers.conv1d(inputs, units, kernel_size=3, padding=\"same\")",
    ])
    return (f"def block_{k}(inputs, units, keep_prob, training):\n"
            f'    """Residual block {k}: dense, norm, activation, dropout."""\n'
            f'    with tf.variable_scope("block_{k}"):\n'
            f"        {layer}\n"
            "        h = tf.layers.batch_normalization(h, training=training)\n"
            "        # GELU as in BERT\n"
            "        h = gelu(h)\n"
            f"        {dropout}\n"
            "        if inputs.shape[-1] == units:\n"
            "            h = h + inputs\n"
            "        return h\n")


def _model(rng: random.Random) -> str:
    placement = rng.random() < 0.3
    body = ("        h = features\n"
            "        for k, block in enumerate(BLOCKS):\n"
            "            h = block(h, FLAGS.hidden, keep_prob, training)\n"
            "        logits = tf.layers.dense(h, 10)\n")
    if placement:
        body = '    with tf.device("/cpu:0"):\n' + body
    else:
        body = "    if True:\n" + body
    return ("BLOCKS = [v for k, v in sorted(globals().items()) if k.startswith(\"block_\")]\n\n\n"
            "def model(features, labels, training, keep_prob=0.9):\n"
            f"{body}"
            "    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
            "    step = tf.train.get_or_create_global_step()\n"
            "    train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(loss, global_step=step)\n"
            "    return loss, train_op\n")


def _train(rng: random.Random) -> str:
    config = rng.choice([
        "    config = tf.ConfigProto(allow_soft_placement=True)\n"
        "    config.gpu_options.allow_growth = True\n",
        "    config = tf.ConfigProto()\n"
        "    config.graph_options.rewrite_options.arithmetic_optimization = RewriterConfig.OFF\n",
        "    config = None\n",
    ])
    session = rng.choice([
        "    sess = tf.Session(config=config)\n",
        "    sess = tf.Session()\n",
    ])
    close = "    sess.close()\n" if rng.random() < 0.3 else ""
    return ("def main(_):\n"
            '    files = tf.gfile.Glob(os.path.join(FLAGS.data_dir, "*.tfrecord"))\n'
            "    features, labels = input_fn(files, FLAGS.batch_size)\n"
            "    loss, train_op = model(features, labels, training=True)\n"
            "    saver = tf.train.Saver()\n"
            f"{config}{session}"
            "    sess.run(tf.global_variables_initializer())\n"
            "    start = time.time()\n"
            "    for step in range(FLAGS.train_steps):\n"
            "        _, loss_value = sess.run([train_op, loss])\n"
            "        if step % 100 == 0:\n"
            '            print("step %d loss %.4f (%.1fs)" % (step, loss_value, time.time() - start))\n'
            '    saver.save(sess, os.path.join(FLAGS.data_dir, "model.ckpt"))\n'
            f"{close}")


def _predict(rng: random.Random) -> str:
    return ("def predict(sess, outputs, examples, path):\n"
            "    num_actual_predict_examples = len(examples)\n"
            "    num_written_lines = 0\n"
            '    with tf.gfile.GFile(path, "w") as writer:\n'
            "        for prediction in sess.run(outputs):\n"
            '            writer.write("\\t".join(str(p) for p in prediction) + "\\n")\n'
            "            num_written_lines += 1\n"
            "    assert num_written_lines == num_actual_predict_examples\n")


# --- the TF-only corpus: sess.run scripts, Estimator scripts, mixed precision and XLA --------

def tf_only_script(rng: random.Random, index: int) -> str:
    """One script of the TF-only corpus, so every pack has work: of every ten, two Estimator
    scripts (``estimator``), two sess.run scripts with loss scaling, XLA and GPU settings
    (``mixed-precision``, ``xla-gpu``), one Horovod trainer (``distributed``), one Keras
    ``model.fit`` script (``keras``), four plain sess.run scripts."""
    if index % 5 == 1:
        return estimator_script(rng, index)
    if index % 10 == 4:
        return horovod_script(rng, index)
    if index % 10 == 7:
        return keras_script(rng, index)
    script = tf_script(rng, index)
    if index % 5 == 3:
        script = script.replace('if __name__ == "__main__":', _mixed_precision(rng) + '\n\nif __name__ == "__main__":')
    return script


def estimator_script(rng: random.Random, index: int) -> str:
    """A BERT ``run_classifier``-style script: a ``model_fn`` for an (TPU)Estimator."""
    tpu = rng.random() < 0.5
    spec = "tf.contrib.tpu.TPUEstimatorSpec" if tpu else "tf.estimator.EstimatorSpec"
    scaffold = ", scaffold_fn=scaffold_fn" if tpu else ""
    parts = [
        f'"""Fine-tune a classifier with {"TPUEstimator" if tpu else "Estimator"} ({index})."""\n'
        "import os\n\nimport tensorflow as tf\n",
        _flags(rng),
        _gelu(rng),
        _input_fn(rng),
        *(_block(rng, k) for k in range(rng.randint(3, 6))),
        "BLOCKS = [v for k, v in sorted(globals().items()) if k.startswith(\"block_\")]\n\n\n"
        "def model_fn(features, labels, mode, params):\n"
        "    training = mode == tf.estimator.ModeKeys.TRAIN\n"
        "    h = features\n"
        "    for block in BLOCKS:\n"
        "        h = block(h, FLAGS.hidden, 0.9, training)\n"
        "    logits = tf.layers.dense(h, 10)\n"
        "    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
        "    optimizer = tf.train.AdamOptimizer(FLAGS.learning_rate)\n"
        + ("    if params[\"use_tpu\"]:\n        optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)\n"
           "    scaffold_fn = None\n" if tpu else "")
        + "    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())\n"
        f"    return {spec}(mode=mode, loss=loss, train_op=train_op{scaffold})\n",
        _estimator_main(rng, tpu),
        'if __name__ == "__main__":\n    tf.app.run()\n',
    ]
    return "\n\n".join(parts)


def _estimator_main(rng: random.Random, tpu: bool) -> str:
    if tpu:
        config = ("    run_config = tf.contrib.tpu.RunConfig(\n"
                  "        model_dir=FLAGS.data_dir,\n"
                  "        save_checkpoints_steps=1000,\n"
                  "        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=1000, num_shards=8))\n")
        build = ("    estimator = tf.contrib.tpu.TPUEstimator(\n"
                 "        use_tpu=FLAGS.use_tpu,\n        model_fn=model_fn,\n        config=run_config,\n"
                 "        train_batch_size=FLAGS.batch_size,\n        params={\"use_tpu\": FLAGS.use_tpu})\n")
    else:
        steps = rng.choice(["", ", save_summary_steps=100"])
        config = f"    run_config = tf.estimator.RunConfig(model_dir=FLAGS.data_dir{steps})\n"
        build = "    estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config, params={})\n"
    return ("def main(_):\n"
            '    files = tf.gfile.Glob(os.path.join(FLAGS.data_dir, "*.tfrecord"))\n'
            f"{config}{build}"
            "    estimator.train(input_fn=lambda: input_fn(files, FLAGS.batch_size), max_steps=FLAGS.train_steps)\n")


def _mixed_precision(rng: random.Random) -> str:
    scale = rng.choice(['"dynamic"', "tf.train.experimental.DynamicLossScale(initial_loss_scale=2 ** 15)",
                        "tf.train.experimental.FixedLossScale(128)"])
    return ("def mixed_precision_train_op(loss):\n"
            "    optimizer = tf.train.AdamOptimizer(FLAGS.learning_rate)\n"
            f"    optimizer = tf.train.experimental.MixedPrecisionLossScaleOptimizer(optimizer, {scale})\n"
            "    return optimizer.minimize(loss)\n\n\n"
            "def xla_config():\n"
            "    config = tf.ConfigProto()\n"
            "    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1\n"
            "    gpus = tf.config.experimental.list_physical_devices(\"GPU\")\n"
            "    for gpu in gpus:\n"
            "        tf.config.experimental.set_memory_growth(gpu, True)\n"
            "    with tf.xla.experimental.jit_scope():\n"
            "        pass\n"
            "    return config\n")


def horovod_script(rng: random.Random, index: int) -> str:
    """A Horovod MNIST-style trainer (``distributed``): ``hvd.init``, ``hvd.rank()`` in the
    checkpoint path, ``DistributedOptimizer``, ``BroadcastGlobalVariablesHook`` and
    ``dataset.shard(hvd.size(), hvd.rank())``, trained in a ``MonitoredTrainingSession``."""
    checkpoint = rng.choice([
        '    checkpoint_dir = os.path.join(FLAGS.data_dir, "rank_%d" % hvd.rank())\n',
        '    checkpoint_dir = "./checkpoints" if hvd.rank() == 0 else None\n',
    ])
    pinning = ("    config.gpu_options.visible_device_list = str(hvd.local_rank())\n"
               if rng.random() < 0.5 else "")
    parts = [
        f'"""Distributed training of a {rng.choice(["cnn", "mlp", "resnet"])} with Horovod ({index})."""\n'
        "import os\n\nimport horovod.tensorflow as hvd\nimport tensorflow as tf\n",
        _flags(rng),
        _gelu(rng),
        *(_block(rng, k) for k in range(rng.randint(2, 5))),
        _input_fn(rng).split("\n\n\ndef input_fn")[0] + "\n",
        "def shard_input(filenames, batch_size):\n"
        "    dataset = tf.data.TFRecordDataset(filenames)\n"
        "    dataset = dataset.shard(hvd.size(), hvd.rank())\n"
        "    dataset = dataset.map(_parse).shuffle(10000).repeat()\n"
        "    dataset = dataset.batch(batch_size)\n"
        "    return dataset.make_one_shot_iterator().get_next()\n",
        "def main(_):\n"
        "    # Horovod: initialize Horovod.\n"
        "    hvd.init()\n"
        '    files = tf.gfile.Glob(os.path.join(FLAGS.data_dir, "*.tfrecord"))\n'
        "    features, labels = shard_input(files, FLAGS.batch_size)\n"
        "    h = tf.layers.dense(features, FLAGS.hidden, activation=tf.nn.relu)\n"
        "    logits = tf.layers.dense(h, 10)\n"
        "    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
        "    # Horovod: scale the learning rate by the number of workers.\n"
        "    opt = tf.train.AdamOptimizer(FLAGS.learning_rate * hvd.size())\n"
        "    opt = hvd.DistributedOptimizer(opt)\n"
        "    step = tf.train.get_or_create_global_step()\n"
        "    train_op = opt.minimize(loss, global_step=step)\n"
        "    hooks = [hvd.BroadcastGlobalVariablesHook(0),\n"
        "             tf.train.StopAtStepHook(last_step=FLAGS.train_steps // hvd.size())]\n"
        "    config = tf.ConfigProto()\n"
        "    config.gpu_options.allow_growth = True\n"
        f"{pinning}{checkpoint}"
        "    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks,\n"
        "                                           config=config) as mon_sess:\n"
        "        while not mon_sess.should_stop():\n"
        "            mon_sess.run(train_op)\n",
        'if __name__ == "__main__":\n    tf.app.run()\n',
    ]
    return "\n\n".join(parts)


def keras_script(rng: random.Random, index: int) -> str:
    """A Keras-on-TF1 script (``keras``): a model built and ``fit`` in a function that the
    ``__main__`` block calls; sometimes a ``clear_session`` between folds."""
    clear = ("    for fold in range(2):\n"
             "        fold_model = build_model(FLAGS.hidden)\n"
             "        fold_model.fit(x_train, y_train, epochs=1, verbose=0)\n"
             "        K.clear_session()\n") if rng.random() < 0.5 else ""
    return "\n\n".join([
        f'"""Train a Keras classifier in graph mode ({index})."""\n'
        "import numpy as np\nimport tensorflow as tf\nfrom tensorflow.keras import backend as K\n",
        _flags(rng),
        "def build_model(hidden):\n"
        "    model = tf.keras.Sequential([\n"
        "        tf.keras.layers.Flatten(input_shape=(28, 28)),\n"
        f"        tf.keras.layers.Dense(hidden, activation=\"{rng.choice(['relu', 'tanh'])}\"),\n"
        "        tf.keras.layers.Dense(10, activation=\"softmax\"),\n"
        "    ])\n"
        "    model.compile(optimizer=tf.keras.optimizers.Adam(FLAGS.learning_rate),\n"
        '                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])\n'
        "    return model\n",
        "def main():\n"
        "    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()\n"
        "    x_train, x_test = x_train / 255.0, x_test / 255.0\n"
        "    model = build_model(FLAGS.hidden)\n"
        "    model.fit(x_train, y_train, batch_size=FLAGS.batch_size, epochs=5)\n"
        "    print(model.evaluate(x_test, y_test, verbose=0))\n"
        "    print(np.argmax(model.predict(x_test[:8]), axis=-1))\n"
        f"{clear}",
        'if __name__ == "__main__":\n    main()\n',
    ])


# --- ordinary Python: the 95% of a monorepo no rule should ever parse -----------------------

_WORDS = ("account record parser buffer client config event handler item order report "
          "request response schedule session store task token user value window").split()


def plain_module(rng: random.Random, index: int) -> str:
    noun = rng.choice(_WORDS)
    parts = [f'"""Helpers for {noun} handling (module {index})."""\n\nimport collections\n'
             "import json\nimport logging\nfrom typing import Any, Dict, List, Optional\n\n"
             "log = logging.getLogger(__name__)\n"]
    if rng.random() < 0.02:  # mentions TensorFlow without importing it: the prefilter's false positive
        parts.append("# Ported from the tensorflow implementation; no TF dependency here.\n")
    for _ in range(rng.randint(2, 5)):
        parts.append(_plain_class(rng) if rng.random() < 0.5 else _plain_function(rng))
    return "\n\n".join(parts)


def _plain_class(rng: random.Random) -> str:
    name = rng.choice(_WORDS).capitalize() + rng.choice(["Store", "Cache", "Batcher", "Index"])
    size = rng.randint(8, 512)
    return (f"class {name}:\n"
            f'    """Keeps up to {size} entries, oldest first."""\n\n'
            f"    def __init__(self, capacity: int = {size}) -> None:\n"
            "        self.capacity = capacity\n"
            "        self.items: collections.OrderedDict = collections.OrderedDict()\n\n"
            "    def add(self, key: str, value: Any) -> None:\n"
            "        self.items[key] = value\n"
            "        while len(self.items) > self.capacity:\n"
            "            self.items.popitem(last=False)\n\n"
            "    def batch(self, size: int) -> List[Any]:\n"
            "        # Not a tf.data batch: a plain list slice.\n"
            "        return list(self.items.values())[:size]\n\n"
            "    def to_json(self) -> str:\n"
            '        return json.dumps({"capacity": self.capacity, "items": list(self.items)})\n')


def _plain_function(rng: random.Random) -> str:
    verb = rng.choice(["load", "merge", "count", "split", "render", "validate"])
    noun = rng.choice(_WORDS)
    return (f"def {verb}_{noun}s(rows: List[Dict[str, Any]], limit: Optional[int] = None) -> Dict[str, int]:\n"
            f'    """{verb.capitalize()} {noun} rows and count them by kind."""\n'
            "    counts: Dict[str, int] = {}\n"
            "    for number, row in enumerate(rows):\n"
            "        if limit is not None and number >= limit:\n"
            '            log.warning("stopped after %d rows", limit)\n'
            "            break\n"
            f'        kind = str(row.get("kind", "{noun}")).lower()\n'
            "        counts[kind] = counts.get(kind, 0) + 1\n"
            "    return {key: counts[key] for key in sorted(counts)}\n")
