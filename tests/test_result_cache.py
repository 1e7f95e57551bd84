"""The result cache: a rerun parses only what changed, and gives exactly what parsing gives.

Parses are counted by what the run reports (``files_cached`` per repository in run.json):
every file that mentions TensorFlow is either served from the cache or parsed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.file_cache import ResultStore, cache_path
from npu_codemod.orchestrator.cli import main

from support.cli import cli
from support.git import TF_SCRIPT, commit_files, git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
FILES = {
    "train.py": TF_SCRIPT,
    "model/net.py": "import tensorflow as tf\n\ndef net(x):\n    return tf.nn.dropout(x, 0.5)\n",
    "eval.py": TF_SCRIPT.replace("range(8)", "range(16)") + "sess = tf.Session()\nsess.run(1)\n",
    "README.py": "print('no TF here')\n",  # never parsed: not counted either way
}
TF_FILES = 3
DEVICE = "import tensorflow as tf\nwith tf.device('/cpu:0'):\n    x = tf.constant(1)\n"


def run(root: Path, *args: str, command: str = "run", workspace: str = "ws") -> dict:
    """The CLI over ``root/repos.txt``; the run record, with the repos' cached counts first."""
    code = main([command, "--repos", str(root / "repos.txt"), "--workspace", str(root / workspace),
                 "--report-dir", str(root / "report"), "--no-progress", "--jobs", "1", *args])
    assert code == 0
    return json.loads((root / "report" / "run.json").read_text())


def cached(record: dict) -> list[int]:
    return [repo["files_cached"] for repo in record["repos"]]


def outcome(record: dict) -> list[dict]:
    """What a run did, but for the cached counts."""
    return [{key: value for key, value in repo.items() if key != "files_cached"}
            for repo in record["repos"]]


def fleet(root: Path, *names: str, files: dict = FILES) -> None:
    for name in names:
        make_repo(root / name, files)
    (root / "repos.txt").write_text("".join(f"{name}\n" for name in names))


def test_a_rerun_serves_every_file_from_the_cache_with_the_same_commit_and_findings(tmp_path, capsys):
    fleet(tmp_path, "a")
    first = run(tmp_path)
    findings = (tmp_path / "report" / "findings.csv").read_text()
    commits = git(tmp_path / "a", "rev-list", BRANCH)
    second = run(tmp_path)
    assert (cached(first), cached(second)) == ([0], [TF_FILES])
    assert outcome(second) == [{**outcome(first)[0], "status": "unchanged"}]
    assert (tmp_path / "report" / "findings.csv").read_text() == findings
    assert git(tmp_path / "a", "rev-list", BRANCH) == commits  # no new commit, same branch
    assert f"; {TF_FILES} file(s) from the result cache" in capsys.readouterr().err
    uncached = run(tmp_path, "--no-cache")
    assert cached(uncached) == [0] and outcome(uncached) == outcome(second)


def test_scan_and_dry_run_share_the_cache_with_run(tmp_path):
    fleet(tmp_path, "a")
    scanned = run(tmp_path, command="scan")
    dry = run(tmp_path, "--dry-run")
    assert (cached(scanned), cached(dry)) == ([0], [TF_FILES])
    assert dry["repos"][0]["patch"] == run(tmp_path, "--dry-run", "--no-cache")["repos"][0]["patch"]
    assert git(tmp_path / "a", "branch", "--list", BRANCH) == ""


def test_a_changed_file_is_the_only_one_parsed_again(tmp_path):
    fleet(tmp_path, "a")
    run(tmp_path, command="scan")
    commit_files(tmp_path / "a", {"eval.py": FILES["eval.py"] + "ds2 = tf.data.Dataset.range(2).batch(1)\n"},
                 "edit")
    record = run(tmp_path, command="scan")
    assert cached(record) == [TF_FILES - 1]
    assert outcome(record) == outcome(run(tmp_path, "--no-cache", command="scan"))


def test_the_same_file_in_two_repositories_is_parsed_once(tmp_path):
    fleet(tmp_path, "a", "fork")
    record = run(tmp_path)
    assert cached(record) == [0, TF_FILES]
    fork = record["repos"][1]
    assert {finding["repo"] for finding in fork["findings"]} == {"fork"}
    assert git(tmp_path / "a", "rev-parse", f"{BRANCH}^{{tree}}") == \
        git(tmp_path / "fork", "rev-parse", f"{BRANCH}^{{tree}}")
    assert outcome(run(tmp_path, "--no-cache", command="scan")) == outcome(run(tmp_path, command="scan"))


@pytest.mark.parametrize("change", [
    ["--config", "{root}/npu.toml"],
    ["--rules", "NPU002"],
    ["--disable-rule", "NPU010"],
])
def test_another_rule_set_or_rule_setting_is_parsed_again(tmp_path, change):
    change = [arg.format(root=tmp_path) for arg in change]
    fleet(tmp_path, "a")
    (tmp_path / "npu.toml").write_text('[tool.npu-codemod.rules.NPU007]\n'
                                       'precision_mode = "allow_mix_precision"\n')
    run(tmp_path, command="scan")
    changed = run(tmp_path, *change, command="scan")
    assert cached(changed) == [0]
    assert cached(run(tmp_path, *change, command="scan")) == [TF_FILES]
    assert outcome(changed) == outcome(run(tmp_path, *change, "--no-cache", command="scan"))


