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
from npu_codemod.plugins.rules.sess_run._thread_functions import thread_function_facts
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import run_repository

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
    return run_repository(files, "NPU010")


def demo(imports: str, parameters: str, call: str, fetched: str) -> str:
    """A script whose ``demo`` opens a session, hands it on with ``call``, then runs it."""
    return (f"import tensorflow as tf\n{imports}\n\n\ndef demo({parameters}):\n"
            f"    sess = tf.Session()\n    {call}\n    print(sess.run({fetched}))\n")


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
    main = demo("import inputs", "files, coord", call, "files")
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


# Review round 26: wavenet's train.py hands its session to ``reader.start_threads(sess)``, a
# method of ``AudioReader`` (wavenet/audio_reader.py) whose daemon threads run
# ``sess.run(self.enqueue)`` and are never joined (``coord.join(threads)`` joins only the queue
# runners): the close the tool put after the training loop cancelled them mid-enqueue.
READER = '''import os
import threading

import tensorflow as tf


class AudioReader(object):
    def __init__(self, coord, sample_size):
        self.coord = coord
        self.threads = []
        self.queue = tf.PaddingFIFOQueue(32, ["float32"], shapes=[(None, 1)])

    def thread_main(self, sess):
        while not self.coord.should_stop():
            sess.run(self.enqueue)

    def start_threads(self, sess, n_threads=1):
        for _ in range(n_threads):
            thread = threading.Thread(target=self.thread_main, args=(sess,))
            thread.daemon = True
            thread.start()
            self.threads.append(thread)
        return self.threads


class Feeder(object):
    def start_in_session(self, session, log_dir):
        self._session = session
        path = os.path.join(log_dir, "feeder.log")
        threading.Thread(target=self._enqueue, name=path).start()

    def close(self, session):
        self._session = session  # no thread: stored, not run
'''
TRAIN = '''import tensorflow as tf
from wavenet import AudioReader


def main():
    coord = tf.train.Coordinator()
    reader = AudioReader(coord, sample_size=100000)
    audio_batch = reader.dequeue(4)
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=False))
    sess.run(tf.global_variables_initializer())
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    reader.start_threads(sess)
    try:
        for step in range(10):
            sess.run(audio_batch)
    finally:
        coord.request_stop()
        coord.join(threads)
'''


def test_the_facts_name_the_parameters_a_method_gives_threads() -> None:
    assert thread_function_facts("wavenet/audio_reader.py", READER) == {
        "npu010-thread-methods:wavenet.audio_reader.AudioReader.start_threads#0:sess",
        "npu010-thread-methods:wavenet.audio_reader.Feeder.start_in_session#0:session"}


@pytest.mark.parametrize("files", [
    {"wavenet/__init__.py": "from .audio_reader import AudioReader\n",
     "wavenet/audio_reader.py": READER, "train.py": TRAIN},
    {"train.py": READER + "\n\n" + TRAIN.replace("from wavenet import AudioReader\n", "")},
], ids=["another-file", "same-file"])
def test_a_session_given_to_threads_a_method_starts_is_reported(files: dict[str, str]) -> None:
    new, findings = run(files)["train.py"]
    assert new is None
    line = TRAIN.count("\n", 0, TRAIN.index("sess = ")) + 1 + (len(files) == 1) * (READER.count("\n") + 1)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (line, 11, "unmigrated", started("reader.start_threads"))]


@pytest.mark.parametrize("call, closed", [
    ("feeder.start_in_session(sess, logdir)", False),  # stored on self, then a thread starts
    ("feeder.close(sess)", True),  # stored, no thread
    ("reader.start_threads(None, sess)", True),  # n_threads: not given to the threads
])
def test_which_methods_keep_the_session_for_their_threads(call: str, closed: bool) -> None:
    main = demo("from wavenet.audio_reader import Feeder", "feeder, reader, logdir", call, "logdir")
    new, findings = run({"wavenet/audio_reader.py": READER, "main.py": main})["main.py"]
    assert (new is not None) == closed
    assert [f.status for f in findings] == ["migrated" if closed else "unmigrated"]


