"""Counting findings: per repo and rule, per status, and coverage.

A run's repos may be many and are read from disk on each pass (see the write-report hook):
everything here goes through them once and keeps counts, never the findings.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Optional

from npu_codemod.codemods.findings import STATUSES

SUMMARY_FIELDS = ("repo", "rule_id", "migrated", "unmigrated", "error")


def iter_findings(run: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Every finding of the run, repo after repo."""
    return (finding for repo in run["repos"] for finding in repo["findings"])


def summary_rows(repo: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """One row per rule that has findings in ``repo``, in rule-id order."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for finding in repo["findings"]:
        counts[finding["rule_id"]][finding["status"]] += 1
    for rule_id in sorted(counts):
        yield {"repo": repo["repo"], "rule_id": rule_id, **{s: counts[rule_id][s] for s in STATUSES}}


def status_totals(findings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counter = Counter(finding["status"] for finding in findings)
    return {status: counter[status] for status in STATUSES}


def coverage(totals: Mapping[str, int]) -> Optional[float]:
    """migrated / (migrated + unmigrated); None when there is nothing to migrate."""
    denominator = totals["migrated"] + totals["unmigrated"]
    return totals["migrated"] / denominator if denominator else None


@dataclass
class Overview:
    """The numbers of a run, from one pass over its repos: what the page and the history show."""

    findings: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    #: How many repos were processed, and how many ended changed, unchanged or failed.
    repo_counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("processed", "changed", "unchanged", "failed"), 0))
    by_rule: dict[str, dict[str, int]] = field(default_factory=dict)  # rule id: first-seen order
    rule_names: dict[str, str] = field(default_factory=dict)
    by_repo: dict[str, dict[str, int]] = field(default_factory=dict)  # repo name: totals
    repo_names: list[str] = field(default_factory=list)  # in repo-list order, as listed
    failed: list[dict[str, Any]] = field(default_factory=list)  # repo, location, error of each
    files_skipped: int = 0  # test files the run left out, over every repo

    @classmethod
    def of(cls, run: Mapping[str, Any]) -> "Overview":
        overview = cls()
        for repo in run["repos"]:
            overview._add(repo)
        return overview

    def _add(self, repo: Mapping[str, Any]) -> None:
        totals: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for finding in repo["findings"]:
            status, rule_id = finding["status"], finding["rule_id"]
            by_rule = self.by_rule.setdefault(rule_id, dict.fromkeys(STATUSES, 0))
            self.rule_names[rule_id] = finding["rule_name"]
            if status in totals:  # a hand-edited run.json may hold others: not counted
                totals[status] += 1
                by_rule[status] += 1
        self.findings += len(repo["findings"])
        for status, count in totals.items():
            self.totals[status] += count
        self.by_repo[repo["repo"]] = totals
        self.repo_names.append(repo["repo"])
        self.repo_counts["processed"] += 1
        self.files_skipped += repo.get("files_skipped", 0)  # absent from older run records
        if repo["status"] in ("changed", "unchanged", "failed"):
            self.repo_counts[repo["status"]] += 1
        if repo["status"] == "failed":
            self.failed.append({key: repo[key] for key in ("repo", "location", "error") if key in repo})
