"""NPU041 keras-session and NPU042 keras-clear-session: golden before/after per bullet."""

from __future__ import annotations

import pytest

from npu_codemod.plugins.rules.keras.npu041_keras_session import npu_codemod_analyze_file
from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.packs import INIT, KERAS, message_of

BY_HAND = ("configure the Keras session: npu_keras_sess = set_keras_session_npu_config() before "
           "training, close_session(npu_keras_sess) after")
SCRIPT = '''\
"""Trains a small CNN on MNIST with tf.keras (TF 1.x, graph mode)."""
import argparse

import tensorflow as tf
from tensorflow.keras import backend as K


def build_model(num_classes):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(num_classes, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def main(args):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    for fold in range(args.folds):
        model = build_model(10)
        model.fit(x_train, y_train, batch_size=128, epochs=args.epochs)
        print(model.evaluate(x_test, y_test))
        K.clear_session()  # a fresh graph for the next fold


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1)
    main(parser.parse_args())
'''
SCRIPT_AFTER = '''\
"""Trains a small CNN on MNIST with tf.keras (TF 1.x, graph mode)."""
from npu_bridge.npu_init import *
import argparse

import tensorflow as tf
from tensorflow.keras import backend as K


def build_model(num_classes):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(num_classes, activation="softmax"),
    ])
    model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    return model


def main(args):
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    for fold in range(args.folds):
        model = build_model(10)
        model.fit(x_train, y_train, batch_size=128, epochs=args.epochs)
        print(model.evaluate(x_test, y_test))
        npu_clear_session()  # a fresh graph for the next fold


if __name__ == "__main__":
    npu_keras_sess = set_keras_session_npu_config()
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=1)
    main(parser.parse_args())
    close_session(npu_keras_sess)
'''


def test_a_keras_fit_script_runs_in_the_npu_session() -> None:
    findings = assert_migrates(KERAS, SCRIPT, SCRIPT_AFTER, findings=[
        ("NPU041", 22, 8, "migrated"), ("NPU042", 24, 8, "migrated")])
    assert message_of(findings, "NPU041", 22) == (
        "added npu_keras_sess = set_keras_session_npu_config() and close_session(npu_keras_sess) "
        "to the __main__ block")
    assert message_of(findings, "NPU042", 24) == "replaced K.clear_session() with npu_clear_session()"


def test_a_second_run_reports_the_session_as_configured() -> None:
    findings = assert_reports(KERAS, SCRIPT_AFTER, findings=[
        ("NPU041", 23, 8, "migrated"), ("NPU042", 25, 8, "migrated")])
    assert message_of(findings, "NPU041", 23) == "set_keras_session_npu_config() configures the Keras session"


def test_a_one_line_main_block_is_opened() -> None:
    before = SCRIPT.split("if __name__")[0] + "if __name__ == '__main__': main(ARGS)\n"
    after = SCRIPT_AFTER.split("if __name__")[0] + (
        "if __name__ == '__main__':\n    npu_keras_sess = set_keras_session_npu_config()\n"
        "    main(ARGS)\n    close_session(npu_keras_sess)\n")
    assert_migrates(KERAS, before, after)


def test_a_file_that_sets_its_own_session_is_left_to_npu007() -> None:
    source = SCRIPT.replace('if __name__ == "__main__":\n',
                            'if __name__ == "__main__":\n    K.set_session(tf.Session(config=config))\n')
    outcome = run_rules({"NPU041"}, source)
    assert (outcome.new, outcome.findings) == (None, [])


def test_a_file_without_a_main_block_is_reported_at_its_first_training_call() -> None:
    source = SCRIPT.split("\n\nif __name__")[0] + "\n"
    findings = assert_reports({"NPU041"}, source, findings=[("NPU041", 22, 8, "unmigrated")])
    assert findings[0].message.startswith(f'no if __name__ == "__main__": block: {BY_HAND} (guide: '
                                          "Migrating Keras scripts, ")


@pytest.mark.parametrize("last", ["tf.app.run(main)", "sys.exit(main(ARGS))", "app.run(main)",
                                  "raise SystemExit(main(ARGS))"])
def test_a_main_block_that_exits_is_reported(last: str) -> None:
    source = ("import sys\n\nfrom absl import app\n" + SCRIPT.split("if __name__")[0]
              + f'if __name__ == "__main__":\n    {last}\n')
    findings = assert_reports({"NPU041"}, source, findings=[("NPU041", 25, 8, "unmigrated")])
    assert findings[0].message.startswith(
        f"the __main__ block ends with {last}, which exits (a close after it never runs): {BY_HAND}, "
        "in the function it runs")


def test_training_at_module_level_runs_before_the_block_and_is_reported() -> None:
    before = ('import tensorflow as tf\n\nbaseline = tf.keras.models.load_model("base.h5")\n'
              "print(baseline.evaluate(x, y))\n\n\ndef main():\n    model = tf.keras.Sequential()\n"
              "    model.fit(x, y)\n\n\nif __name__ == \"__main__\":\n    main()\n")
    after = INIT + before.replace("    main()\n", "    npu_keras_sess = set_keras_session_npu_config()\n"
                                  "    main()\n    close_session(npu_keras_sess)\n")
    findings = assert_migrates({"NPU041"}, before, after, findings=[
        ("NPU041", 4, 6, "unmigrated"), ("NPU041", 9, 4, "migrated")])
    assert message_of(findings, "NPU041", 4).startswith(
        "this training runs when the module is imported, before the __main__ block configures "
        "the session: move it into a function the block calls, or configure")


