"""The built-in report formats, registered as a plugin like any third-party format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from npu_codemod.plugins.hookspecs import hookimpl


@hookimpl
def npu_codemod_write_report(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    # Imported here: every worker process loads this plugin, and none writes a report (the
    # HTML one alone would import jinja2).
    from npu_codemod.orchestrator.run_record import RunRecord

    from .csv_report import write_csv_reports
    from .history import HISTORY_FILE, append_history
    from .html_report import write_html_report
    from .json_report import write_run_json
    from .patches import write_patches
    from .pr_report import write_pr_reports
    from .sarif_report import write_sarif_report
    from .summary import Overview
    from .verify_report import write_verify_report

    record = RunRecord.of(run)  # typed once: every report but run.json reads this
    overview = Overview.of(record)  # one pass for run.json's, the history's and the page's numbers
    written = write_run_json({**run, "api_readiness": overview.readiness,  # each repo has its own
                              "sites": overview.sites.to_dict(),
                              "verdicts": dict(overview.verdict_counts)}, report_dir)
    written += write_csv_reports(record, report_dir)
    written += write_pr_reports(record, report_dir)
    written += write_sarif_report(record, report_dir)
    written += write_verify_report(record, report_dir)
    history = append_history(record, report_dir, overview)  # before the page, which shows this run too
    written += write_html_report(record, report_dir, history, overview)
    written.append(report_dir / HISTORY_FILE)
    written += write_patches(record, report_dir)
    return written
