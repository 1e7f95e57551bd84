"""Counting findings: per repo and rule, per status, coverage, and API readiness.

A run's repos may be many and are read from disk on each pass (see the write-report hook):
everything here goes through them once and keeps counts, never the findings.

Two figures answer "how ready is it?": **rules coverage**, done / (done + left) over the
sites of the migration rules (done: ``migrated`` or ``compliant``; sites as
``codemods/sites.py`` counts them, each once), and **API readiness**
(``codemods/api_sites.py``), over every TensorFlow/Horovod API use the audit counted. The
audits' own findings (the rules that say ``audits_apis``: NPU100, and NPU071 in TF 2.x code)
are counted by the second, not the first: a blocking API weighs once. What is **left** is one figure everywhere: the sites of
every rule, the audit's included, that still need a person (``SiteCounts.left``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Iterable, Iterator, Mapping, Optional, Union

from npu_codemod.codemods.api_sites import ApiStatus, advice, readiness, unresolved_uses
from npu_codemod.codemods.findings import STATUSES, Finding
from npu_codemod.codemods.merge_verdict import VERDICTS, MergeVerdict
from npu_codemod.codemods.sites import SiteCounts, sites_per_rule
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.run_record import PackState, RunRecord

#: A run as the reports take it: typed, or the run record's data (typed on the way in).
Run = Union[RunRecord, Mapping[str, Any]]

#: The first five as they always were; the states added since go at the end.
SUMMARY_FIELDS = ("repo", "rule_id", "migrated", "unmigrated", "error", "compliant", "not-needed")


def iter_findings(run: Run) -> Iterator[Finding]:
    """Every finding of the run, repo after repo."""
    return (finding for repo in RunRecord.of(run).repos for finding in repo.findings)


def summary_rows(repo: RepoResult) -> Iterator[dict[str, Any]]:
    """One row per rule that has findings in ``repo``, in rule-id order: its sites per state
    (``sites_per_rule``), as the page's chart of rules counts them."""
    counts = sites_per_rule(repo.findings)
    for rule_id in sorted(counts):
        yield {"repo": repo.repo, "rule_id": rule_id, **{s: counts[rule_id][s] for s in STATUSES}}


def status_totals(findings: Iterable[Finding],
                  leaving_out: AbstractSet[str] = frozenset()) -> dict[str, int]:
    """Findings per status, those of the rules ``leaving_out`` left out."""
    counter = Counter(finding.status for finding in findings if finding.rule_id not in leaving_out)
    return {status: counter[status] for status in STATUSES}


#: The pack whose findings API readiness counts instead of coverage, in run records older
#: than ``audits_apis``.
AUDIT_PACK = "audit"


def audit_rules(run: Run) -> frozenset[str]:
    """Ids of the run's API audits (``audits_apis`` in the run record's rules; the ``audit``
    pack's in an older record), whose sites rules coverage leaves out."""
    return frozenset(rule.id for rule in RunRecord.of(run).rules
                     if rule.audits_apis or rule.pack == AUDIT_PACK)


def report_only_rules(run: Run) -> frozenset[str]:
    """Ids of the run's rules that rewrite nothing (their sites are all for a person): a
    coverage of 0% says nothing about them."""
    return frozenset(rule.id for rule in RunRecord.of(run).rules if not rule.rewrites)


def run_packs(run: Run) -> list[PackState]:
    """The packs of the run record's ``packs`` (every installed rule's pack, on or off; absent
    from older records: then the packs of the rules that ran, all on)."""
    record = RunRecord.of(run)
    if record.packs is None:
        ran: dict[str, list[str]] = {}
        for rule in record.rules:
            ran.setdefault(rule.pack or "-", []).append(rule.id)
        return [PackState(name, True, tuple(ids)) for name, ids in ran.items()]
    return [PackState(pack.name, bool(pack.on), pack.rules, enable=pack.enable or "")
            for pack in record.packs]


@dataclass(frozen=True)
class BlockingApi:
    """An API whose use sites are not ready, over the run: what is left of the API audit."""

    api: str
    status: str
    sites: int
    repos: int

    @property
    def advice(self) -> str:
        if self.status in ApiStatus.MIGRATED:
            return ("Ascend migrates it: finish each site as its finding says (the owning rule's "
                    "instruction, or NPU100's where no enabled rule covered the site)")
        return advice(self.status)


def coverage(totals: Mapping[str, int]) -> Optional[float]:
    """done / (done + unmigrated), done being migrated or compliant; None when there is
    nothing to migrate."""
    done = totals["migrated"] + totals.get("compliant", 0)
    denominator = done + totals["unmigrated"]
    return done / denominator if denominator else None