def test_a_taken_session_name_is_not_reused() -> None:
    source = SCRIPT.replace("def main(args):", "npu_keras_sess = None\n\n\ndef main(args):")
    outcome = run_rules({"NPU041"}, source)
    assert "    npu_keras_sess_1 = set_keras_session_npu_config()\n" in outcome.new
    assert "    close_session(npu_keras_sess_1)\n" in outcome.new


@pytest.mark.parametrize("source", [
    "def train(model):\n    model.fit(x, y)\n\n\nif __name__ == '__main__':\n    train(make())\n",
    "from keras.models import Sequential\nm = Sequential()\n\n\nif __name__ == '__main__':\n    m.fit(x, y)\n",
    "m = MyModel()\n\n\nif __name__ == '__main__':\n    m.predict(x)\n",
])
def test_training_a_model_not_shown_to_be_built_here_is_left_alone(source: str) -> None:
    outcome = run_rules({"NPU041"}, "import tensorflow as tf\n" + source)
    assert (outcome.new, outcome.findings) == (None, [])


@pytest.mark.parametrize("imports, call", [
    ("from tensorflow.keras import backend as K", "K.clear_session()"),
    ("import tensorflow as tf", "tf.keras.backend.clear_session()"),
    ("import tensorflow as tf", "tf.compat.v1.keras.backend.clear_session()"),
    ("from tensorflow.python.keras import backend as K", "K.clear_session()"),
    ("from tensorflow.keras.backend import clear_session", "clear_session()"),
])
def test_clear_session_in_every_spelling(imports: str, call: str) -> None:
    findings = assert_migrates({"NPU042"}, f"{imports}\n{call}\n", f"{INIT}{imports}\nnpu_clear_session()\n",
                               findings=[("NPU042", 2, 0, "migrated")])
    assert findings[0].message == f"replaced {call} with npu_clear_session()"


def test_clear_session_not_called_is_respelled() -> None:
    before = "import atexit\nfrom tensorflow.keras import backend as K\natexit.register(K.clear_session)\n"
    assert_migrates({"NPU042"}, before, INIT + before.replace("K.clear_session", "npu_clear_session"))


def test_standalone_keras_clear_session_is_left_alone() -> None:
    assert_reports({"NPU042"}, "import tensorflow as tf\nfrom keras import backend as K\nK.clear_session()\n",
                   findings=[])


# Review round 26: keras-yolo3 runs its graph in the session Keras makes on the first
# K.get_session(), without the NPU config; no rule said so, as the file trains nothing.
YOLO = '''\
import numpy as np
import tensorflow as tf
from keras import backend as K
from keras.models import load_model


class YOLO(object):
    def __init__(self, model_path, anchors):
        self.anchors = anchors
        self.sess = K.get_session()
        self.yolo_model = load_model(model_path, compile=False)
        self.input_image_shape = K.placeholder(shape=(2, ))
        self.boxes = tf.image.non_max_suppression(self.yolo_model.output[0], self.yolo_model.output[1], 20)

    def detect_image(self, image_data):
        return self.sess.run(self.boxes, feed_dict={self.yolo_model.input: image_data,
                                                    K.learning_phase(): 0})
'''
UNSET = ("Keras makes this session without the NPU config: no file of the repository sets one; "
         "before it, npu_keras_sess = set_keras_session_npu_config() (close_session(npu_keras_sess) "
         "when done), or K.set_session(tf.Session(config=...)) with the NPU config NPU007 writes")


def test_a_keras_session_no_file_sets_is_reported_where_it_is_got() -> None:
    findings = assert_reports({"NPU041"}, YOLO, findings=[("NPU041", 10, 20, "unmigrated")])
    assert findings[0].message.startswith(UNSET), findings[0].message


@pytest.mark.parametrize("source, facts", [
    (YOLO, {"npu041-sets-session"}),  # another file of the repository sets the Keras session
    (YOLO.replace("        self.sess = K.get_session()\n",
                  "        K.set_session(tf.Session(config=config))\n        self.sess = K.get_session()\n"),
     set()),  # this file sets it (NPU007 configures that session)
    (YOLO.replace("self.sess = K.get_session()", "self.get_session = K.get_session"), set()),  # not called
])
def test_a_keras_session_set_somewhere_is_not_reported(source: str, facts: set[str]) -> None:
    assert assert_reports({"NPU041"}, source, findings=[], facts=frozenset(facts)) == []


def test_the_fact_says_which_files_set_the_keras_session() -> None:
    assert "npu041-sets-session" in (npu_codemod_analyze_file("main.py", "K.set_session(sess)\n") or ())
    assert "npu041-sets-session" in (npu_codemod_analyze_file(
        "main.py", "npu_keras_sess = set_keras_session_npu_config()\n") or ())
    assert "npu041-sets-session" not in (npu_codemod_analyze_file("yolo.py", YOLO) or ())
