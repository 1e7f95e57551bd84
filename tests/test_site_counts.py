"""Sites counted once each, with one "left" figure everywhere: through the CLI, on a real git
repository. The import line a rewrite adds is no site; two rules on one line are one site; a
site already in NPU form is ``compliant``, not ``migrated`` (and not "Applied"); a TPU-only
call in a branch the migration switched off is ``not-needed``; a rerun over the migrated
branch reports the same sites per rule."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from support.cli import cli, repo_record
from support.csvfiles import read_csv
from support.git import git, make_repo
from support.tpu_towers import FILES

BRANCH = "npu-codemod/sess-run-to-npu"


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("sites")
    make_repo(root / "towers", FILES)
    (root / "repos.txt").write_text("towers\n")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", cwd=root, expect=0)
    return root, done.stderr


def _states(record: dict) -> set[tuple[str, int, str, str]]:
    return {(f["path"], f["line"], f["rule_id"], f["status"]) for f in record["findings"]}


def test_each_site_is_counted_once_in_its_state(first: tuple[Path, str]) -> None:
    root, _ = first
    record = repo_record(root / "one")
    assert _states(record) == {
        ("inputs.py", 7, "NPU002", "compliant"),  # drop_remainder was there already
        ("model.py", 10, "NPU012", "not-needed"),  # under if params["use_tpu"]:
        ("towers.py", 15, "NPU007", "migrated"), ("towers.py", 15, "NPU008", "migrated"),
        ("train.py", 8, "NPU011", "migrated"), ("train.py", 8, "NPU012", "migrated"),
        ("train.py", 13, "NPU012", "unmigrated")}  # no NPU001: the import line is no site
    # one site per line: the session NPU007 and NPU008 configure, the estimator NPU011 and NPU012 do
    assert record["sites"] == {"migrated": 2, "compliant": 1, "left": 1, "not_needed": 1, "errors": 0}
    assert record["verdict"] == "needs-work"
    assert record["verdict_reason"] == "1 site(s) left: 1 to change (NPU012 1)"
    dead = next(f for f in record["findings"] if f["status"] == "not-needed")
    assert dead["message"].endswith("(not needed: it is under if params[\"use_tpu\"]:, which "
                                    "TPUEstimator sets False once NPU012 switched use_tpu off)")


def test_the_commit_lists_only_the_sites_rules_rewrote(first: tuple[Path, str]) -> None:
    root, _ = first
    message = git(root / "towers", "log", "-1", "--format=%B", BRANCH)
    assert re.findall(r"^- (NPU\d+) [\w-]+: (\d+)$", message, re.M) == [
        ("NPU007", "1"), ("NPU008", "1"), ("NPU011", "1"), ("NPU012", "1")]  # no NPU001, no NPU002
    assert "1 site(s) still need a person" in message


def test_left_is_one_figure_in_the_terminal_page_csv_and_run_json(first: tuple[Path, str]) -> None:
    root, stderr = first
    totals = next(line for line in stderr.splitlines() if line.startswith("1 repos:"))
    assert "sites migrated 2, compliant 1, left 1, not needed 1, errors 0" in totals
    row = re.search(r"^towers\s+changed\s+needs-work\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", stderr, re.M)
    assert row is not None and row.groups() == ("2", "2", "1", "1", "0")  # files, migr., compl., left, err
    [csv_row] = read_csv(root / "one" / "repos.csv")
    assert (csv_row["verdict"], csv_row["left"], csv_row["compliant"], csv_row["not_needed"]) == \
        ("needs-work", "1", "1", "1")
    page = (root / "one" / "report.html").read_text()
    assert re.search(r'id="sites-left">1<', page) and re.search(r'id="verdict-needs-work">1<', page)
    run = json.loads((root / "one" / "run.json").read_text())
    assert run["repos"][0]["sites"]["left"] == run["sites"]["left"] == 1
    assert run["verdicts"] == {"ready": 0, "needs-work": 1, "blocked": 0, "not-verified": 0}
    packs = {pack["name"]: (pack["on"], pack["enable"]) for pack in run["packs"]}
    assert packs["estimator"] == (True, "") and packs["distributed"] == (False, "--rules default,distributed")
    assert "merge verdicts: 1 needs-work" in stderr


def test_a_rerun_over_the_migrated_branch_reports_the_same_sites_per_rule(first: tuple[Path, str]) -> None:
    root, _ = first
    (root / "again.txt").write_text(f"towers {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress",
        cwd=root, expect=0)
    before, after = repo_record(root / "one"), repo_record(root / "two")

    def per_rule(record: dict) -> Counter:
        done = {"migrated": "done", "compliant": "done"}
        return Counter((f["rule_id"], done.get(f["status"], f["status"])) for f in record["findings"])

    assert per_rule(after) == per_rule(before)
    assert {f["status"] for f in after["findings"]} == {"compliant", "unmigrated", "not-needed"}
    assert after["sites"]["left"] == before["sites"]["left"] == 1
    assert not [f for f in after["findings"] if f["rule_id"] == "NPU100"]  # none on the tool's lines
    assert after["files_changed"] == [] and after["verdict"] == before["verdict"]


def _older(record: dict) -> dict:
    """``record`` as a run.json written before sites were settled: each rewritten file's
    npu_init import as a ``migrated`` row, a site already in NPU form as ``migrated`` too."""
    older = json.loads(json.dumps(record))
    for repo in older["repos"]:
        imports = [{**repo["findings"][0], "path": path, "line": 1, "column": 0, "rule_id": "NPU001",
                    "rule_name": "npu-init-import", "status": "migrated", "snippet": "",
                    "message": "added 'from npu_bridge.npu_init import *'"} for path in repo["files_changed"]]
        findings = [{**f, "status": "migrated"} if f["status"] == "compliant" else f
                    for f in repo["findings"]]
        repo["findings"] = imports + findings
        for key in ("sites", "verdict", "verdict_reason"):
            repo.pop(key, None)
    return older


def test_an_older_run_json_re_renders_to_the_same_sites(first: tuple[Path, str]) -> None:
    root, _ = first
    record = json.loads((root / "one" / "run.json").read_text())
    (root / "old").mkdir()
    (root / "old" / "run.json").write_text(json.dumps(_older(record)))
    cli("report", "old/run.json", cwd=root, expect=0)
    [now], [then] = read_csv(root / "one" / "repos.csv"), read_csv(root / "old" / "repos.csv")
    columns = ("verdict", "migrated", "compliant", "left", "not_needed")
    assert [then[key] for key in columns] == [now[key] for key in columns] == \
        ["needs-work", "2", "1", "1", "1"]
    page = (root / "old" / "report.html").read_text()
    assert re.search(r'id="sites-left">1<', page)
