"""verify's emulation of TF Adapter 2.x (``orchestrator/verify/runtime/npu_device``): what the
``tf2`` packs write runs on CPU TensorFlow, as on one NPU worker."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import npu_codemod.orchestrator.verify as verify_package

RUNTIME = Path(verify_package.__file__).parent / "runtime"

MIGRATED = '''\
"""A TF 2.x regression after npu-codemod (tf2 and tf2-distributed packs)."""
import npu_device as npu
npu.open().as_default()
import numpy as np
import tensorflow as tf

tf.random.set_seed(3)
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
optimizer = npu.train.optimizer.NpuLossScaleOptimizer(tf.keras.optimizers.SGD(0.05))
x = np.random.RandomState(0).rand(64, 4).astype("float32")
y = x.sum(axis=1, keepdims=True)
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
dataset, batch_size = npu.distribute.shard_and_rebatch_dataset(dataset, 16)


@tf.function
def step(features, labels):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(features) - labels))
        scaled = optimizer.get_scaled_loss(loss)
    grads = optimizer.get_unscaled_gradients(tape.gradient(scaled, model.trainable_variables))
    grads = npu.distribute.all_reduce(grads, "mean")
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


npu.distribute.broadcast(model.trainable_variables)
losses = [float(step(features, labels)) for _ in range(5) for features, labels in dataset]
model.compile(optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("sgd"), loss="mse")
model.fit(dataset, epochs=1, verbose=0)
assert npu.open() is npu.open(0), "open on the same device returns the same instance"
print(batch_size, len(losses), losses[-1] < losses[0])
'''


def test_a_migrated_tf2_script_runs_on_the_emulation(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(MIGRATED, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(RUNTIME), "TF_USE_LEGACY_KERAS": "1",
           "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "16 20 True"
