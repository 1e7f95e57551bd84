"""The built-in report formats, registered as a plugin like any third-party format."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from npu_codemod.plugins.hookspecs import hookimpl

from .csv_report import write_csv_reports
from .html_report import write_html_report
from .json_report import write_run_json
from .patches import write_patches


@hookimpl
def npu_codemod_write_report(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    written = write_run_json(run, report_dir)
    written += write_csv_reports(run, report_dir)
    written += write_html_report(run, report_dir)
    written += write_patches(run, report_dir)
    return written
