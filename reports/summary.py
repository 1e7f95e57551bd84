"""Counting findings: per repo and rule, per status, and coverage."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Mapping, Optional

from npu_codemod.codemods.findings import STATUSES

SUMMARY_FIELDS = ("repo", "rule_id", "migrated", "unmigrated", "error")


def all_findings(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [finding for repo in run["repos"] for finding in repo["findings"]]


def summary_rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per (repo, rule) that has findings, in repo-list then rule-id order."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for finding in all_findings(run):
        counts[(finding["repo"], finding["rule_id"])][finding["status"]] += 1
    order = {repo["repo"]: index for index, repo in enumerate(run["repos"])}
    rows = []
    for (repo, rule_id), counter in sorted(counts.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        rows.append({"repo": repo, "rule_id": rule_id, **{s: counter[s] for s in STATUSES}})
    return rows


def status_totals(findings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counter = Counter(finding["status"] for finding in findings)
    return {status: counter[status] for status in STATUSES}


def coverage(totals: Mapping[str, int]) -> Optional[float]:
    """migrated / (migrated + unmigrated); None when there is nothing to migrate."""
    denominator = totals["migrated"] + totals["unmigrated"]
    return totals["migrated"] / denominator if denominator else None


def repo_counts(run: Mapping[str, Any]) -> dict[str, int]:
    """How many repos were processed, and how many ended changed, unchanged or failed."""
    counter = Counter(repo["status"] for repo in run["repos"])
    return {"processed": len(run["repos"]),
            **{status: counter[status] for status in ("changed", "unchanged", "failed")}}


def totals_by(findings: Iterable[Mapping[str, Any]], key: str) -> dict[str, dict[str, int]]:
    """Status totals per value of ``key`` (``rule_id``, ``repo``), in first-seen order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for finding in findings:
        groups.setdefault(finding[key], []).append(finding)
    return {value: status_totals(group) for value, group in groups.items()}
