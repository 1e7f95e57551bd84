"""``verify.csv``: one row per verified repository (``verify``, ``run --verify``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .csv_report import write_csvs

VERIFY_FIELDS = ("repo", "verdict", "reason", "evidence", "steps_compared", "max_rel_diff", "violations",
                 "original_violations", "command", "base", "commit", "original_s", "migrated_s")


def write_verify_report(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    """Only for a run that verified (its options say so)."""
    if not (run.get("options") or {}).get("verify"):
        return []
    path = report_dir / "verify.csv"
    write_csvs(run["repos"], {path: (VERIFY_FIELDS, verify_rows)})
    return [path]


def verify_rows(repo: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The row of a repository's record (none when it was not verified)."""
    record = repo.get("verify")
    if not record:
        return []
    row = {key: record.get(key) for key in VERIFY_FIELDS}
    row.update(repo=repo["repo"], violations="; ".join(record.get("violations") or ()),
               original_violations="; ".join(record.get("original_violations") or ()))
    return [row]
