"""``report.html``: one self-contained page (no network), rendered with autoescaping."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import jinja2

from .summary import all_findings, coverage, status_totals, summary_rows

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("npu_codemod.reports", "templates"),
    autoescape=True,  # file names, messages and code are user data: never markup
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_html(run: Mapping[str, Any]) -> str:
    findings = all_findings(run)
    totals = status_totals(findings)
    repo_counts = {s: sum(1 for r in run["repos"] if r["status"] == s)
                   for s in ("changed", "unchanged", "failed")}
    return _ENV.get_template("report.html.j2").render(
        run=run,
        findings=findings,
        totals=totals,
        coverage=coverage(totals),
        repo_counts=repo_counts,
        summary=summary_rows(run),
    )


def write_html_report(run: Mapping[str, Any], report_dir: Path) -> list[Path]:
    path = report_dir / "report.html"
    path.write_text(render_html(run), encoding="utf-8")
    return [path]