def test_a_repository_wide_fact_that_changes_has_every_file_parsed_again(tmp_path):
    fleet(tmp_path, "a")
    before = run(tmp_path, command="scan")
    commit_files(tmp_path / "a", {"placement.py": DEVICE}, "tf.device elsewhere")
    after = run(tmp_path, command="scan")
    assert cached(after) == [0]  # the other files are unchanged, but NPU008 now applies
    assert outcome(after) == outcome(run(tmp_path, "--no-cache", command="scan"))
    rules = [{f["rule_id"] for f in record["repos"][0]["findings"]} for record in (before, after)]
    assert "NPU008" in rules[1] - rules[0]


def test_no_cache_neither_reads_nor_creates_the_cache(tmp_path):
    fleet(tmp_path, "a")
    assert cached(run(tmp_path, "--no-cache")) == [0]
    assert not (tmp_path / "ws").exists()
    run(tmp_path)
    assert cached(run(tmp_path, "--no-cache")) == [0]


def test_files_with_an_error_are_never_cached(tmp_path):
    fleet(tmp_path, "a", files={**FILES, "broken.py": "import tensorflow as tf\ndef f(:\n"})
    run(tmp_path, command="scan")
    record = run(tmp_path, command="scan")
    assert cached(record) == [TF_FILES]  # broken.py is processed again
    assert [f["path"] for f in record["repos"][0]["findings"] if f["status"] == "error"] == ["broken.py"]


def test_a_sharded_repository_counts_the_cache_hits_of_every_shard(tmp_path):
    files = {f"pkg/train_{i:02}.py": TF_SCRIPT.replace("8", str(i + 1)) for i in range(20)}
    fleet(tmp_path, "mono", files=files)
    run(tmp_path, "--jobs", "2")
    record = run(tmp_path, "--jobs", "2")
    assert cached(record) == [20]
    assert outcome(record) == outcome(run(tmp_path, "--jobs", "2", "--no-cache"))


PLUGIN = '''
from npu_codemod.codemods.rule import Rule
from npu_codemod.plugins.hookspecs import hookimpl


class Batches(Rule):
    id = "MYL001"
    name = "batches"
    description = "reports every batch call"
    pattern = "trailer< '.' 'batch' >"

    def visit(self, node, capture, ctx):
        ctx.report(node, "unmigrated", "MESSAGE")


@hookimpl
def npu_codemod_rules():
    return [Batches()]
'''


def test_editing_a_third_party_rule_has_every_file_parsed_again(tmp_path):
    fleet(tmp_path, "a")
    plugin = tmp_path / "myrules.py"
    args = ("scan", "--repos", "repos.txt", "--workspace", "ws", "--report-dir", "report",
            "--no-progress", "--plugin", str(plugin))
    messages = []
    for message in ("first words", "first words", "second words"):
        plugin.write_text(PLUGIN.replace("MESSAGE", message))
        assert cli(*args, cwd=tmp_path).returncode == 0
        record = json.loads((tmp_path / "report" / "run.json").read_text())
        messages.append((cached(record), {f["message"] for f in record["repos"][0]["findings"]
                                          if f["rule_id"] == "MYL001"}))
    assert messages == [([0], {"first words"}), ([TF_FILES], {"first words"}), ([0], {"second words"})]


def test_a_corrupt_cache_is_one_warning_and_the_run_goes_on_without_it(tmp_path, capsys):
    fleet(tmp_path, "a")
    database = cache_path(str(tmp_path / "ws"))
    database.parent.mkdir(parents=True)
    database.write_bytes(b"this is not a database\n" * 100)
    record = run(tmp_path, command="scan")
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [f"npu-codemod: warning: result cache {database}: file is not a database: "
                        f"files are parsed again (delete {database.parent} to start a new cache)"]
    assert cached(record) == [0]
    assert outcome(record) == outcome(run(tmp_path, "--no-cache", command="scan"))
    assert database.read_bytes() == b"this is not a database\n" * 100  # left for the user


@pytest.mark.parametrize("occupied", ["ws", "ws/cache"])
def test_a_workspace_that_cannot_hold_the_cache_is_one_warning(tmp_path, capsys, occupied):
    """A file where the workspace or its cache folder goes (a read-only folder is the same
    failure to create, and cannot be had as root, which CI runs as)."""
    fleet(tmp_path, "a")
    if occupied == "ws/cache":
        (tmp_path / "ws").mkdir()
    (tmp_path / occupied).write_text("not a folder\n")
    record = run(tmp_path)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith(
        f"npu-codemod: warning: result cache {tmp_path / 'ws'}")
    assert record["repos"][0]["status"] == "changed" and cached(record) == [0]


def test_a_store_that_cannot_write_turns_itself_off_without_raising(tmp_path):
    path = tmp_path / "cache" / "results.sqlite3"
    store = ResultStore(path, busy_timeout=0.05)
    store.put(b"k1", b"outcome", None)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the file longer than we wait
    store.put(b"k2", b"outcome", None)
    other.execute("ROLLBACK")
    assert store.problem == f"result cache {path}: database is locked"
    assert store.get(b"k1") is None  # off for the rest of this process
    assert ResultStore(path).get(b"k1") == (b"outcome", None)


def test_the_store_keeps_only_the_newest_entries(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3", max_entries=3)
    for i in range(5):
        store.put(f"k{i}".encode(), b"v", None)
    reopened = ResultStore(tmp_path / "results.sqlite3", max_entries=3)  # evicts on opening
    assert [reopened.get(f"k{i}".encode()) is not None for i in range(5)] == [False, False, True, True, True]
