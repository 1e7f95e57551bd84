"""``verify.csv``: one row per verified repository (``verify``, ``run --verify``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.run_record import RunRecord

from .csv_report import write_csvs
from .summary import Run

VERIFY_FIELDS = ("repo", "verdict", "reason", "evidence", "steps_compared", "max_rel_diff", "violations",
                 "original_violations", "command", "base", "commit", "original_s", "migrated_s")


def write_verify_report(run: Run, report_dir: Path) -> list[Path]:
    """Only for a run that verified (its options say so)."""
    record = RunRecord.of(run)
    if not record.option("verify"):
        return []
    path = report_dir / "verify.csv"
    write_csvs(record.repos, {path: (VERIFY_FIELDS, verify_rows)})
    return [path]


def verify_rows(repo: RepoResult) -> list[dict[str, Any]]:
    """The row of a repository's record (none when it was not verified)."""
    record = repo.verify
    if record is None:
        return []
    row = {key: getattr(record, key, None) for key in VERIFY_FIELDS}
    row.update(repo=repo.repo, violations="; ".join(record.violations),
               original_violations="; ".join(record.original_violations))
    return [row]
