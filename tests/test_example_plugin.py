"""The acceptance test of docs/writing-rules.md: the example plugin package, pip-installed into
a fresh virtualenv next to npu-codemod, runs through the CLI and shows up in every report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.csvfiles import read_csv
from support.git import make_repo

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "npu-codemod-example-rule"
TRAIN = """import tensorflow as tf
import mylib

h = mylib.dropout(h, 0.9)
sess = mylib.make_session()
"""


def venv_env() -> dict[str, str]:
    """Entry points on (the suite turns them off); pip reuses its cache across runs."""
    env = {k: v for k, v in os.environ.items() if k not in ("NPU_CODEMOD_DISABLE_ENTRYPOINTS", "PYTHONPATH")}
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def test_the_example_plugin_installs_and_reaches_every_report(tmp_path: Path) -> None:
    venv, env = tmp_path / "venv", venv_env()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(ROOT), str(EXAMPLE), "pytest"],
                   check=True, env=env, capture_output=True)
    # The tutorial's test step: the example's own before/after tests pass in that venv.
    tests = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                            str(EXAMPLE), str(EXAMPLE / "tests")], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout
    npu_codemod = str(venv / "bin" / "npu-codemod")
    rules = json.loads(subprocess.run([npu_codemod, "rules", "--format", "json"], env=env,
                                      check=True, capture_output=True, text=True).stdout)
    mine = {row["id"]: row for row in rules if row["plugin"] == "mylib"}
    assert {(i, r["distribution"], r["version"], r["status"]) for i, r in mine.items()} == {
        ("MYL001", "npu-codemod-example-rule", "1.0.0", "ok"),
        ("MYL002", "npu-codemod-example-rule", "1.0.0", "ok")}

    make_repo(tmp_path / "trainer", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("trainer\n")
    done = subprocess.run([npu_codemod, "run", "--repos", "repos.txt", "--report-dir", "out",
                           "--no-progress"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    migrated = subprocess.run(["git", "show", "npu-codemod/sess-run-to-npu:train.py"],
                              cwd=tmp_path / "trainer", check=True, capture_output=True, text=True).stdout
    assert migrated == ("from npu_bridge.npu_init import *\nfrom npu_bridge.estimator import npu_ops\n"
                        + TRAIN.replace("mylib.dropout", "npu_ops.dropout"))

    out = tmp_path / "out"
    findings = [(r["rule_id"], r["line"], r["status"], r["message"]) for r in read_csv(out / "findings.csv")]
    assert ("MYL001", "4", "migrated", "replaced mylib.dropout with npu_ops.dropout") in findings
    assert ("MYL002", "5", "unmigrated", "mylib.make_session() creates its own tf.Session: pass "
            "config=npu_config_proto() (guide: https://wiki.example.com/npu-migration/mylib#make-session)"
            ) in findings
    summary = {r["rule_id"]: (r["migrated"], r["unmigrated"]) for r in read_csv(out / "summary.csv")}
    assert summary["MYL001"] == ("1", "0") and summary["MYL002"] == ("0", "1")
    run = json.loads((out / "run.json").read_text())
    assert {r["id"]: r["distribution"] for r in run["rules"] if r["plugin"] == "mylib"} == {
        "MYL001": "npu-codemod-example-rule", "MYL002": "npu-codemod-example-rule"}
    assert {f["rule_id"] for f in run["repos"][0]["findings"]} >= {"MYL001", "MYL002"}
    html = (out / "report.html").read_text()
    assert "MYL001" in html and "MYL002" in html and "mylib.make_session() creates" in html
