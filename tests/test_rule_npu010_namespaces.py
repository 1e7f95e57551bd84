"""NPU010 and a scope that hands all its local names over (review round 17, N2).

srez's ``train_data = TrainData(locals())`` then ``train_model(train_data)``, which runs
``td.sess.run``: the session is used through a dict the tool cannot follow, so a close after
its last *seen* use (right after its creation) made every later run fail with "Attempted to
use a closed Session". ``locals()``, ``vars()``, ``exec``/``eval`` (and ``globals()`` at
module level) hand the session over: it escapes, it is reported, never closed.
"""

from __future__ import annotations

import pytest

from support.rules import assert_migrates, sites
from support.session_close import close_reported

RULES = {"NPU010"}
HOLDER = ("class Data(object):\n"
          "    def __init__(self, d):\n"
          "        self.__dict__.update(d)\n"
          "\n"
          "\n"
          "def run(td):\n"
          "    td.sess.run(td.a)\n"
          "\n"
          "\n")


def handed(word: str, line: int) -> str:
    return (f"sess is handed over with every local name by {word}() (line {line}), so its uses "
            "through it are not seen")


def test_a_session_captured_by_locals_is_reported_not_closed() -> None:
    close_reported(HOLDER + "def train():\n"
                            "    sess = tf.Session()\n"
                            "    a = tf.constant(1.0)\n"
                            "    td = Data(locals())\n"
                            "    run(td)\n",
                   (12, 11, handed("locals", 14)))


@pytest.mark.parametrize("call, word", [
    ("td = Data(vars())", "vars"),
    ("exec(code)", "exec"),
    ("value = eval('sess.run(a)')", "eval"),
])
def test_vars_exec_and_eval_hand_the_locals_over_too(call: str, word: str) -> None:
    close_reported("def train(code):\n"
                   "    sess = tf.Session()\n"
                   "    a = tf.constant(1.0)\n"
                   f"    {call}\n"
                   "    print(a)\n",
                   (3, 11, handed(word, 5)))


def test_a_module_session_captured_by_globals_is_reported() -> None:
    close_reported("sess = tf.Session()\n"
                   "config = dict(globals())\n"
                   "start(config)\n",
                   (2, 7, handed("globals", 3)))


def test_namespaces_that_do_not_hold_the_session_leave_the_close() -> None:
    """``vars(obj)`` is that object's attributes, a function's ``globals()`` are its module's,
    a ``locals()`` before the session or in a nested function sees no session."""
    before = ("def locals_of(frame):\n"
              "    return frame\n"
              "\n"
              "\n"
              "def train(flags):\n"
              "    print(locals())\n"
              "    sess = tf.Session()\n"
              "    options = vars(flags)\n"
              "    names = globals()\n"
              "    def show():\n"
              "        return locals()\n"
              "    sess.run(tf.constant(1.0), options=options)\n"
              "    show()\n")
    after = before.replace("options=options)\n", "options=options)\n    sess.close()\n")
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert sites(findings) == [("NPU010", 8, 11, "migrated")]


def test_a_namespace_only_looked_into_hands_nothing_over() -> None:
    """Regression (MorvanZhou's ``403_RNN_regression.py``: ``if 'final_s_' not in
    globals():`` in the training loop): a name looked up in a module's namespace hands it to no
    one; the session still gets its close after the loop."""
    before = ("sess = tf.Session()\n"
              "for step in range(10):\n"
              "    if 'state' not in globals():\n"
              "        feed = {}\n"
              "    elif globals().get('state') is None or globals()['state'] == 0:\n"
              "        feed = {}\n"
              "    state = sess.run(tf.constant(1.0), feed)\n")
    after = before + "sess.close()\n"
    findings = assert_migrates("import tensorflow as tf\n" + before, "import tensorflow as tf\n" + after, RULES)
    assert sites(findings) == [("NPU010", 2, 7, "migrated")]
