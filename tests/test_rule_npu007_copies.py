"""NPU007's copy of a config parameter (``npu_config = copy.deepcopy(config)``): one copy for
the sessions of a function that nothing between them changes, none where the function copies
the config itself, no guard where the function makes the config when None, and the comments
above the session left attached to it."""

from __future__ import annotations

import pytest

from support.rules import assert_migrates, messages, run_rules, sites
from support.session_config import HEADER, RULES, check, npu_lines

COPY_HEADER = HEADER.replace("import *\n", "import *\nimport copy\n")


def _copied(name: str, parameter: str, indent: str, copied: str = "") -> str:
    """A copy of the parameter ``parameter`` given the guide's lines (``_configure_copy``)."""
    return f"{indent}{name} = {copied or f'copy.deepcopy({parameter})'}\n" + npu_lines(name, indent)


#: An evaluation helper that makes its default config inside the ``try`` that reports a
#: missing checkpoint (the function already makes the config when None).
MADE_IN_TRY = '''\
import tensorflow as tf


def evaluate(checkpoint, eval_op, config=None):
    try:
        if config is None:
            config = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=config) as sess:
            tf.train.Saver().restore(sess, checkpoint)
            return sess.run(eval_op)
    except tf.errors.NotFoundError:
        tf.logging.warning("no checkpoint at %s", checkpoint)
        return None
'''


def test_a_config_made_when_none_inside_the_try_gets_no_second_guard():
    """``if config is None:`` runs before the session in the same ``try`` body: the copy's
    ``... if config is not None else tf.ConfigProto()`` repeated it for nothing."""
    after = COPY_HEADER + MADE_IN_TRY.replace(
        "        with tf.Session(config=config)",
        _copied("npu_config", "config", " " * 8) + "        with tf.Session(config=npu_config)")
    check(MADE_IN_TRY, after, [("NPU007", 8, 13, "migrated")])


#: The default config made in a ``try`` whose ``finally`` logs; the session comes after it.
MADE_BEFORE_FINALLY = '''\
import tensorflow as tf


def predict(checkpoint, inputs, config=None):
    try:
        config = config or tf.ConfigProto()
        config.gpu_options.allow_growth = True
    finally:
        tf.logging.info("session config ready")
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, checkpoint)
        return sess.run("output:0", {"input:0": inputs})
'''


def test_a_config_made_in_a_try_with_only_finally_gets_no_guard_after_it():
    after = COPY_HEADER + MADE_BEFORE_FINALLY.replace(
        "    with tf.Session(config=config)", _copied("npu_config", "config", "    ")
        + "    with tf.Session(config=npu_config)")
    check(MADE_BEFORE_FINALLY, after, [("NPU007", 10, 9, "migrated")])


def test_a_config_made_in_a_try_whose_handler_goes_on_keeps_the_guard():
    """A handled error may stop the ``try`` body before the config is made: the session may
    still get None there, and the copy makes a new config then."""
    before = MADE_BEFORE_FINALLY.replace("    finally:\n", "    except ValueError:\n")
    after = COPY_HEADER + before.replace(
        "    with tf.Session(config=config)", _copied(
            "npu_config", "config", "    ", "copy.deepcopy(config) if config is not None else tf.ConfigProto()")
        + "    with tf.Session(config=npu_config)")
    check(before, after, [("NPU007", 10, 9, "migrated")])
