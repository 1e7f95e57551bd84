"""NPU010 across the files of one repository: a session that a function of one file returns is
closed (or reported) where another file calls it, and the function itself gets no finding.

The facts come from the real analysis hook over all the files (``LoadedRules.repository_facts``), as ``run``
and ``check`` gather them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import guide_note
from npu_codemod.plugins.rules.sess_run._closing_methods import called_method_facts
from npu_codemod.plugins.rules.sess_run._session_functions import session_function_facts
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import run_repository

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
    return run_repository(files, "NPU010", every_finding=True)


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


# --- A class's session closed by a method: only when that method is called ------------------

MODEL = '''"""The model: owns its session, closed by close_session()."""
import tensorflow as tf


class Model(object):
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 4])
        self.loss = tf.reduce_mean(self.x)

    def initialize_session(self):
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def close_session(self):
        self.sess.close()

    def train(self, batches):
        self.initialize_session()
        for batch in batches:
            self.sess.run(self.loss, {self.x: batch})
'''
TRAIN_MODEL = '''"""Train the model."""
import numpy as np
import tensorflow as tf

from model import Model

tf.logging.set_verbosity(tf.logging.INFO)
model = Model()
model.train([np.ones((2, 4))] * 10)
'''
CLOSED_IN = "self.sess is closed in Model.close_session() (the NPU graph executor is released)"
NEVER_CALLED = (f"{CLOSE} (self.sess is closed in Model.close_session(), but no file of the "
                "repository that imports TensorFlow calls close_session(): call it when training "
                f"ends){GUIDE}")


def npu010(findings: list[Finding]) -> list[tuple[int, int, str, str]]:
    return [(f.line, f.column, f.status, f.message) for f in findings if f.rule_id == "NPU010"]


def test_a_close_method_nothing_calls_does_not_close_the_session() -> None:
    result = run({"model.py": MODEL, "train.py": TRAIN_MODEL})
    assert npu010(result["model.py"][1]) == [(11, 20, "unmigrated", NEVER_CALLED)]


def test_a_close_method_another_file_calls_closes_the_session() -> None:
    calls = TRAIN_MODEL + "model.close_session()\n"
    assert called_method_facts(calls) >= {"npu010-method-called:close_session"}
    result = run({"model.py": MODEL, "train.py": calls})
    assert npu010(result["model.py"][1]) == [(11, 20, "migrated", CLOSED_IN)]


def test_a_close_method_registered_with_atexit_closes_the_session() -> None:
    registers = TRAIN_MODEL + "import atexit\natexit.register(model.close_session)\n"
    result = run({"model.py": MODEL, "train.py": registers})
    assert npu010(result["model.py"][1]) == [(11, 20, "migrated", CLOSED_IN)]


def test_a_close_method_its_own_file_calls_closes_the_session() -> None:
    own = MODEL.replace("            self.sess.run(self.loss, {self.x: batch})\n",
                        "            self.sess.run(self.loss, {self.x: batch})\n"
                        "        self.close_session()\n")
    result = run({"model.py": own, "train.py": TRAIN_MODEL})
    assert npu010(result["model.py"][1]) == [(11, 20, "migrated", CLOSED_IN)]


def test_a_kept_result_or_an_argument_is_no_close_call() -> None:
    assert called_method_facts("x = model.close_session()\nmodel.close_session(now)\n") == set()


def test_cli_reports_a_session_whose_close_method_is_never_called(tmp_path: Path) -> None:
    """End to end on a real git repository (the sequence_tagging shape: the training script
    imports no TensorFlow and never calls close_session()): NPU010 is left, not compliant,
    and the repository needs work instead of being ready."""
    script = '"""Train."""\nimport numpy as np\n\nfrom model import Model\n\nif __name__ == "__main__":\n' \
             '    Model().train([np.ones((2, 4))] * 10)\n'
    make_repo(tmp_path / "tagger", {"model.py": MODEL, "train.py": script})
    (tmp_path / "repos.txt").write_text("tagger\n")
    cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "report", "--workspace", "ws",
        "--no-progress", cwd=tmp_path, expect=0)
    rows = read_csv(tmp_path / "report" / "findings.csv")
    [close] = [row for row in rows if row["rule_id"] == "NPU010"]
    assert (close["path"], close["line"], close["status"]) == ("model.py", "11", "unmigrated")
    assert close["message"] == NEVER_CALLED
    [repo] = read_csv(tmp_path / "report" / "repos.csv")
    assert repo["verdict"] == "needs-work"
    assert repo["verdict_reason"] == "1 site(s) left: 1 to change (NPU010 1)"
