"""``repos.csv`` and ``pr-files.csv``: each branch's pull request, and which PR each file went to.

``summary.csv`` keeps its fixed columns; these two carry the per-branch outcome instead. A
split repository (``--split-by``) has one ``repos.csv`` row per group branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from npu_codemod.codemods.api_sites import unresolved_uses
from npu_codemod.orchestrator.results import ChangeGroup, RepoResult
from npu_codemod.orchestrator.run_record import RunRecord

from .csv_report import write_csvs
from .summary import Run

#: ``files_skipped``: the repository's test files left out; ``api_readiness``: its API readiness
#: (0 to 1; empty when the audit counted no API use with a known status); ``verdict`` and
#: ``verdict_reason``: its merge verdict (``codemods/merge_verdict.py``); ``migrated`` to
#: ``errors``: its sites per state (``left``: what is left, as every report counts it);
#: ``api_unresolved``: its TensorFlow uses the audit could not resolve. On each of its rows.
REPOS_FIELDS = ("repo", "status", "branch", "commit", "pr_url", "error", "files_skipped",
                "api_readiness", "verdict", "migrated", "compliant", "left", "not_needed", "errors",
                "verdict_reason", "api_unresolved")
PR_FILES_FIELDS = ("repo", "path", "group", "branch", "pr_url")


def write_pr_reports(run: Run, report_dir: Path) -> list[Path]:
    repos_path, files_path = report_dir / "repos.csv", report_dir / "pr-files.csv"
    write_csvs(RunRecord.of(run).repos, {repos_path: (REPOS_FIELDS, branch_rows),
                                         files_path: (PR_FILES_FIELDS, file_rows)})
    return [repos_path, files_path]


def branch_rows(repo: RepoResult) -> list[dict[str, Any]]:
    """One row per branch of a repo (one row when it has no branch), with its PR or error."""
    prs = {pr.branch: pr for pr in repo.pull_requests}
    branches: list[tuple[Optional[str], Optional[str]]] = [
        (group.branch, group.commit) for group in repo.groups if group.branch]
    rows = []
    merge, sites = repo.merge, repo.sites.to_dict()
    for branch, commit in branches or [(repo.branch, repo.commit)]:
        pr = prs.get(branch or "")
        error = repo.error or (pr and pr.error) or ("" if branches else repo.pr_error)
        rows.append({"repo": repo.repo, "status": repo.status, "branch": branch or "",
                     "commit": commit or "", "pr_url": (pr and pr.url) or "", "error": error or "",
                     "files_skipped": repo.files_skipped, "api_readiness": _share(repo.api_readiness),
                     "verdict": merge.verdict, "verdict_reason": merge.reason, **sites,
                     "api_unresolved": unresolved_uses(repo.findings)})
    return rows


def _share(value: Optional[float]) -> str:
    return "" if value is None else f"{value:.4f}"


def file_rows(repo: RepoResult) -> list[dict[str, Any]]:
    """Every changed file with the group, branch and PR it went to."""
    prs = {pr.branch: pr.url or "" for pr in repo.pull_requests}
    groups = repo.groups or (ChangeGroup("", files=repo.files_changed, branch=repo.branch),)
    return [{"repo": repo.repo, "path": path, "group": group.name, "branch": group.branch or "",
             "pr_url": prs.get(group.branch or "", "")}
            for group in groups for path in group.files]
