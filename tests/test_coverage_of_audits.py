"""Rules coverage leaves out both API audits' sites: NPU071 in TF 2.x code as NPU100 in TF 1.x
code (``docs/reports.md``: coverage is over the migration rules' sites; the audits' findings
count towards API readiness). The same script in TF 1.x and TF 2.x scores the same coverage."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.cli import cli
from support.git import make_repo
from support.reports import Page

#: A training pipeline NPU003/NPU064 leave alone (drop_remainder given), one dropout NPU004
#: rewrites, and one API the support list does not take (an audit site, left).
TF1 = ("import tensorflow as tf\n\n"
       "feats = tf.data.Dataset.range(32).batch(8, drop_remainder=True)\n"
       "x = tf.placeholder(tf.float32)\n"
       "y = tf.nn.dropout(x, 0.5)\n"
       "z = tf.contrib.framework.sort(y)\n"
       "with tf.Session() as sess:\n"
       "    sess.run(z)\n")
TF2 = ("import tensorflow as tf\n\n\n"
       "def same(v):\n"
       "    return v\n\n\n"
       "if __name__ == '__main__':\n"
       "    ds = tf.data.Dataset.range(32).map(lambda v: tf.py_function(same, [v], tf.int64))\n"
       "    ds = ds.batch(8, drop_remainder=True)\n"
       "    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
       "    model.compile(optimizer='adam', loss='mse')\n"
       "    model.fit(ds, epochs=1)\n")


def test_npu071_sites_are_left_out_of_rules_coverage_as_npu100s(tmp_path: Path) -> None:
    make_repo(tmp_path / "tf1", {"train.py": TF1, "requirements.txt": "tensorflow==1.15.5\n"})
    make_repo(tmp_path / "tf2", {"train.py": TF2, "requirements.txt": "tensorflow==2.6.0\n"})
    (tmp_path / "repos.txt").write_text("tf1\ntf2\n", encoding="utf-8")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--workspace", "ws", "--no-progress",
        "--jobs", "1", cwd=tmp_path, expect=0)
    record = json.loads((tmp_path / "rep" / "run.json").read_text(encoding="utf-8"))
    audits = {rule["id"] for rule in record["rules"] if rule["audits_apis"]}
    assert audits == {"NPU071", "NPU100"}
    left = {repo["repo"]: {f["rule_id"] for f in repo["findings"] if f["status"] == "unmigrated"}
            for repo in record["repos"]}
    assert left == {"tf1": {"NPU100"}, "tf2": {"NPU071"}}  # each left site is its audit's
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert Page(html).text_by_id["coverage"].strip() == "100.0%"
    for repo in ("tf1", "tf2"):  # repo, verdict, sites left, rules coverage, ...
        row = re.search(rf'<tr data-repo="{repo}">(.*?)</tr>', html).group(1)
        cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        assert cells[2:4] == ["1", "100.0%"], repo
    history = (tmp_path / "rep" / "history.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(history[-1])["coverage"] == 1.0
