"""A Python 2 file (print statements: ``ast`` cannot read it) counts the API sites of the code
as the run writes it, as a Python 3 file does (``docs/reports.md``: a use a rule rewrote away,
``tf.nn.dropout``, is no API site), so the first run counts what a rerun over the branch counts."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import cli
from support.git import make_repo

BODY = ("import tensorflow as tf\n\n"
        "x = tf.placeholder(tf.float32, [None, 3])\n"
        "y = tf.nn.dropout(x, keep_prob=0.9)\n"
        "cost = tf.reduce_sum(y)\n"
        "step = tf.train.AdamOptimizer(0.01).minimize(cost)\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n")
PY2 = BODY + "    print 'cost', sess.run(cost, feed_dict={x: [[1, 2, 3]]})\n"
PY3 = BODY + "    print('cost', sess.run(cost, feed_dict={x: [[1, 2, 3]]}))\n"


def sites(record: dict) -> dict[str, list]:
    return {repo["repo"]: sorted((row["api"], row["status"], row["sites"]) for row in repo["api_sites"])
            for repo in record["repos"]}


def test_a_python2_file_counts_no_use_a_rule_rewrote_away(tmp_path: Path) -> None:
    make_repo(tmp_path / "py2", {"train.py": PY2})
    make_repo(tmp_path / "py3", {"train.py": PY3})
    (tmp_path / "repos.txt").write_text("py2\npy3\n", encoding="utf-8")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--workspace", "ws", "--no-progress",
        "--jobs", "1", cwd=tmp_path, expect=0)
    record = json.loads((tmp_path / "rep" / "run.json").read_text(encoding="utf-8"))
    assert {f["rule_id"] for repo in record["repos"] for f in repo["findings"]
            if f["status"] == "migrated"} >= {"NPU004"}  # the dropout was rewritten away
    counted = sites(record)
    assert counted["py2"] == counted["py3"]
    assert record["repos"][0]["api_readiness"] == record["repos"][1]["api_readiness"]