def test_a_path_or_string_join_is_no_join_of_the_threads() -> None:
    source = ('import os\nimport threading\n\n\n'
              'def start_loaders(sess, data_dir):\n'
              '    files = [os.path.join(data_dir, name) for name in os.listdir(data_dir)]\n'
              '    print(", ".join(files))\n'
              '    threading.Thread(target=load, args=(sess, files)).start()\n')
    assert thread_function_facts("loaders.py", source) == {"npu010-threads:loaders.start_loaders#0:sess"}
    joined = source + "    coord.join()\n"
    assert thread_function_facts("loaders.py", joined) == set()


#: keithito/tacotron's ``datasets/datafeeder.py``: the feeder is a Thread subclass whose run()
#: feeds the queue through the session it is handed in ``start_in_session``.
DATAFEEDER = '''import threading

import tensorflow as tf


class DataFeeder(threading.Thread):
    def __init__(self, coordinator, metadata_filename, hparams):
        super(DataFeeder, self).__init__()
        self._coord = coordinator
        self._placeholders = [tf.placeholder(tf.int32, [None, None], 'inputs')]
        self._enqueue_op = tf.FIFOQueue(8, [tf.int32]).enqueue(self._placeholders)

    def start_in_session(self, session):
        self._session = session
        self.start()

    def run(self):
        while not self._coord.should_stop():
            self._session.run(self._enqueue_op, feed_dict={})


class Feeder(threading.Thread):
    def __init__(self, sess, enqueue_op):
        super(Feeder, self).__init__()
        self._session = sess
        self._enqueue_op = enqueue_op

    def run(self):
        while True:
            self._session.run(self._enqueue_op)


def start_feeder(sess, enqueue_op):
    feeder = Feeder(sess, enqueue_op)
    feeder.daemon = True
    feeder.start()
'''
TACOTRON_TRAIN = '''import tensorflow as tf
from datasets.datafeeder import DataFeeder, Feeder, start_feeder


def train(log_dir, args):
    coord = tf.train.Coordinator()
    feeder = DataFeeder(coord, args.input, args.hparams)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    {start}
    for step in range(args.steps):
        sess.run("train_op")
    print("done")
'''


def test_the_facts_name_thread_subclasses_and_their_starting_methods() -> None:
    assert thread_function_facts("datasets/datafeeder.py", DATAFEEDER) == {
        "npu010-thread-classes:datasets.datafeeder.DataFeeder",
        "npu010-thread-classes:datasets.datafeeder.Feeder",
        "npu010-thread-methods:datasets.datafeeder.DataFeeder.start_in_session#0:session",
        "npu010-threads:datasets.datafeeder.start_feeder#0:sess",
        "npu010-threads:datasets.datafeeder.start_feeder#1:enqueue_op"}  # whatever the thread gets


@pytest.mark.parametrize("start, callee", [
    ("feeder.start_in_session(sess)", "feeder.start_in_session"),  # stored on self, self.start()
    ("Feeder(sess, 'enqueue').start()", "Feeder"),  # the session goes to the thread's __init__
    ("start_feeder(sess, 'enqueue')", "start_feeder"),  # a function that starts such a thread
])
@pytest.mark.parametrize("same_file", [False, True], ids=["another-file", "same-file"])
def test_a_session_a_thread_subclass_runs_is_kept_open_and_reported(start: str, callee: str,
                                                                   same_file: bool) -> None:
    """Closed after the training loop, the session died under the feeder's live thread."""
    train = TACOTRON_TRAIN.replace("{start}", start)
    if same_file:
        files = {"train.py": DATAFEEDER + "\n\n" + train.replace(
            "import tensorflow as tf\nfrom datasets.datafeeder import DataFeeder, Feeder, start_feeder\n", "")}
    else:
        files = {"datasets/__init__.py": "", "datasets/datafeeder.py": DATAFEEDER, "train.py": train}
    new, findings = run(files)["train.py"]
    assert new is None
    assert [f.status for f in findings] == ["unmigrated"]
    why = "threads that Feeder() starts" if same_file and callee == "start_feeder" else f"threads that {callee}() starts"
    assert findings[0].message.startswith(CLOSE) and why in findings[0].message
