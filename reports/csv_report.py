"""``findings.csv`` and ``summary.csv``: the machine-readable coverage report."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from npu_codemod.codemods.findings import FINDING_FIELDS

from .atomic import atomic_open
from .summary import SUMMARY_FIELDS, iter_findings, summary_rows


def write_csv_reports(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    findings_path = report_dir / "findings.csv"
    summary_path = report_dir / "summary.csv"
    write_csv(findings_path, FINDING_FIELDS, iter_findings(run))
    write_csv(summary_path, SUMMARY_FIELDS, summary_rows(run))
    return [findings_path, summary_path]


def write_csv(path: Path, fields: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """A header and one line per row (keys beyond ``fields`` left out), replacing ``path`` whole;
    rows are written as ``rows`` yields them."""
    with atomic_open(path, newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
