"""Per-file work is bounded in tokens, not only bytes: a 1 MB file of 250,000 statements is one
clear NPU000 finding, and the worker that meets it stays under 300 MB (real repository, the
real CLI, the peak memory of its processes as the kernel counts it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.git import make_repo

#: A generated table of constants, as code generators and checkpoint converters write them.
HEAD = "import tensorflow as tf\n\nsess = tf.Session()\n"
STATEMENTS = 250_000
GOOD = "import tensorflow as tf\n\n\ndef head(x):\n    return tf.nn.dropout(x, 0.5)\n"
MEASURED = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def test_a_file_of_250k_statements_is_one_finding_in_bounded_memory(tmp_path: Path):
    table = HEAD + "".join(f"{'abcdefghij'[i % 10]}=1\n" for i in range(STATEMENTS))
    assert 1_000_000 <= len(table) <= 1024 * 1024  # under the byte limit: only tokens catch it
    make_repo(tmp_path / "r", {"gen/table.py": table, "model/head.py": GOOD})
    (tmp_path / "repos.txt").write_text("r\n")

    # the peak resident memory of the run's processes (its worker), measured from a fresh parent
    done = subprocess.run([sys.executable, "-c", MEASURED, sys.executable, "-m", "npu_codemod", "run",
                           "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--jobs", "1",
                           "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    code, peak_kb = map(int, done.stdout.split())

    assert code == 0, done.stderr
    assert peak_kb < 300 * 1024
    (repo,) = json.loads((tmp_path / "rep" / "run.json").read_text())["repos"]
    assert repo["status"] == "changed" and repo["files_changed"] == ["model/head.py"]
    [error] = [f for f in repo["findings"] if f["status"] == "error"]
    assert (error["path"], error["rule_id"], error["line"]) == ("gen/table.py", "NPU000", 1)
    assert error["message"] == ("file too large to migrate automatically (over 200,000 tokens and lines, "
                                f"{STATEMENTS + 4:,} lines): migrate it by hand")
