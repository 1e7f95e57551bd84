"""``npu-codemod verify`` on the other shapes of TF 1.x training code: a quiet loop in a
``MonitoredTrainingSession`` that fetches no loss, a Keras ``fit`` script, and a plain
``for step in range(...)`` feed_dict loop (it goes on past the step limit without training,
so its evaluation and close run), each migrated correctly and with planted bugs (the
variables after the last step and Keras' history carry the evidence); and scripts that use ``tf.contrib`` (slim, layers, rnn), an Estimator and a
TPUEstimator, which reach a verdict.

One ``verify`` per module (module fixture): TensorFlow's import is the cost of each run.
"""

from __future__ import annotations

import pytest

from support.verify_repos import migrated_by_the_tool, planted, repo_with_branch, verify_all, verify_table

QUIET = '''\
"""The same model trained quietly in a MonitoredTrainingSession: no loss is fetched."""
import numpy as np
import tensorflow as tf


def gelu(x):
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


rng = np.random.RandomState(0)
features = rng.rand(64, 8).astype("float32")
labels = rng.rand(64, 1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(16, drop_remainder=True)
x, y = dataset.make_one_shot_iterator().get_next()
hidden = tf.nn.dropout(gelu(tf.layers.dense(x, 16)), rate=0.25)
loss = tf.losses.mean_squared_error(y, tf.layers.dense(hidden, 1))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)

hooks = [tf.train.StopAtStepHook(last_step=1000)]
with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
    while not sess.should_stop():
        sess.run(train_op)
'''
FIT = '''\
"""The same model in Keras: fit, then evaluate on a held-out set."""
import numpy as np
import tensorflow as tf


def gelu(x):
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation=gelu, input_shape=(8,)),
        tf.keras.layers.Dropout(0.25),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    return model


def main():
    rng = np.random.RandomState(0)
    features = rng.rand(64, 8).astype("float32")
    labels = rng.rand(64, 1).astype("float32")
    model = build_model()
    model.fit(features, labels, batch_size=16, epochs=20, verbose=0, shuffle=False)
    print("eval loss", model.evaluate(rng.rand(32, 8), rng.rand(32, 1), verbose=0))


if __name__ == "__main__":
    main()
'''
LOOP = '''\
"""A linear model trained in a plain feed_dict loop that fetches nothing, then evaluated."""
import numpy as np
import tensorflow as tf

STEPS = 1000

rng = np.random.RandomState(0)
features, labels = rng.rand(64, 8).astype("float32"), rng.rand(64, 1).astype("float32")
x = tf.placeholder(tf.float32, [None, 8])
y = tf.placeholder(tf.float32, [None, 1])
hidden = tf.nn.dropout(tf.layers.dense(x, 16, activation=tf.nn.relu), rate=0.25)
loss = tf.reduce_mean(tf.square(tf.layers.dense(hidden, 1) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

sess = tf.Session()
sess.run(tf.global_variables_initializer())
for step in range(STEPS):
    batch = slice(step % 4 * 16, step % 4 * 16 + 16)
    sess.run(train_op, feed_dict={x: features[batch], y: labels[batch]})
print("eval loss", sess.run(loss, feed_dict={x: features, y: labels}))
sess.close()
'''
#: (script, the edit of the tool's migration that plants a bug) of each repository.
PLANTED = {
    "quiet-correct": ("quiet.py", None),
    "quiet-rate-as-keep-prob": ("quiet.py", ("keep_prob=1 - 0.25)", "0.25)")),
    "quiet-wrong-gelu": ("quiet.py", ("return npu_unary_ops.gelu(x)", "return x * tf.sigmoid(1.702 * x)")),
    "quiet-learning-rate-x10": ("quiet.py", ("AdamOptimizer(0.01)", "AdamOptimizer(0.1)")),
    "fit-correct": ("fit.py", None),
    "fit-rate-as-keep-prob": ("fit.py", ("Dropout(0.25)", "Dropout(0.75)")),
    "fit-wrong-gelu": ("fit.py", ("return npu_unary_ops.gelu(x)", "return x * tf.sigmoid(1.702 * x)")),
    "fit-learning-rate-x10": ("fit.py", ("SGD(0.1)", "SGD(1.0)")),
    "loop-correct": ("loop.py", None),
    "loop-closed-before-evaluation": ("loop.py", ('print("eval loss"', 'sess.close()\nprint("eval loss"')),
}
SCRIPTS = {"quiet.py": QUIET, "fit.py": FIT, "loop.py": LOOP}
#: The repositories are TF 1.x code: a Keras ``fit`` script with no session is TF 2.x code
#: unless the repository says otherwise (``rules-tf2.md``), and these pin TensorFlow 1.15.
PINS = {"requirements.txt": "numpy\ntensorflow==1.15.5\n"}


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("verify-styles")
    migrated = {path: migrated_by_the_tool(root / f"migrate-{path[:-3]}", {path: text, **PINS}, path)
                for path, text in SCRIPTS.items()}
    for name, (path, edit) in PLANTED.items():
        files = {path: SCRIPTS[path], "pyproject.toml": verify_table(f"python {path}"), **PINS}
        repo_with_branch(root / name, files, {path: planted(migrated[path], edit)})
    done, records = verify_all(root, list(PLANTED))
    return {"done": done, "verify": records}


