"""Sites: what every figure counts, each site once, in one state.

A rule reports findings; a *site* is a place in the code a person would look at: a line of a
file (a finding with no line, such as a plugin's error, is a site of its own). Several rules'
findings on one line (NPU007's config and NPU008's soft placement of the same session) are one
site, in the state of the finding that asks most of a person. The states:

- ``migrated``: a rule rewrote it (its message opens with a past-tense verb, see
  :func:`findings.rewrite_instruction`); a statement a rule removed ("removed hvd.init()")
  is no site: it is not in the branch, so a rerun over the branch could not count it
  (:func:`findings.removed_site`; the finding stays, and explains the diff);
- ``compliant``: it was already in NPU form (a rerun over the tool's own output finds these);
- ``unmigrated``: a person has to act (the one "left" figure of every report);
- ``not-needed``: code the migration made dead on the NPU (a TPU-only branch);
- ``error``: a rule or the engine failed there.

:func:`settle` gives a run's findings these states once, in the pipeline, so every report
counts the record as it is; the line a rule adds for the others' output (NPU001's
``npu_init`` import) is not a site and is left out there.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import AbstractSet, Any, Iterable, Mapping, Optional

from .findings import STATUSES, Finding, removed_site, rewrite_instruction

#: Most work first: a site with several findings takes the state of the first in this order.
SITE_ORDER = ("error", "unmigrated", "migrated", "compliant", "not-needed")
assert set(SITE_ORDER) == set(STATUSES)


def settle(findings: Iterable[Finding], not_sites: AbstractSet[str]) -> list[Finding]:
    """``findings`` with a ``migrated`` finding that rewrote nothing as ``compliant``, and the
    findings of the rules ``not_sites`` (which only follow other rules' edits) left out."""
    settled = []
    for finding in findings:
        if finding.rule_id in not_sites:
            continue
        if finding.status == "migrated" and rewrite_instruction(finding) is None:
            finding = dataclasses.replace(finding, status="compliant")
        settled.append(finding)
    return settled


def settle_record(run: Mapping[str, Any], not_sites: AbstractSet[str]) -> dict[str, Any]:
    """A run record (``run.json``) with its findings settled as :func:`settle` settles a
    run's: one written before (with the ``npu_init`` import rows, and ``migrated`` for a site
    already in NPU form) re-renders to the sites a run counts now."""
    repos = []
    for repo in run["repos"]:
        findings = [dict(row, status="compliant") if _rewrote_nothing(row) else row
                    for row in repo["findings"] if row["rule_id"] not in not_sites]
        repos.append({**repo, "findings": findings})
    return {**run, "repos": repos}


def _rewrote_nothing(row: Mapping[str, Any]) -> bool:
    """Is a finding record ``migrated`` at a site that was already in NPU form?"""
    return row["status"] == "migrated" and rewrite_instruction(Finding.from_dict(row)) is None


@dataclass(frozen=True)
class SiteCounts:
    """Sites per state; :attr:`left` is the one figure of what still needs a person."""

    migrated: int = 0
    compliant: int = 0
    left: int = 0
    not_needed: int = 0
    errors: int = 0

    @classmethod
    def of(cls, findings: Iterable[Mapping[str, Any]],
           leaving_out: AbstractSet[str] = frozenset()) -> "SiteCounts":
        """The sites of ``findings`` (records as ``run.json`` holds them), those of the rules
        ``leaving_out`` left out."""
        return cls.of_states(site_states(
            (f["path"], f["line"], f["rule_id"], f["status"]) for f in findings
            if f["rule_id"] not in leaving_out and not removed_site(f["status"], f["message"])))

    @classmethod
    def of_findings(cls, findings: Iterable[Finding]) -> "SiteCounts":
        return cls.of_states(site_states((f.path, f.line, f.rule_id, f.status) for f in findings
                                         if not removed_site(f.status, f.message)))

    @classmethod
    def of_states(cls, states: Iterable[str]) -> "SiteCounts":
        count = Counter(states)
        return cls(count["migrated"], count["compliant"], count["unmigrated"], count["not-needed"],
                   count["error"])

    @property
    def done(self) -> int:
        """Sites in NPU form: rewritten or already so."""
        return self.migrated + self.compliant

    @property
    def coverage(self) -> Optional[float]:
        """done / (done + left); None when there is neither."""
        whole = self.done + self.left
        return self.done / whole if whole else None

    def __add__(self, other: "SiteCounts") -> "SiteCounts":
        return SiteCounts(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other))))

    def to_dict(self) -> dict[str, int]:
        return {"migrated": self.migrated, "compliant": self.compliant, "left": self.left,
                "not_needed": self.not_needed, "errors": self.errors}


#: A site: a file's line (``(path, line, "")``), or a rule's finding with no line (``(path, 0, rule)``).
SiteKey = tuple[str, int, str]


def site_states(findings: Iterable[tuple[str, int, str, str]]) -> list[str]:
    """The state of each site of ``(path, line, rule_id, status)`` findings (see the module)."""
    return list(site_map(findings).values())


def site_map(findings: Iterable[tuple[str, int, str, str]]) -> dict[SiteKey, str]:
    """Each site of ``(path, line, rule_id, status)`` findings (:func:`site_key`) -> its state."""
    sites: dict[SiteKey, str] = {}
    rank = {state: index for index, state in enumerate(SITE_ORDER)}
    for path, line, rule_id, status in findings:
        if status not in rank:
            continue  # a hand-edited run.json may hold others: not counted
        key = site_key(path, line, rule_id)
        known = sites.get(key)
        if known is None or rank[status] < rank[known]:
            sites[key] = status
    return sites


def site_key(path: str, line: int, rule_id: str) -> SiteKey:
    """The site of a finding at ``path:line`` of ``rule_id``."""
    return path, line, "" if line else rule_id


def sites_per_rule(findings: Iterable[Finding]) -> dict[str, Counter[str]]:
    """Rule id -> that rule's sites per state, of ``findings``: a rule's findings on one line
    are one site of it (a line with two rules' findings is a site of each, and one site of the
    repository)."""
    by_rule: dict[str, list[tuple[str, int, str, str]]] = {}
    for f in findings:
        rows = by_rule.setdefault(f.rule_id, [])  # a rule whose findings are all removals: no site
        if not removed_site(f.status, f.message):
            rows.append((f.path, f.line, f.rule_id, f.status))
    return {rule_id: Counter(site_states(rows)) for rule_id, rows in by_rule.items()}


def rule_sites(findings: Iterable[Finding]) -> Counter[tuple[str, str]]:
    """``(rule id, rule name)`` -> the sites each rule rewrote (for the commit message)."""
    rewritten = {(f.rule_id, f.rule_name, f.path, f.line) for f in findings if f.status == "migrated"}
    return Counter((rule_id, name) for rule_id, name, _, _ in rewritten)
