"""A ``verify`` run alone has no migration data: its repositories' merge verdict is never
``ready`` (computed from no findings and no API sites), whatever verify said; through the
CLI, on a real git repository, and re-rendered from its record."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.codemods.merge_verdict import NO_MIGRATION_DATA, MergeVerdict
from npu_codemod.orchestrator.results import RepoResult

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo


def verdict_of(record: dict) -> MergeVerdict:
    """The verdict the reports give a record of ``run.json`` (re-rendered)."""
    return RepoResult.from_dict(record).merge


def test_a_verify_run_alone_is_not_ready_whatever_verify_said(tmp_path: Path) -> None:
    make_repo(tmp_path / "trainer")  # no [tool.npu-codemod.verify] command: verify says no-command
    (tmp_path / "repos.txt").write_text("trainer\n")
    cli("verify", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws",
        "--no-progress", cwd=tmp_path, expect=1)
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    (record,) = run["repos"]
    assert (record["findings"], record["api_sites"], record["files_scanned"]) == ([], [], 0)
    assert record["verdict"] == "not-verified"
    assert record["verdict_reason"] == f"{NO_MIGRATION_DATA}; verify: no-command"
    [row] = read_csv(tmp_path / "report" / "repos.csv")
    assert (row["verdict"], row["verdict_reason"]) == ("not-verified", record["verdict_reason"])
    # an equivalent verification of nothing migrated is no merge verdict either
    proven = {**record, "verify": {**record["verify"], "verdict": "equivalent"}}
    assert verdict_of(proven).verdict == "not-verified"
    assert verdict_of(proven).reason == f"{NO_MIGRATION_DATA}; verify: equivalent"


def test_a_run_with_verify_keeps_the_verdict_of_its_sites(tmp_path: Path) -> None:
    make_repo(tmp_path / "trainer")
    (tmp_path / "repos.txt").write_text("trainer\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws",
        "--no-progress", cwd=tmp_path, expect=0)
    (record,) = json.loads((tmp_path / "report" / "run.json").read_text())["repos"]
    assert record["files_scanned"] == 1 and record["verdict"] == "ready"
    proven = {**record, "verify": {"verdict": "equivalent"}}
    assert verdict_of(proven).verdict == "ready"
    assert verdict_of({**record, "verify": {"verdict": "diverged"}}).verdict == "not-verified"
