"""``findings.csv`` and ``summary.csv``: the machine-readable coverage report."""

from __future__ import annotations

import csv
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from npu_codemod.codemods.findings import FINDING_FIELDS
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.run_record import RunRecord

from .atomic import atomic_open
from .summary import SUMMARY_FIELDS, Run, summary_rows

#: A CSV file's columns, and its rows for one repo.
CsvTable = tuple[Sequence[str], Callable[[RepoResult], Iterable[Mapping[str, Any]]]]


def write_csv_reports(run: Run, report_dir: Path) -> list[Path]:
    findings_path = report_dir / "findings.csv"
    summary_path = report_dir / "summary.csv"
    write_csvs(RunRecord.of(run).repos, {findings_path: (FINDING_FIELDS, finding_rows),
                                         summary_path: (SUMMARY_FIELDS, summary_rows)})
    return [findings_path, summary_path]


def finding_rows(repo: RepoResult) -> list[dict[str, Any]]:
    return [finding.to_dict() for finding in repo.findings]


def write_csvs(repos: Iterable[RepoResult], tables: Mapping[Path, CsvTable]) -> None:
    """Several CSV files from one pass over ``repos`` (a batch's are read from disk on each
    pass): each a header and its rows of every repo (keys beyond its columns left out), each
    replacing its path whole."""
    with ExitStack() as stack:
        writers = []
        for path, (fields, rows_of) in tables.items():
            stream = stack.enter_context(atomic_open(path, newline=""))
            writer = csv.DictWriter(stream, fieldnames=list(fields), extrasaction="ignore")
            writer.writeheader()
            writers.append((writer, rows_of))
        for repo in repos:
            for writer, rows_of in writers:
                writer.writerows(rows_of(repo))