def site_totals(sites: SiteCounts) -> dict[str, int]:
    """``sites`` keyed by status, as the charts and :func:`coverage` read them."""
    return {"migrated": sites.migrated, "compliant": sites.compliant, "unmigrated": sites.left,
            "not-needed": sites.not_needed, "error": sites.errors}


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
    failed: list[RepoResult] = field(default_factory=list)  # the repos that failed
    files_skipped: int = 0  # test files the run left out, over every repo
    audit_ids: frozenset[str] = frozenset()  # rules whose findings API readiness counts
    #: Findings per status of the migration rules (the audit's left out): rules coverage.
    rule_totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    api_readiness: dict[str, Optional[float]] = field(default_factory=dict)  # repo name: share
    api_blocking: dict[str, int] = field(default_factory=dict)  # repo name: sites not ready
    api_unresolved: dict[str, int] = field(default_factory=dict)  # repo name: uses not resolved
    #: (status, ready) -> the run's API use sites, summed over its repos.
    api_status: Counter = field(default_factory=Counter)
    #: (api, status) -> [sites, repos] of the API use sites that are not ready.
    blocking_sites: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    #: Sites of every rule (``left``: the one figure of what is left), and of the migration
    #: rules alone (rules coverage), over the run; each repository's of every rule.
    sites: SiteCounts = SiteCounts()
    rule_sites: SiteCounts = SiteCounts()
    repo_sites: dict[str, SiteCounts] = field(default_factory=dict)
    #: Repository name -> its merge verdict; and repositories per verdict.
    verdicts: dict[str, MergeVerdict] = field(default_factory=dict)
    verdict_counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))

    @classmethod
    def of(cls, run: Run) -> "Overview":
        record = RunRecord.of(run)
        overview = cls(audit_ids=audit_rules(record))
        for repo in record.repos:
            overview._add(repo)
        return overview

    @property
    def coverage(self) -> Optional[float]:
        """Rules coverage over the run (the audit's sites left out)."""
        return self.rule_sites.coverage

    @property
    def readiness(self) -> Optional[float]:
        """API readiness over the run."""
        known = {key: sites for key, sites in self.api_status.items() if key[0] != ApiStatus.UNKNOWN}
        total = sum(known.values())
        return sum(sites for (_, ready), sites in known.items() if ready) / total if total else None

    def blocking(self) -> list[BlockingApi]:
        """The APIs with sites that are not ready, most sites first."""
        rows = [BlockingApi(api, status, sites, repos)
                for (api, status), (sites, repos) in self.blocking_sites.items()]
        order = {status: index for index, status in enumerate(ApiStatus.ORDER)}
        return sorted(rows, key=lambda row: (-row.sites, order.get(row.status, 99), row.api))

    def _add(self, repo: RepoResult) -> None:
        totals: dict[str, int] = dict.fromkeys(STATUSES, 0)
        for rule_id, rule_sites in sites_per_rule(repo.findings).items():
            by_rule = self.by_rule.setdefault(rule_id, dict.fromkeys(STATUSES, 0))
            for kind in STATUSES:
                by_rule[kind] += rule_sites[kind]
        for finding in repo.findings:
            status, rule_id = finding.status, finding.rule_id
            self.rule_names[rule_id] = finding.rule_name
            if status in totals:  # a hand-edited run.json may hold others: not counted
                self.totals[status] += 1
                if rule_id not in self.audit_ids:
                    totals[status] += 1
        self.findings += len(repo.findings)
        for state, count in totals.items():
            self.rule_totals[state] += count
        self._add_sites(repo)
        self._add_api_sites(repo)
        self.repo_names.append(repo.repo)
        self.repo_counts["processed"] += 1
        self.files_skipped += repo.files_skipped
        if repo.status in ("changed", "unchanged", "failed"):
            self.repo_counts[repo.status] += 1
        if repo.status == "failed":
            self.failed.append(repo)

    def _add_sites(self, repo: RepoResult) -> None:
        name = repo.repo
        every = repo.sites
        rules = SiteCounts.of_findings(f for f in repo.findings if f.rule_id not in self.audit_ids)
        self.sites += every
        self.rule_sites += rules
        self.repo_sites[name] = every
        self.by_repo[name] = site_totals(rules)
        verdict = repo.merge
        self.verdicts[name] = verdict
        if verdict.verdict in self.verdict_counts:
            self.verdict_counts[verdict.verdict] += 1

    def _add_api_sites(self, repo: RepoResult) -> None:
        sites = repo.api_sites  # none in records older than the audit
        self.api_readiness[repo.repo] = readiness(sites)
        blocking: set[tuple[str, str]] = set()
        for row in sites:
            self.api_status[(row.status, row.ready)] += row.sites
            if row.known and not row.ready:
                self.blocking_sites.setdefault((row.api, row.status), [0, 0])[0] += row.sites
                blocking.add((row.api, row.status))
        for key in blocking:
            self.blocking_sites[key][1] += 1
        self.api_blocking[repo.repo] = sum(row.sites for row in sites if row.known and not row.ready)
        self.api_unresolved[repo.repo] = unresolved_uses(repo.findings)
