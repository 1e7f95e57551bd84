"""How workers start: forked from a single-threaded parent (everything it imported comes along),
spawned beside other threads; either way each sees the end of its pipe when the pool closes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.cli import cli
from support.git import make_repo

SCRIPT = """
import json, sys, threading
sys.path.insert(0, {tests!r})
from support import pool_tasks
import npu_codemod.orchestrator.batch.runner  # imported by the parent only
from npu_codemod.orchestrator.batch.process_pool import ProcessPool

def probe():
    with ProcessPool(2) as pool:
        pool.submit(1, pool_tasks.loaded, "npu_codemod.orchestrator.batch.runner")
        pool.submit(2, pool_tasks.loaded, "npu_codemod.orchestrator.batch.runner")
        outcomes = dict(pool.wait(None))
        while len(outcomes) < 2:
            outcomes.update(pool.wait(None))
        workers = [w.process for w in pool._idle]
    # closed: every idle worker saw the end of its pipe (none holds a copy of another's)
    return [outcomes[1].value, outcomes[2].value, [w.exitcode for w in workers]]

alone = probe()
stop = threading.Event()
threading.Thread(target=stop.wait, daemon=True).start()
beside_a_thread = probe()
stop.set()
print(json.dumps([alone, beside_a_thread]))
"""


def test_workers_fork_when_alone_spawn_beside_threads_and_all_exit_on_close() -> None:
    tests = str(Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=tests)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    alone, beside_a_thread = json.loads(done.stdout)
    assert alone == [True, True, [0, 0]]  # forked: the parent's modules are there
    assert beside_a_thread == [False, False, [0, 0]]  # spawned: a fresh interpreter


PROBE_PLUGIN = '''
import os, pathlib, sys
from npu_codemod.plugins.hookspecs import hookimpl

@hookimpl
def npu_codemod_analyze_file(path, text):
    # Only the parent imports the CLI: a worker that has it was forked from it.
    forked = "npu_codemod.orchestrator.cli" in sys.modules
    pathlib.Path(os.environ["PROBE_OUT"], str(os.getpid())).write_text(str(forked))
'''


def test_the_cli_forks_its_workers(tmp_path: Path, monkeypatch) -> None:

    for name in ("a", "b", "c"):
        make_repo(tmp_path / name, {"train.py": "import tensorflow as tf\nsess = tf.Session()\n"})
    (tmp_path / "repos.txt").write_text("a\nb\nc\n")
    (tmp_path / "probe.py").write_text(PROBE_PLUGIN)
    (tmp_path / "out").mkdir()
    monkeypatch.setenv("PROBE_OUT", str(tmp_path / "out"))
    done = cli("scan", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--plugin", "probe.py",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answers = {path.read_text() for path in (tmp_path / "out").iterdir()}
    assert answers == {"True"}