@pytest.mark.parametrize("style", ["quiet", "fit"])
def test_the_correct_migration_is_equivalent_on_evidence(verified, style: str) -> None:
    record = verified["verify"][f"{style}-correct"]
    assert record["verdict"] == "equivalent", record["reason"]
    assert record["steps_compared"] == 10
    assert record["violations"] == []
    if style == "quiet":  # sess.run(train_op): nothing fetched; the variables are the witness
        assert record["evidence"] == ("10 training step(s) (0 fetched value(s) each), 4 variable(s) "
                                      "at the end (161 parameters)")
    else:  # the batches' logs, 3 epochs' history, evaluate(), the weights, the printed loss
        assert record["evidence"] == ("10 training step(s) (3 fetched value(s) each), 4 other "
                                      "result(s), 4 variable(s) at the end (161 parameters), 1 "
                                      "printed metric(s)")


def test_a_plain_loop_runs_to_its_end_without_training_past_the_limit(verified) -> None:
    record = verified["verify"]["loop-correct"]
    assert record["verdict"] == "equivalent", record["reason"]
    assert record["reason"].endswith("; the training loop went on past the step limit without "
                                     "training (990 step(s) answered with their last result), then "
                                     "the rest of the script ran")
    assert record["evidence"].endswith("4 variable(s) at the end (161 parameters), 1 printed metric(s)")
    closed = verified["verify"]["loop-closed-before-evaluation"]
    assert closed["verdict"] == "migrated-fails"
    assert closed["reason"] == ("the migrated run fails where the original does not: RuntimeError: "
                                "Attempted to use a closed Session. (exit code 1)")


@pytest.mark.parametrize("name", [name for name in PLANTED
                                  if not name.endswith("-correct") and not name.startswith("loop-")])
def test_a_planted_bug_diverges(verified, name: str) -> None:
    record = verified["verify"][name]
    assert record["verdict"] == "diverged"
    if name.startswith("quiet-"):
        assert record["reason"].startswith("the variables after the last training step: ")
    elif name == "fit-learning-rate-x10":  # the first step's loss is computed before the update
        assert record["reason"].startswith("step 2 (result (Keras fit) 2): loss = ")
    else:
        assert record["reason"].startswith("step 1 (result (Keras fit) 1): loss = ")
    assert record["reason"].endswith("> rtol 1e-05)")


def test_every_planted_bug_fails_the_exit_code(verified) -> None:
    assert verified["done"].returncode == 1
    assert "verify: 6 diverged, 3 equivalent, 1 migrated-fails" in verified["done"].stderr
