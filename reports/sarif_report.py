"""``findings.sarif``: sites that need a person, for code-scanning UIs and editors (SARIF 2.1.0).

One SARIF run per repository (its own artifacts, revision and branch), one result per
``unmigrated`` or ``error`` finding; ``migrated`` sites are done and are not results. An
``unmigrated`` result is a ``warning``, or a ``note`` when its finding says so (``level``: a site
that may need nothing, such as a use of an API whose support on Ascend is not established). Each
rule carries its help in English (what it rewrites and reports, the guide section it implements)
and, as ``helpUri``, its ``guide_url``: for a built-in rule its entry in ``docs/rules.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from npu_codemod import __version__
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import guide_title
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.run_record import RuleRecord, RunRecord

from .atomic import atomic_open
from .json_text import write_readable_json
from .links import safe_http, web_url
from .summary import Run

SARIF_FILE = "findings.sarif"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"unmigrated": "warning", "error": "error"}


def sarif_log(run: Run) -> dict[str, Any]:
    """The SARIF log of a run; its ``runs`` are made one repository at a time as they are
    read (a generator: the log is for writing once)."""
    record = RunRecord.of(run)
    rules = _rules(record)
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": (_repo_run(repo, rules, index) for repo in record.repos),
    }


def write_sarif_report(run: Run, report_dir: Path) -> list[Path]:
    path = report_dir / SARIF_FILE
    with atomic_open(path) as stream:
        write_readable_json(sarif_log(run), stream.write)
    return [path]


def _rules(run: RunRecord) -> list[dict[str, Any]]:
    """The run's rules, plus any rule id a finding names that the run did not list (NPU000)."""
    known = {rule.id: rule for rule in run.rules}
    for repo in run.repos:
        for finding in repo.findings:
            known.setdefault(finding.rule_id, RuleRecord(finding.rule_id, finding.rule_name))
    return [_rule(known[rule_id]) for rule_id in sorted(known)]


def _rule(rule: RuleRecord) -> dict[str, Any]:
    description = rule.description or f"{rule.id} {rule.name}"
    sarif_rule = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": f"{rule.id} {rule.name}"},
        "fullDescription": {"text": description},
        "help": _help(rule, description),
        "defaultConfiguration": {"level": "warning"},
        "properties": {"guideSection": rule.guide_section or "",
                       "guideSectionEn": rule.guide_section_en or "",
                       "tags": ["tensorflow", "ascend-npu", "migration"]},
    }
    url = safe_http(rule.guide_url)
    if url:
        sarif_rule["helpUri"] = url
    return sarif_rule


def _help(rule: RuleRecord, description: str) -> dict[str, str]:
    """The rule's help in English: what it does, rewrites and reports, its guide section (in
    English, then as the guide titles it) and where to read more."""
    section = guide_title(rule.guide_section_en or "", rule.guide_section or "")
    url = safe_http(rule.guide_url)
    told = [("Rewrites", rule.rewrites), ("Reports", rule.reports)]
    text = [description, *(f"{label}: {said}" for label, said in told if said)]
    markdown = [description, *(f"**{label}.** {said}" for label, said in told if said)]
    if section:
        text.append(f"Migration guide section: {section}")
        markdown.append(f"**Migration guide section:** {f'[{section}]({url})' if url else section}")
    if url:
        text.append(f"Guide: {url}")
        if not section:
            markdown.append(f"**Guide:** <{url}>")
    return {"text": "\n\n".join(text), "markdown": "\n\n".join(markdown)}


def _repo_run(repo: RepoResult, rules: list[dict[str, Any]], index: dict[str, int]) -> dict[str, Any]:
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "npu-codemod", "version": __version__,
                            "semanticVersion": __version__, "rules": rules}},
        "automationDetails": {"id": f"npu-codemod/{repo.repo}/"},
        "invocations": [_invocation(repo)],
        "results": [_result(f, index) for f in repo.findings if f.status in LEVELS],
        "properties": {"repo": repo.repo, "status": repo.status},
    }
    provenance = _provenance(repo)
    if provenance:
        run["versionControlProvenance"] = [provenance]
    return run


def _invocation(repo: RepoResult) -> dict[str, Any]:
    invocation: dict[str, Any] = {"executionSuccessful": repo.status != "failed"}
    if repo.error:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": repo.error}}]
    return invocation


def _provenance(repo: RepoResult) -> Optional[dict[str, Any]]:
    url = web_url(repo.location or "")
    if not url:
        return None
    provenance = {"repositoryUri": url}
    if repo.base:
        provenance["revisionId"] = repo.base
    if repo.branch:
        provenance["branch"] = repo.branch
    return provenance


def _level(finding: Finding) -> str:
    if finding.status == "unmigrated" and finding.level == "note":
        return "note"
    return LEVELS[finding.status]


def _result(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    return {
        "ruleId": finding.rule_id,
        "ruleIndex": index[finding.rule_id],
        "level": _level(finding),
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": quote(finding.path), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(1, finding.line), "startColumn": finding.column + 1},
        }}],
        "properties": {"repo": finding.repo, "status": finding.status},
    }
