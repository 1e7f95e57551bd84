"""NPU063 tf2-function: training steps not traced with tf.function are reported, never
decorated (``spec/rules-tf2.md``)."""

from __future__ import annotations

from support.rules import assert_unchanged, sites
from support.tf2_scripts import CUSTOM_LOOP, KERAS_FIT, MIXED_PRECISION_LOOP

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU063"}

GAN = '''\
"""DCGAN on MNIST (TF 2.x custom loop), eager steps and one traced one."""
import tensorflow as tf
from tensorflow import function as graph_function

generator = tf.keras.Sequential([tf.keras.layers.Dense(784)])
discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
g_opt, d_opt = tf.keras.optimizers.Adam(1e-4), tf.keras.optimizers.Adam(1e-4)


def generator_step(noise):
    with tf.GradientTape() as tape:
        loss = -tf.reduce_mean(discriminator(generator(noise)))
    g_opt.apply_gradients(zip(tape.gradient(loss, generator.trainable_variables),
                              generator.trainable_variables))


def discriminator_step(images, noise):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(discriminator(generator(noise))) - tf.reduce_mean(discriminator(images))
    d_opt.apply_gradients(zip(tape.gradient(loss, discriminator.trainable_variables),
                              discriminator.trainable_variables))


@graph_function
def traced_generator_step(noise):
    generator_step(noise)


def eager_critic(images, noise):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(discriminator(images))
    d_opt.minimize(lambda: loss, discriminator.trainable_variables, tape=tape)


critic = tf.function(eager_critic)


class Gan(tf.keras.Model):
    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(data, self(data))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}


def main(dataset):
    tf.config.run_functions_eagerly(True)
    model = Gan()
    model.compile(optimizer="adam", loss="mse", run_eagerly=True)
    for images in dataset:
        noise = tf.random.normal([64, 100])
        discriminator_step(images, noise)
        traced_generator_step(noise)
'''


def test_eager_steps_and_eager_switches_are_reported() -> None:
    findings = assert_unchanged(GAN, RULES, facts=TF2_RUNTIME)
    ours = [f for f in findings if f.rule_id == "NPU063"]
    assert sites(ours) == [("NPU063", 17, 0, "unmigrated"), ("NPU063", 48, 4, "unmigrated"),
                           ("NPU063", 50, 60, "unmigrated")]
    assert ours[0].message.startswith("training step discriminator_step() is not a tf.function: "
                                      "wrap this training step in @tf.function")
    assert ours[1].message.startswith("tf.config.run_functions_eagerly(True): not supported")
    assert ours[2].message.startswith("run_eagerly=True skips tf.function")


def test_traced_loops_and_keras_fit_need_nothing() -> None:
    for source in (CUSTOM_LOOP, MIXED_PRECISION_LOOP, KERAS_FIT):
        assert [f for f in assert_unchanged(source, RULES, facts=TF2_RUNTIME)
                if f.rule_id == "NPU063"] == []


FLAGGED = '''\
"""A Keras script whose eager switches come from flags."""
import tensorflow as tf
from absl import flags

FLAGS = flags.FLAGS


def build(debug):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", run_eagerly=FLAGS.run_eagerly)
    model.compile(optimizer="adam", loss="mse", run_eagerly=None)
    model.compile(optimizer="adam", loss="mse", run_eagerly=False)
    tf.config.run_functions_eagerly(debug)
    tf.config.run_functions_eagerly(run_eagerly=True)
    tf.config.experimental_run_functions_eagerly(False)
    return model
'''


def test_eager_switches_given_flags_are_reported() -> None:
    ours = [f for f in assert_unchanged(FLAGGED, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU063"]
    assert sites(ours) == [("NPU063", 10, 60, "unmigrated"), ("NPU063", 13, 4, "unmigrated"),
                           ("NPU063", 14, 4, "unmigrated")]
    assert ours[0].message.startswith("run_eagerly=FLAGS.run_eagerly skips tf.function when it is true")
    assert ours[1].message.startswith("tf.config.run_functions_eagerly(debug): running functions "
                                      "eagerly is not supported")
    assert ours[2].message.startswith("tf.config.run_functions_eagerly(True): not supported")


INLINE_LOOP = '''\
"""A custom loop written in main(): prints, checkpoints, a Python loop over the data."""
import tensorflow as tf


def main(steps):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    opt = tf.keras.optimizers.SGD()
    batches = iter(tf.data.Dataset.from_tensors(tf.ones((2, 1))).repeat())
    step = 0
    while step < steps:
        if step % 2 == 0:
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(model(next(batches)))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
        print(step, loss.numpy())
        model.save_weights("ckpt/%d" % step)
        step += 1


def fit_epoch(model, opt, images):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(images))
    opt.minimize(loss, model.trainable_variables, tape=tape)
'''


def test_a_training_loop_in_main_is_told_to_move_its_step_into_a_function() -> None:
    """Tracing all of ``main()`` would run its loop, ``.numpy()`` and ``save_weights`` once at
    trace time: the step (tape block and apply_gradients) goes into its own traced function;
    a function that is the step itself keeps the plain advice."""
    findings = [f for f in assert_unchanged(INLINE_LOOP, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU063"]
    assert sites(findings) == [("NPU063", 5, 0, "unmigrated"), ("NPU063", 21, 0, "unmigrated")]
    assert findings[0].message.startswith(
        "training step in a loop of main(), which is not a tf.function: move the step (the "
        "GradientTape block and the apply_gradients call) into a function of its own, decorate "
        "that with @tf.function and call it from the loop")
    assert findings[1].message.startswith("training step fit_epoch() is not a tf.function: wrap this "
                                          "training step in @tf.function")


TRAINER_CLASSES = '''\
"""Trainers of the forecasting models: a Keras one and a custom loop (TF 2.x)."""
import tensorflow as tf


class Trainer(object):
    def __init__(self, model, loss_fn, optimizer, max_grad_norm=5.0):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.max_grad_norm = max_grad_norm

    def train_loop(self, train_loader):
        return [self.train_step(x, y) for x, y in train_loader]

    def train_step(self, x_train, y_train):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(y_train, self.model(x_train, training=True))
        gradients = tape.gradient(loss, self.model.trainable_variables)
        gradients = [tf.clip_by_value(g, -self.max_grad_norm, self.max_grad_norm) for g in gradients]
        self.optimizer.apply_gradients(zip(gradients, self.model.trainable_variables))
        return loss


class Seq2seq:
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        self.optimizer.minimize(loss, self.model.trainable_variables, tape=tape)


class Forecaster(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}
'''


def test_a_train_step_of_a_class_that_is_no_keras_model_is_reported() -> None:
    """Time-series-prediction's ``class Trainer(object)`` names its eager step ``train_step``:
    no ``fit`` traces it, yet it was taken for a Keras override and not reported. A class with no
    base (or only ``object``) is no Keras model; a ``tf.keras.Model``'s ``train_step`` still
    needs nothing."""
    findings = [f for f in assert_unchanged(TRAINER_CLASSES, RULES, facts=TF2_RUNTIME) if f.rule_id == "NPU063"]
    assert sites(findings) == [("NPU063", 13, 4, "unmigrated"), ("NPU063", 23, 4, "unmigrated")]
    assert findings[0].message.startswith("training step train_step() is not a tf.function: ")
