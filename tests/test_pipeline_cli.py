"""End to end: ``npu-codemod run/scan`` on real git repos, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import cli
from support.csvfiles import read_csv
from support.git import commits_on, git, make_repo, show
from support.repo_state import snapshot

BRANCH = "npu-codemod/sess-run-to-npu"

TRAIN = """\
import tensorflow as tf

dataset = tf.data.TFRecordDataset(files)
dataset = dataset.batch(32)
h = tf.nn.dropout(h, rate=0.1)
"""
TRAIN_MIGRATED = """\
from npu_bridge.npu_init import *
import tensorflow as tf

dataset = tf.data.TFRecordDataset(files)
dataset = dataset.batch(32, drop_remainder=True)
h = npu_ops.dropout(h, keep_prob=1 - 0.1)
"""


def sites(report_dir: Path) -> set[tuple[str, str, str]]:
    return {(row["repo"], row["path"], row["rule_id"]) for row in read_csv(report_dir / "findings.csv")}


@pytest.fixture
def two_repos(tmp_path: Path) -> Path:
    make_repo(tmp_path / "alpha", {"train.py": TRAIN, "README.md": "alpha\n"})
    make_repo(tmp_path / "beta", {"model/net.py": TRAIN.replace("32", "64"), "util.py": "x = 1\n"})
    (tmp_path / "beta" / "util.py").write_text("x = 2  # uncommitted edit\n")
    (tmp_path / "beta" / "notes.txt").write_text("untracked\n")
    repos = tmp_path / "repos.txt"
    repos.write_text("# two repos\nalpha\nbeta   HEAD\n\n")
    return repos


def test_run_commits_on_a_branch_and_leaves_the_checkout_alone(two_repos: Path, tmp_path: Path):
    before = {name: snapshot(tmp_path / name) for name in ("alpha", "beta")}
    result = cli("run", "--repos", str(two_repos), "--report-dir", "rep", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for name in ("alpha", "beta"):
        repo = tmp_path / name
        assert snapshot(repo) == before[name]
        assert len(commits_on(repo, BRANCH)) == 2  # the initial commit + exactly one of ours
        assert git(repo, "rev-parse", f"{BRANCH}~1") == git(repo, "rev-parse", "HEAD")
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert show(tmp_path / "alpha", BRANCH, "train.py").decode() == TRAIN_MIGRATED
    assert (tmp_path / "beta" / "util.py").read_text() == "x = 2  # uncommitted edit\n"
    message = git(tmp_path / "alpha", "log", "-1", "--format=%B", BRANCH)
    assert "NPU002 dataset-batch-drop-remainder: 1" in message
    assert "NPU004 nn-dropout: 1" in message
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [r["status"] for r in run["repos"]] == ["changed", "changed"]
    assert run["repos"][0]["files_changed"] == ["train.py"]
    assert run["repos"][0]["commit"] == git(tmp_path / "alpha", "rev-parse", BRANCH)


def test_second_run_adds_no_commit_and_reports_sites_as_migrated(two_repos: Path, tmp_path: Path):
    first = cli("run", "--repos", str(two_repos), "--report-dir", "one", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    tips = {name: git(tmp_path / name, "rev-parse", BRANCH) for name in ("alpha", "beta")}
    second = cli("run", "--repos", str(two_repos), "--report-dir", "two", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert {name: git(tmp_path / name, "rev-parse", BRANCH) for name in tips} == tips
    rows = read_csv(tmp_path / "two" / "findings.csv")
    assert rows and {row["status"] for row in rows} == {"migrated"}
    assert sites(tmp_path / "two") == sites(tmp_path / "one")
    run = json.loads((tmp_path / "two" / "run.json").read_text())
    assert [r["status"] for r in run["repos"]] == ["unchanged", "unchanged"]


def test_scan_changes_nothing_and_lists_the_same_sites(two_repos: Path, tmp_path: Path):
    before = {name: (snapshot(tmp_path / name), git(tmp_path / name, "show-ref"))
              for name in ("alpha", "beta")}
    scan = cli("scan", "--repos", str(two_repos), "--report-dir", "scan", cwd=tmp_path)
    assert scan.returncode == 0, scan.stderr
    assert {name: (snapshot(tmp_path / name), git(tmp_path / name, "show-ref"))
            for name in before} == before
    run = cli("run", "--repos", str(two_repos), "--report-dir", "run", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    scanned = read_csv(tmp_path / "scan" / "findings.csv")
    ran = read_csv(tmp_path / "run" / "findings.csv")
    assert scanned == ran  # same sites, same original positions, same messages


def test_encodings_and_line_endings_survive(tmp_path: Path):
    crlf = TRAIN.replace("\n", "\r\n").encode()
    latin1 = ("# -*- coding: latin-1 -*-\n# Auteur: Jérôme\n" + TRAIN).encode("latin-1")
    no_newline = TRAIN.rstrip("\n").encode()
    make_repo(tmp_path / "r", {"crlf.py": crlf, "latin1.py": latin1, "nonl.py": no_newline})
    (tmp_path / "repos.txt").write_text("r\n")
    result = cli("run", "--repos", "repos.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    repo = tmp_path / "r"
    new_crlf = show(repo, BRANCH, "crlf.py")
    assert new_crlf == TRAIN_MIGRATED.replace("\n", "\r\n").encode()
    new_latin1 = show(repo, BRANCH, "latin1.py")
    assert "Jérôme".encode("latin-1") in new_latin1
    assert new_latin1.decode("latin-1").count("drop_remainder=True") == 1
    new_nonl = show(repo, BRANCH, "nonl.py")
    assert new_nonl == TRAIN_MIGRATED.rstrip("\n").encode()


def test_bad_entries_fail_alone_with_one_line_each(tmp_path: Path):
    make_repo(tmp_path / "good", {"train.py": TRAIN})
    (tmp_path / "plain").mkdir()
    (tmp_path / "repos.txt").write_text("good\nmissing\nplain\ngood main extra\n")
    result = cli("run", "--repos", "repos.txt", "--report-dir", "rep", cwd=tmp_path)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("npu-codemod: ")
              and "reports in" not in line]
    assert any("missing" in line and "no such path" in line for line in errors)
    assert any("plain" in line and "not a git repository" in line for line in errors)
    assert any("repos.txt:4" in line and "malformed" in line for line in errors)
    assert "Traceback" not in result.stderr
    run = json.loads((tmp_path / "rep" / "run.json").read_text())
    assert [r["status"] for r in run["repos"]] == ["changed", "failed", "failed", "failed"]
    assert len(commits_on(tmp_path / "good", BRANCH)) == 2


@pytest.mark.parametrize("args, message", [
    (["run", "--repos", "nope.txt"], "cannot read repo list 'nope.txt'"),
    (["run", "--repos", "repos.txt", "--rules", "NPU999"], "unknown rule id(s): NPU999"),
    (["run", "--repos", "folder"], "cannot read repo list 'folder': Is a directory"),
    (["run", "--repos", "repos.txt", "--report-dir", "repos.txt", "--no-progress"], "cannot create report dir"),
    (["run", "--repos", "repos.txt", "--only-failed", "folder"], "cannot read 'folder'"),
    (["run", "--repos", "repos.txt", "--report-dir", ".", "--no-progress"],
     "cannot write reports in '.': Is a directory: run.json"),
    (["report", "other.json"], "other.json: not a run record (no 'repos' list)"),
    (["report", "binary.json"], "binary.json: not a run record (not UTF-8 text)"),
    (["status", "binary.json"], "binary.json: not a run record (not UTF-8 text)"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path: Path, args, message):
    (tmp_path / "repos.txt").write_text("")
    (tmp_path / "folder").mkdir()
    (tmp_path / "run.json").mkdir()  # a folder where a report file goes
    (tmp_path / "other.json").write_text('{"name": "not a run"}')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00{")
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"npu-codemod: error: {message}"
                                                  + result.stderr.strip().split(message, 1)[1]]


def test_dry_run_writes_a_patch_and_commits_nothing(two_repos: Path, tmp_path: Path):
    result = cli("run", "--repos", str(two_repos), "--dry-run", "--report-dir", "rep", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for name in ("alpha", "beta"):
        assert git(tmp_path / name, "branch", "--list", BRANCH) == ""
    patches = sorted((tmp_path / "rep" / "patches").iterdir())
    assert len(patches) == 2
    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", str(tmp_path / "alpha"), str(check))
    git(check, "apply", str(patches[0]))
    assert (check / "train.py").read_text() == TRAIN_MIGRATED


def test_repo_list_from_stdin_and_rules_option(tmp_path: Path):
    make_repo(tmp_path / "alpha", {"train.py": TRAIN})
    result = cli("run", "--repos", "-", "--rules", "NPU004", "--report-dir", "rep", cwd=tmp_path,
                 stdin="alpha\n")
    assert result.returncode == 0, result.stderr
    migrated = show(tmp_path / "alpha", BRANCH, "train.py").decode()
    assert "npu_ops.dropout" in migrated and "drop_remainder" not in migrated
    assert migrated.startswith("from npu_bridge.npu_init import *\n")  # NPU001 comes along


def test_rules_lists_builtin_rules_as_json(tmp_path: Path):
    result = cli("rules", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    ids = [row["id"] for row in json.loads(result.stdout)]
    assert {"NPU001", "NPU002", "NPU004"} <= set(ids)


def test_report_rerenders_from_run_json(two_repos: Path, tmp_path: Path):
    assert cli("run", "--repos", str(two_repos), "--report-dir", "rep", cwd=tmp_path).returncode == 0
    again = cli("report", str(tmp_path / "rep" / "run.json"), "--report-dir", "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    for name in ("findings.csv", "summary.csv"):
        assert (tmp_path / "again" / name).read_text() == (tmp_path / "rep" / name).read_text()
    # A report writer plugin that cannot load is said, as run and check say it.
    (tmp_path / "writer.py").write_text("import no_such_library\n")
    broken = cli("report", str(tmp_path / "rep" / "run.json"), "--plugin", "writer.py",
                 "--report-dir", "again", cwd=tmp_path)
    assert broken.returncode == 0, broken.stderr
    assert "npu-codemod: warning: plugin writer.py is broken: import failed" in broken.stderr
    # One that is not there at all is a typo: a usage error.
    missing = cli("report", str(tmp_path / "rep" / "run.json"), "--plugin", "no_such_writer",
                  "--report-dir", "again", cwd=tmp_path)
    assert missing.returncode == 2 and "no such module" in missing.stderr


def test_second_run_reports_the_first_runs_rows_exactly(two_repos: Path, tmp_path: Path):
    """Lines and columns are the base's (as in the first run and in scan), not the branch's."""
    assert cli("run", "--repos", str(two_repos), "--report-dir", "one", cwd=tmp_path).returncode == 0
    assert cli("run", "--repos", str(two_repos), "--report-dir", "two", cwd=tmp_path).returncode == 0
    assert cli("scan", "--repos", str(two_repos), "--report-dir", "scan", cwd=tmp_path).returncode == 0
    first = read_csv(tmp_path / "one" / "findings.csv")
    assert first == read_csv(tmp_path / "two" / "findings.csv") == read_csv(tmp_path / "scan" / "findings.csv")
    dry = cli("run", "--repos", str(two_repos), "--dry-run", "--report-dir", "dry", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    # The branches already hold everything: nothing changes, and the patches are their content.
    assert [r["status"] for r in json.loads((tmp_path / "dry" / "run.json").read_text())["repos"]] == \
        ["unchanged", "unchanged"]
    assert len(list((tmp_path / "dry" / "patches").iterdir())) == 2


def test_rerun_with_more_rules_adds_one_commit_on_the_branch(two_repos: Path, tmp_path: Path):
    alpha = tmp_path / "alpha"
    first = cli("run", "--repos", str(two_repos), "--rules", "NPU004", "--report-dir", "one", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    tip = git(alpha, "rev-parse", BRANCH)
    second = cli("run", "--repos", str(two_repos), "--report-dir", "two", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert git(alpha, "rev-parse", f"{BRANCH}~1") == tip  # a fast-forward, no duplicate
    assert show(alpha, BRANCH, "train.py") == TRAIN_MIGRATED.encode()


def test_dry_run_patch_applies_to_the_exact_bytes_of_every_kind_of_file(tmp_path: Path):
    files = {"crlf.py": TRAIN.replace("\n", "\r\n").encode(), "bom.py": b"\xef\xbb\xbf" + TRAIN.encode(),
             "nonl.py": TRAIN.rstrip("\n").encode(), "ff.py": TRAIN.replace("h = ", "\x0ch = ").encode(),
             "latin.py": ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + TRAIN).encode("latin-1"),
             "gbk.py": ("# coding: gbk\n# 数据\n" + TRAIN).encode("gbk")}
    make_repo(tmp_path / "r", files)
    (tmp_path / "repos.txt").write_text("r\n")
    dry = cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "dry", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    git(tmp_path, "clone", "-q", str(tmp_path / "r"), str(tmp_path / "c"))
    (patch,) = (tmp_path / "dry" / "patches").iterdir()
    git(tmp_path / "c", "apply", str(patch))
    assert cli("run", "--repos", "repos.txt", "--report-dir", "run", cwd=tmp_path).returncode == 0
    for name in files:
        assert (tmp_path / "c" / name).read_bytes() == show(tmp_path / "r", BRANCH, name), name
