"""NPU010 findings that say where the close belongs (issue 13, defect 6).

A session a helper returns (``return sess``, ``return sess, graph``) belongs to the helper's
callers: each call in the file is handled like a session creation, and the helper itself gets
no finding. Sessions that outlive their scope are reported with the place their close belongs:
the owning class's cleanup method, the end of the ``if __name__ == "__main__":`` block, after
``COORD.join(...)``.
"""

from __future__ import annotations

from support.rules import assert_migrates, assert_unchanged, run_rules, sites
from support.session_close import CLOSE, GUIDE, close_reported

RULES = {"NPU010"}
TF = "import tensorflow as tf\n"
INSERTED = ("inserted 'sess.close()' after the last statement using the session "
            "(Session.close() releases the NPU graph executor)")

SESSION_HELPER = '''"""Train and evaluate with sessions made by one helper."""
import tensorflow as tf

from model import build_graph


def make_session(checkpoint=None):
    """A session on a fresh graph, restored from ``checkpoint`` when given."""
    graph = tf.Graph()
    with graph.as_default():
        build_graph()
        saver = tf.train.Saver()
    sess = tf.Session(graph=graph, config=tf.ConfigProto(allow_soft_placement=True))
    if checkpoint:
        saver.restore(sess, checkpoint)
    return sess, graph


def train(steps):
    sess, graph = make_session()
    with graph.as_default():
        sess.run(tf.global_variables_initializer())
    for step in range(steps):
        sess.run("train_op")
    print("trained")


def evaluate(checkpoint):
    sess, _ = make_session(checkpoint)
    with sess:
        return sess.run("accuracy:0")
'''


def test_helper_returning_session_and_graph_is_closed_by_its_callers() -> None:
    """The caller that never closes gets the close; the one using ``with`` needs nothing; the
    helper itself has no finding."""
    after = SESSION_HELPER.replace('        sess.run("train_op")\n',
                                   '        sess.run("train_op")\n    sess.close()\n')
    findings = assert_migrates(SESSION_HELPER, after, RULES)
    assert sites(findings) == [("NPU010", 20, 18, "migrated"), ("NPU010", 29, 14, "migrated")]
    assert [f.message for f in findings] == [INSERTED, "sess is closed (the NPU graph executor is released)"]
    _, again = run_rules(after, RULES)  # the same sites, migrated (the second moved a line down)
    assert sites(again) == [("NPU010", 20, 18, "migrated"), ("NPU010", 30, 14, "migrated")]


def test_a_caller_that_cannot_be_closed_gets_the_finding() -> None:
    source = SESSION_HELPER + ('\n\nclass Evaluator(object):\n'
                               '    def __init__(self):\n'
                               '        self.sess, self.graph = make_session()\n'
                               '\n\ndef serve():\n'
                               '    pair = make_session()\n'
                               '    return pair\n')
    new, findings = run_rules(source, RULES)
    assert new is not None
    unmigrated = [(f.line, f.column, f.message) for f in findings if f.status == "unmigrated"]
    assert unmigrated == [
        (36, 32, f"{CLOSE} (the session is item 0 of what make_session() returns; unpack it into "
                 f"names (a, b = ...) so that the tool can close it, or close it by hand){GUIDE}"),
        (40, 11, f"{CLOSE} (the session is item 0 of what make_session() returns; unpack it into "
                 f"names (a, b = ...) so that the tool can close it, or close it by hand){GUIDE}"),
    ]


def test_private_helper_returning_the_session_itself() -> None:
    before = ("def _session():\n"
              "    config = tf.ConfigProto()\n"
              "    config.gpu_options.allow_growth = True\n"
              "    return tf.Session(config=config)\n"
              "\n"
              "def main():\n"
              "    sess = _session()\n"
              "    sess.run(init)\n"
              "    train(sess)\n"
              "    print('done')\n"
              "\n"
              "K.set_session(_session())\n")
    after = before.replace("train(sess)\n", "train(sess)\n    sess.close()\n")
    findings = assert_migrates(TF + before, TF + after, RULES)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (8, 11, "migrated", INSERTED),
        (13, 14, "unmigrated", f"{CLOSE} (the session _session() returns is created inline as an "
                               f"argument; bind it to a name first){GUIDE}"),
    ]


def test_a_helper_returned_through_another_helper() -> None:
    before = ("def make_session():\n"
              "    return tf.Session()\n"
              "\n"
              "def initialized_session():\n"
              "    sess = make_session()\n"
              "    sess.run(tf.global_variables_initializer())\n"
              "    return sess\n"
              "\n"
              "if __name__ == '__main__':\n"
              "    sess = initialized_session()\n"
              "    sess.run(train_op)\n"
              "    print('done')\n")
    after = before.replace("    sess.run(train_op)\n", "    sess.run(train_op)\n    sess.close()\n")
    findings = assert_migrates(TF + before, TF + after, RULES)
    assert sites(findings) == [("NPU010", 11, 11, "migrated")]


