"""NPU010 and a function of another module that starts threads on the session (review round
17, N3).

srez's ``_demo`` hands its session to ``srez_input.setup_inputs(sess, ...)``, which calls
``tf.train.start_queue_runners(sess=sess)`` and joins nothing: a close after the caller's last
use stops the session under the queue-runner threads ("Exception in QueueRunner"). The same
helper in the caller's file was already reported; one of another file is now too, through the
repository facts (``npu010-threads:``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import guide_note
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._thread_functions import thread_function_facts
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo

GUIDE = guide_note(SessionClose())
CLOSE = "call close() on this session when training ends"
INPUTS = '''"""The input pipeline."""
import threading

import tensorflow as tf


def setup_inputs(sess, files):
    queue = tf.train.string_input_producer(files)
    reader = tf.TextLineReader()
    _, line = reader.read(queue)
    batch = tf.train.batch([line], batch_size=4)
    tf.train.start_queue_runners(sess=sess)
    return batch


def feed(files, *, session, coord):
    worker = threading.Thread(target=load, args=(session, files))
    worker.start()


def joined(sess, coord):
    threads = tf.train.start_queue_runners(sess, coord=coord)
    coord.join(threads)


def load(session, files):
    session.run(files)
'''
MAIN = '''import tensorflow as tf
import inputs


def demo(files):
    sess = tf.Session()
    batch = inputs.setup_inputs(sess, files)
    print(sess.run(batch))
'''
MAIN2 = MAIN.replace("import inputs\n", "from inputs import setup_inputs\n").replace(
    "inputs.setup_inputs(", "setup_inputs(")
FILES = {"inputs.py": INPUTS, "main.py": MAIN, "main2.py": MAIN2}


def run(files: dict[str, str]) -> dict[str, tuple[Optional[str], list[Finding]]]:
    loaded_rules = load_rules(RuleSelection(only=frozenset({"NPU010"})))
    data = {path: text.encode("utf-8") for path, text in files.items()}
    facts = loaded_rules.repository_facts(data.items()).facts
    result = {}
    for path, content in data.items():
        outcome = loaded_rules.engine.process(content, path, facts=facts)
        new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
        result[path] = (new, [f for f in outcome.findings if f.rule_id == "NPU010"])
    return result


def started(callee: str) -> str:
    return f"{CLOSE} (sess is used by threads that {callee}() starts and does not join){GUIDE}"


def test_the_facts_name_the_parameters_threads_get_without_a_join() -> None:
    assert thread_function_facts("pipeline/inputs.py", INPUTS) == {
        "npu010-threads:pipeline.inputs.setup_inputs#0:sess",
        "npu010-threads:pipeline.inputs.feed#-1:session",
        "npu010-threads:pipeline.inputs.feed#0:files"}  # whatever the threads get
    assert thread_function_facts("main.py", MAIN) == set()


def test_a_session_given_to_threads_another_module_starts_is_reported() -> None:
    result = run(FILES)
    main, findings = result["main.py"]
    assert main is None
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (6, 11, "unmigrated", started("inputs.setup_inputs"))]
    main2, findings = result["main2.py"]
    assert main2 is None
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (6, 11, "unmigrated", started("setup_inputs"))]


@pytest.mark.parametrize("call, closed", [
    ("inputs.feed(files, session=sess, coord=None)", False),  # a keyword-only parameter
    ("inputs.joined(sess, coord)", True),  # joined in the callee
    ("inputs.setup_inputs(files=files, sess=sess)", False),  # by keyword
    ("inputs.load(sess, files)", True),  # no threads
])
def test_which_parameter_and_whether_the_callee_joins(call: str, closed: bool) -> None:
    main = ("import tensorflow as tf\n"
            "import inputs\n"
            "\n"
            "\n"
            "def demo(files, coord):\n"
            "    sess = tf.Session()\n"
            f"    {call}\n"
            "    print(sess.run(files))\n")
    new, findings = run({"inputs.py": INPUTS, "main.py": main})["main.py"]
    assert (new is not None) == closed
    assert [f.status for f in findings] == ["migrated" if closed else "unmigrated"]
    if closed:
        assert new == main.replace("print(sess.run(files))\n", "print(sess.run(files))\n    sess.close()\n") \
            .replace("import tensorflow", "from npu_bridge.npu_init import *\nimport tensorflow")


def test_cli_reports_the_session_with_either_engine(tmp_path: Path) -> None:
    """End to end on a real git repository (the srez shape): the caller's session is left,
    the same with ``--engine selective`` and ``--engine full``."""
    make_repo(tmp_path / "srez", FILES)
    (tmp_path / "repos.txt").write_text("srez\n")
    rows = {}
    for engine in ("selective", "full"):
        cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", engine, "--workspace", "ws",
            "--engine", engine, "--no-cache", "--no-progress", cwd=tmp_path, expect=0)
        rows[engine] = read_csv(tmp_path / engine / "findings.csv")
    assert rows["selective"] == rows["full"]
    closes = [(row["path"], row["line"], row["status"], row["message"])
              for row in rows["full"] if row["rule_id"] == "NPU010"]
    assert closes == [("main.py", "6", "unmigrated", started("inputs.setup_inputs")),
                      ("main2.py", "6", "unmigrated", started("setup_inputs"))]
