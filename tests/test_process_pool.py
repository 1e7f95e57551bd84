"""How workers start: forked from a single-threaded parent (everything it imported comes along),
spawned beside other threads; either way each sees the end of its pipe when the pool closes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, sys, threading
sys.path.insert(0, {tests!r})
import pool_probe
import npu_codemod.orchestrator.runner  # imported by the parent only
from npu_codemod.orchestrator.process_pool import ProcessPool

def probe():
    with ProcessPool(2) as pool:
        pool.submit(1, pool_probe.loaded, "npu_codemod.orchestrator.runner")
        pool.submit(2, pool_probe.loaded, "npu_codemod.orchestrator.runner")
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
    import json

    alone, beside_a_thread = json.loads(done.stdout)
    assert alone == [True, True, [0, 0]]  # forked: the parent's modules are there
    assert beside_a_thread == [False, False, [0, 0]]  # spawned: a fresh interpreter
