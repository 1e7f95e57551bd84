"""API readiness end to end: real git repositories through the CLI, every report, the cache.

``contrib`` uses 15 API sites with a known status as the run writes it: 10 supported, 1 its rules
migrate (``tf.Session``; the ``tf.nn.dropout`` NPU004 rewrote away is no API site, its finding is),
and 4 that block (``slim`` twice, ``tf.is_finite``, ``hvd.allreduce``): 11/15. ``ready`` has 2
known sites, all ready (``tf.float32`` is unknown and left out); ``no-tf`` has none. Overall: 13/17.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from npu_codemod.codemods.api_sites import readiness
from npu_codemod.orchestrator.batch.jobs import RepoJob, ShardedRepo
from npu_codemod.orchestrator.batch.pipeline import finish_repo, process_repo, process_shard, start_repo
from npu_codemod.orchestrator.repolist import parse_repo_list

from support.cli import check_lines, cli
from support.csvfiles import read_csv as rows
from support.git import make_repo
from support.reports import Page

TRAIN = '''"""Trains the slim tower on CIFAR-10, averaging gradients with Horovod."""
import horovod.tensorflow as hvd
import tensorflow as tf
from tensorflow.contrib import slim

from model.tower import tower


def loss_fn(images, labels, keep_prob):
    logits = tf.nn.dropout(tower(images), keep_prob)
    loss = tf.losses.softmax_cross_entropy(labels, logits)
    return tf.where(tf.is_finite(loss), loss, tf.zeros_like(loss))


def train(images, labels, steps):
    features = slim.fully_connected(slim.flatten(images), 64)
    loss = loss_fn(features, labels, keep_prob=0.5)
    grads = [hvd.allreduce(g) for g in tf.gradients(loss, tf.trainable_variables())]
    with tf.Session() as sess:
        for _ in range(steps):
            sess.run(grads)
'''
TOWER = '''"""The model: two convolutions and a dense head."""
import tensorflow as tf


def tower(images):
    net = tf.layers.conv2d(images, 32, 3, activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, 2, 2)
    return tf.layers.dense(tf.layers.flatten(net), 10)
'''
READY = ("import tensorflow as tf\n\nds = tf.data.TextLineDataset('train.txt').batch(32)\n"
         "x = tf.placeholder(tf.float32)\ny = tf.nn.dropout(x, 0.5)\n")
TORCH = "import torch\n\nmodel = torch.nn.Linear(3, 1)\n"
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
#: The NPU100 findings of ``contrib``: (path, line, column, level).
BLOCKING = [("train.py", 12, 20, ""), ("train.py", 16, 15, ""), ("train.py", 16, 36, ""),
            ("train.py", 18, 13, "note")]


def make_repos(root: Path) -> None:
    make_repo(root / "contrib", {"train.py": TRAIN, "model/tower.py": TOWER})
    make_repo(root / "ready", {"train.py": READY})
    make_repo(root / "no-tf", {"train.py": TORCH})
    (root / "repos.txt").write_text("contrib\nready\nno-tf\n", encoding="utf-8")


def run(root: Path, report: str) -> tuple[Path, str]:
    done = cli("run", "--repos", "repos.txt", "--report-dir", report, "--workspace", "ws",
               "--no-progress", "--jobs", "1", cwd=root, expect=0)
    return root / report, done.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path, str]:
    root = tmp_path_factory.mktemp("readiness")
    make_repos(root)
    first, first_err = run(root, "first")
    again, again_err = run(root, "again")  # unchanged files come from the result cache
    return first, first_err, again, again_err


def test_repos_csv_has_each_repositorys_readiness(runs) -> None:
    first = runs[0]
    table = rows(first / "repos.csv")
    assert list(table[0]) == ["repo", "status", "branch", "commit", "pr_url", "error", "files_skipped",
                              "api_readiness", "verdict", "migrated", "compliant", "left",
                              "not_needed", "errors", "verdict_reason", "api_unresolved"]
    assert [(row["repo"], row["api_readiness"]) for row in table] == [
        ("contrib", "0.7333"), ("ready", "1.0000"), ("no-tf", "")]


def test_run_json_has_the_counts_per_repository_and_overall(runs) -> None:
    record = json.loads((runs[0] / "run.json").read_text(encoding="utf-8"))
    by_repo = {repo["repo"]: repo for repo in record["repos"]}
    readiness_of = [by_repo[name]["api_readiness"] for name in ("contrib", "ready", "no-tf")]
    assert readiness_of == [pytest.approx(11 / 15), 1.0, None]
    assert record["api_readiness"] == pytest.approx(13 / 17)
    assert by_repo["contrib"]["api_sites"] == [
        {"api": "", "status": "supported", "covered": False, "sites": 10},
        {"api": "hvd.allreduce", "status": "under-analysis", "covered": False, "sites": 1},
        {"api": "tf.Session", "status": "trains-after-migration", "covered": True, "sites": 1},
        {"api": "tf.contrib.slim", "status": "deprecated", "covered": False, "sites": 2},
        {"api": "tf.is_finite", "status": "unsupported", "covered": False, "sites": 1}]
    assert {"api": "", "status": "unknown", "covered": False, "sites": 1} in \
        by_repo["ready"]["api_sites"]  # tf.float32


def test_npu100_rows_are_ordinary_findings_and_the_csv_headers_stay(runs) -> None:
    first = runs[0]
    assert (first / "findings.csv").read_text().splitlines()[0] == \
        "repo,path,line,column,rule_id,rule_name,status,message"
    assert (first / "summary.csv").read_text().splitlines()[0] == \
        "repo,rule_id,migrated,unmigrated,error,compliant,not-needed"  # the states added since: last
    audit = [row for row in rows(first / "findings.csv") if row["rule_id"] == "NPU100"]
    assert [(row["repo"], row["path"], int(row["line"]), int(row["column"])) for row in audit] == \
        [("contrib", *site[:3]) for site in BLOCKING]
    # summary.csv counts sites per rule: the two findings on line 16 are one site of NPU100
    assert {"repo": "contrib", "rule_id": "NPU100", "migrated": "0", "unmigrated": "3", "error": "0",
            "compliant": "0", "not-needed": "0"} \
        in rows(first / "summary.csv")


def test_sarif_levels_of_npu100(runs) -> None:
    log = json.loads((runs[0] / "findings.sarif").read_text(encoding="utf-8"))
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))
    results = [(r["locations"][0]["physicalLocation"]["region"]["startLine"], r["level"])
               for run in log["runs"] for r in run["results"] if r["ruleId"] == "NPU100"]
    assert results == [(12, "warning"), (16, "warning"), (16, "warning"), (18, "note")]


def test_stderr_summary_shows_readiness_per_repo_and_overall(runs) -> None:
    lines = runs[1].splitlines()
    header = next(line for line in lines if line.startswith("repo "))
    assert header.split()[-1] == "api"
    table = {line.split()[0]: line.split()[-1] for line in lines[lines.index(header) + 1:][:3]}
    assert table == {"contrib": "73%", "ready": "100%", "no-tf": "-"}
    assert "; API readiness 76.5% (4 of 17 API use sites blocking)" in lines[-2]


def test_the_page_says_what_is_left_first(runs) -> None:
    html = (runs[0] / "report.html").read_text(encoding="utf-8")
    page = Page(html)
    assert html.index('id="what-is-left"') < html.index('id="overview"') < html.index("<svg")
    assert page.text_by_id["api-readiness"].strip() == "76.5%"
    assert page.text_by_id["blocking-sites"].strip() == "4"
    assert page.text_by_id["blocking-count"].strip() == "3"
    readiness_rows = page.text_by_id["readiness"].split("\n")
    assert any(row.startswith("contrib") and "73.3%" in row for row in readiness_rows)
    blocking = [attrs["data-api"] for attrs in page.tags("tr") if "data-api" in attrs]
    assert blocking == ["tf.contrib.slim", "tf.is_finite", "hvd.allreduce"]  # most sites first
    row = re.search(r'<tr data-api="tf.contrib.slim">(.*?)</tr>', html).group(1)
    cells = [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
    assert cells == ["tf.contrib.slim", "deprecated", "2", "1",
                     "deprecated in TF 1.15: replace it with its public TF 1.15 equivalent before "
                     "migrating, or the migration may fail"]


def test_a_rerun_from_the_cache_counts_the_same(runs) -> None:
    first, _, again, _ = runs
    cached = json.loads((again / "run.json").read_text(encoding="utf-8"))
    assert sum(repo["files_cached"] for repo in cached["repos"]) == 3
    before = json.loads((first / "run.json").read_text(encoding="utf-8"))
    assert [repo["api_sites"] for repo in cached["repos"]] == [repo["api_sites"] for repo in before["repos"]]
    assert rows(again / "repos.csv")[0]["api_readiness"] == "0.7333"


def test_check_lists_the_npu100_sites(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "contrib", {"train.py": TRAIN, "model/tower.py": TOWER})
    lines = check_lines(repo, ".", expect=1)
    audit = [line.split(" NPU100 ")[0] for line in lines if " NPU100 " in line]
    assert audit == [f"{path}:{line}:{column + 1}:" for path, line, column, _ in BLOCKING]


def test_a_repository_split_into_shards_counts_as_one(tmp_path: Path) -> None:
    files = {f"models/m{n:02}.py": TOWER for n in range(40)} | {"train.py": TRAIN}
    make_repo(tmp_path / "big", files)
    (entry,) = parse_repo_list("big\n", tmp_path)
    job = RepoJob(entry=entry, mode="scan", workspace=str(tmp_path / "ws"), cache=False)
    planned = start_repo(job, workers=3)
    assert isinstance(planned, ShardedRepo) and len(planned.shards) == 3
    joined = finish_repo(planned.plan, [process_shard(planned.plan, shard) for shard in planned.shards])
    whole = process_repo(job)
    assert joined.api_sites == whole.api_sites
    assert readiness(whole.api_sites) == (40 * 5 + 6) / (40 * 5 + 10)
