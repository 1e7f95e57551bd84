"""NPU069 reports the batch of training datasets only (spec rules-tf2.md, NPU069: "the
`.batch(...)` of each training dataset ... reaching `fit` or a training loop").

TensorLayer's dataset tutorial builds a pipeline and looks at one batch (``next(iter(ds))``);
nothing in it trains. It was told to "shard per NPU worker before batching": a site left, and
the repository ``needs-work``, for a script no worker trains with.
"""

from __future__ import annotations

from npu_codemod import testing

TF2_RUNTIME = {"tf-runtime:2"}
LOOK = '''\
import numpy as np
import tensorflow as tf

x = np.zeros((64, 4), np.float32)
ds = tf.data.Dataset.from_tensor_slices(x)
ds = ds.repeat(2)
ds = ds.batch(8)
first = next(iter(ds))
print(first.numpy().mean())
'''
TRAINED = LOOK.replace("first = next(iter(ds))\nprint(first.numpy().mean())\n", '''\
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.1)
for batch in ds:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(batch))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
''')
SHARD = "shard per NPU worker before batching: ds, batch_size = npu.distribute.shard_and_rebatch_dataset(ds, 8)"


def _shard_sites(source: str) -> list[tuple[int, int, str]]:
    findings = testing.assert_reports({"NPU069"}, source, facts=TF2_RUNTIME)
    return [(f.line, f.column, f.message.split(" (guide")[0]) for f in findings if f.rule_id == "NPU069"]


def test_a_dataset_only_looked_at_in_a_file_that_trains_nothing_is_no_site() -> None:
    assert _shard_sites(LOOK) == []  # before: (7, 8, SHARD)


def test_a_loop_over_it_that_trains_is_a_training_loop() -> None:
    assert _shard_sites(TRAINED) == [(7, 8, SHARD)]


def test_a_loop_calling_a_train_step_is_a_training_loop() -> None:
    source = LOOK.replace("first = next(iter(ds))\nprint(first.numpy().mean())\n",
                          "from trainer import train_step\n\nfor batch in ds:\n    train_step(batch)\n")
    assert _shard_sites(source) == [(7, 8, SHARD)]


def test_a_dataset_passed_to_another_call_may_be_trained_there() -> None:
    source = LOOK.replace("first = next(iter(ds))\nprint(first.numpy().mean())\n",
                          "from runner import run\n\nrun(ds)\n")
    assert _shard_sites(source) == [(7, 8, SHARD)]
