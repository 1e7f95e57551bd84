"""``report.html``: one self-contained page (no network), rendered with autoescaping.

File names, messages and code come from the repositories: they are data, never markup. Jinja2
autoescapes them; on top of that the page's Content-Security-Policy only runs the one script
it ships (by hash), so even a missed escape could not execute anything.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

import jinja2
from markupsafe import Markup

from npu_codemod.codemods.findings import STATUSES
from npu_codemod.codemods.rule import guide_title
from npu_codemod.orchestrator.run_record import RunRecord

from .atomic import atomic_open
from .charts import BAR_AREA, BAR_LEFT, bar_chart, line_chart
from .history import HISTORY_FILE
from .links import pull_request_links, repo_links, safe_http
from .summary import Overview, Run, coverage, iter_findings, report_only_rules, run_packs
from .template_cache import template_cache

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("npu_codemod.reports", "templates"),
    autoescape=True,  # file names, messages and code are user data: never markup
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_SCRIPT = resources.files("npu_codemod.reports").joinpath("templates/report.js").read_text("utf-8")
_SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode()


def render_html(run: Run, history: Sequence[Mapping[str, Any]] = (),
                overview: Optional[Overview] = None) -> Iterator[str]:
    """The page in pieces, as the template makes them: the numbers and charts from one pass
    over the repos (none when ``overview`` is given), then their table and the findings'
    table, each read as it is written."""
    run = RunRecord.of(run)
    overview = overview or Overview.of(run)
    by_rule = dict(sorted(overview.by_rule.items()))
    labels = {rule_id: f"{rule_id} {overview.rule_names[rule_id]}" for rule_id in by_rule}
    report_only = {labels[rule_id] for rule_id in report_only_rules(run) if rule_id in labels}
    return _page_template().generate(
        run=run,
        counts=overview.repo_counts,
        totals=overview.totals,
        coverage=overview.coverage,
        readiness=overview.readiness,
        sites=overview.sites,
        verdict_counts=overview.verdict_counts,
        packs=run_packs(run),
        left=[{"repo": name, "coverage": coverage(overview.by_repo[name]),
               "left": overview.repo_sites[name].left, "verdict": overview.verdicts[name],
               "readiness": overview.api_readiness.get(name),
               "blocking": overview.api_blocking.get(name, 0),
               "unresolved": overview.api_unresolved.get(name, 0)} for name in overview.repo_names],
        blocking=overview.blocking(),
        files_skipped=overview.files_skipped,
        findings=iter_findings(run),
        finding_count=overview.findings,
        statuses=STATUSES,
        rule_ids=list(by_rule),
        guides=rule_guides(run),
        by_rule=bar_chart({labels[rule_id]: counts for rule_id, counts in by_rule.items()},
                          report_only),
        by_repo=bar_chart(overview.by_repo),
        bar_area=BAR_AREA,
        bar_left=BAR_LEFT,
        trend=line_chart(history),
        history_file=HISTORY_FILE,
        repos=({"record": repo, "links": repo_links(repo), "prs": pull_request_links(repo),
                "coverage": coverage(overview.by_repo[repo.repo]),
                "readiness": overview.api_readiness.get(repo.repo)}
               for repo in run.repos),
        repo_names=overview.repo_names,
        failed=overview.failed,
        verified=bool(run.option("verify")),
        verifications=(repo for repo in run.repos if repo.verify),
        script=Markup(_SCRIPT),  # our own static file, allowed by the CSP hash
        script_hash=_SCRIPT_HASH,
    )


def _page_template() -> jinja2.Template:
    """``report.html.j2``, compiled or read from the compiled templates of earlier runs."""
    _ENV.bytecode_cache = template_cache(_ENV)
    return _ENV.get_template("report.html.j2")


def write_html_report(
    run: Run, report_dir: Path, history: Optional[Sequence[Mapping[str, Any]]] = None,
    overview: Optional[Overview] = None,
) -> list[Path]:
    path = report_dir / "report.html"
    with atomic_open(path) as stream:
        stream.writelines(render_html(run, history or (), overview))
    return [path]


def rule_guides(run: Run) -> dict[str, dict[str, Any]]:
    """Rule id -> the guide a finding of it links to: ``title`` (English, then as the guide
    titles it), ``url`` (http(s) only, else None) and ``description``; rules with neither a
    guide section nor a guide URL are left out."""
    guides = {}
    for rule in RunRecord.of(run).rules:
        title = guide_title(rule.guide_section_en or "", rule.guide_section or "")
        url = safe_http(rule.guide_url)
        if title or url:
            guides[rule.id] = {"title": title or url, "url": url, "description": rule.description or ""}
    return guides
