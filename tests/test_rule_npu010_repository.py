"""NPU010 across the files of one repository: a session that a function of one file returns is
closed (or reported) where another file calls it, and the function itself gets no finding.

The facts come from the real analysis hook over all the files (``LoadedRules.repository_facts``), as ``run``
and ``check`` gather them.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import guide_note
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._session_functions import session_function_facts
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

GUIDE = guide_note(SessionClose())
CLOSE = "call close() on this session when training ends"
INSERTED = ("inserted 'sess.close()' after the last statement using the session "
            "(Session.close() releases the NPU graph executor)")

SESSIONS = '''"""Sessions for the training and evaluation scripts."""
import tensorflow as tf


def make_session(graph=None, allow_growth=True):
    """A session on ``graph`` that grows its GPU memory as needed."""
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = allow_growth
    sess = tf.Session(graph=graph, config=config)
    return sess, sess.graph


def get_session():
    return tf.Session()
'''
TRAIN = '''"""Train the classifier."""
import tensorflow as tf

from utils.sessions import make_session
from model import build_model


def train(steps):
    model = build_model()
    sess, graph = make_session()
    sess.run(tf.global_variables_initializer())
    for step in range(steps):
        sess.run(model.train_op)
    print("trained")


if __name__ == "__main__":
    train(1000)
'''
EVALUATE = '''"""Evaluate a checkpoint."""
import tensorflow as tf

import utils.sessions as sessions


class Evaluator(object):
    def __init__(self, checkpoint):
        self.sess = sessions.get_session()
        tf.train.Saver().restore(self.sess, checkpoint)

    def accuracy(self):
        return self.sess.run("accuracy:0")


def evaluate(checkpoint):
    sess, _ = sessions.make_session()
    with sess:
        tf.train.Saver().restore(sess, checkpoint)
        return sess.run("accuracy:0")
'''
FILES = {"utils/__init__.py": "", "utils/sessions.py": SESSIONS, "train.py": TRAIN,
         "evaluate.py": EVALUATE}


def run(files: dict[str, str]) -> dict[str, tuple[Optional[str], list[Finding]]]:
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU010"})))
    data = {path: text.encode("utf-8") for path, text in files.items()}
    facts = loaded_rules.repository_facts(data.items()).facts
    result = {}
    for path, content in data.items():
        outcome = loaded_rules.engine.process(content, path, facts=facts)
        new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
        result[path] = (new, list(outcome.findings))
    return result


def test_the_facts_name_the_session_functions_and_their_callers() -> None:
    assert session_function_facts("utils/sessions.py", SESSIONS) == {
        "npu010-session:utils.sessions.make_session#0", "npu010-session:utils.sessions.get_session"}
    assert session_function_facts("train.py", TRAIN) == {"npu010-called:utils.sessions.make_session"}
    assert session_function_facts("evaluate.py", EVALUATE) == {
        "npu010-called:utils.sessions.get_session", "npu010-called:utils.sessions.make_session"}


def test_sessions_returned_by_another_file_are_closed_where_they_are_called() -> None:
    result = run(FILES)
    assert result["utils/sessions.py"] == (None, [])  # its callers own the sessions
    train, findings = result["train.py"]
    assert train == TRAIN.replace('        sess.run(model.train_op)\n',
                                  '        sess.run(model.train_op)\n    sess.close()\n').replace(
        '"""\nimport', '"""\nfrom npu_bridge.npu_init import *\nimport')  # NPU001 comes with every run
    assert sorted((f.line, f.column, f.rule_id, f.status, f.message) for f in findings) == [
        (2, 0, "NPU001", "migrated", "added 'from npu_bridge.npu_init import *'"),
        (10, 18, "NPU010", "migrated", INSERTED)]
    evaluate, findings = result["evaluate.py"]
    assert evaluate is None
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (9, 20, "unmigrated", f"{CLOSE} (the session sessions.get_session() returns is stored in an "
                              "attribute, subscript or several names, so the tool cannot see when "
                              "training ends; add a close() method to Evaluator that calls "
                              f"self.sess.close(), and call it when training ends){GUIDE}"),
        (17, 14, "migrated", "sess is closed (the NPU graph executor is released)"),
    ]
    again = run({**FILES, "train.py": train})
    assert again["train.py"][0] is None
    assert sorted((f.line, f.rule_id, f.status) for f in again["train.py"][1]) == [
        (2, "NPU001", "migrated"), (11, "NPU010", "migrated")]


def test_a_session_function_no_file_calls_keeps_its_finding() -> None:
    result = run({"utils/__init__.py": "", "utils/sessions.py": SESSIONS})
    assert [(f.line, f.message) for f in result["utils/sessions.py"][1]] == [
        (9, f"{CLOSE} (sess is returned by make_session(): close it in the callers of "
            f"make_session(); it has no caller in this file){GUIDE}"),
        (14, f"{CLOSE} (the session is returned by get_session(): close it in the callers of "
             f"get_session(); it has no caller in this file){GUIDE}"),
    ]