def test_returned_sessions_whose_callers_the_tool_cannot_see() -> None:
    """The reason says "returned" (a tuple used to be "stored in a container")."""
    close_reported("def get_session():\n"
                   "    sess = tf.Session()\n"
                   "    return sess, sess.graph\n",
                   (3, 11, "sess is returned by get_session(): close it in the callers of "
                     "get_session(); it has no caller in this file"))
    close_reported("class Model(object):\n"
                   "    def session(self):\n"
                   "        return tf.Session(graph=self.graph)\n",
                   (4, 15, "the session is returned by session(): close it in the callers of session(); "
                     "it is a method, decorated, or its name is used otherwise than in a call, so "
                     "the tool cannot see its callers"))
    close_reported("def get_session():\n"
                   "    return tf.Session()\n"
                   "\n"
                   "hooks = [get_session]\n",
                   (3, 11, "the session is returned by get_session(): close it in the callers of "
                     "get_session(); it is a method, decorated, or its name is used otherwise "
                     "than in a call, so the tool cannot see its callers"))


DQN_CLASS = '''class DeepQNetwork(object):
    def __init__(self, n_actions, n_features, output_graph=False):
        self.n_actions = n_actions
        self.sess = tf.Session()
        if output_graph:
            tf.summary.FileWriter("logs/", self.sess.graph)
        self.sess.run(tf.global_variables_initializer())

    def learn(self, batch):
        self.sess.run(self.train_op, feed_dict={self.s: batch})
'''


def test_session_of_a_class_names_the_class_and_its_cleanup_method() -> None:
    close_reported(DQN_CLASS,
                   (5, 20, "it is stored in an attribute, subscript or several names, so the tool "
                     "cannot see when training ends; add a close() method to DeepQNetwork that "
                     "calls self.sess.close(), and call it when training ends"))
    with_exit = DQN_CLASS + "\n    def __exit__(self, *exc):\n        self.writer.flush()\n"
    close_reported(with_exit,
                   (5, 20, "it is stored in an attribute, subscript or several names, so the tool "
                     "cannot see when training ends; close it in DeepQNetwork.__exit__(): "
                     "self.sess.close()"))
    close_reported("class Agent(object):\n"
                   "    def __init__(self):\n"
                   "        sess = tf.Session()\n"
                   "        sess.run(tf.global_variables_initializer())\n"
                   "        self.session = sess\n"
                   "\n"
                   "    def close(self):\n"
                   "        self.writer.close()\n",
                   (4, 15, "sess is stored on an attribute (self.session); close it in Agent.close(): "
                     "self.session.close()"))


def test_a_class_that_closes_its_session_is_migrated() -> None:
    source = DQN_CLASS + "\n    def __del__(self):\n        self.sess.close()\n"
    findings = assert_unchanged(TF + source, RULES)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (5, 20, "migrated", "self.sess is closed in DeepQNetwork.__del__() (the NPU graph executor "
                            "is released)")]


A3C_GLOBALS = '''import threading

import tensorflow as tf

N_WORKERS = 4


class Worker(object):
    def __init__(self, name, globalAC):
        self.name = name
        self.AC = globalAC

    def work(self):
        while not COORD.should_stop() and GLOBAL_EP < 1000:
            SESS.run(self.AC.update_op)


if __name__ == "__main__":
    SESS = tf.Session()
    with tf.device("/cpu:0"):
        GLOBAL_AC = build_net("global")
        workers = [Worker("W_%i" % i, GLOBAL_AC) for i in range(N_WORKERS)]
    COORD = tf.train.Coordinator()
    SESS.run(tf.global_variables_initializer())
    worker_threads = []
    for worker in workers:
        job = lambda: worker.work()
        t = threading.Thread(target=job)
        t.start()
        worker_threads.append(t)
    COORD.join(worker_threads)
    plot(GLOBAL_RUNNING_R)
'''


def test_module_session_used_by_functions_names_the_main_block_and_the_join() -> None:
    """``SESS`` is a module global the workers' methods run: it escapes this block, and the
    close belongs at the end of the ``__main__`` block, after ``COORD.join(...)``."""
    findings = assert_unchanged(A3C_GLOBALS, RULES)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (19, 11, "unmigrated", f"{CLOSE} (SESS is used in a nested function; close it at the end "
                               "of the 'if __name__ == \"__main__\":' block (line 32), after "
                               f"COORD.join(worker_threads) (line 31)){GUIDE}")]


def test_inline_session_in_a_script_names_the_main_block() -> None:
    close_reported("K.set_session(tf.Session(config=config))\n"
                   "model = build_model()\n"
                   "\n"
                   "if __name__ == '__main__':\n"
                   "    model.fit(x, y, epochs=10)\n"
                   "    model.save('model.h5')\n",
                   (2, 14, "it is created inline as an argument; bind it to a name first; close it at the "
                     "end of the 'if __name__ == \"__main__\":' block (line 7)"))
