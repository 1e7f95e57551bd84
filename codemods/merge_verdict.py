"""A merge verdict per repository: the one word a lead merges by, and why, in a line.

- ``ready``: no site left, no error, no API the NPU does not support, and ``verify`` said
  ``equivalent`` when it ran;
- ``needs-work``: sites left for a person or errors (the line says how many, of which kind:
  ``to change`` first, then ``to check``, a site that may need nothing);
- ``blocked``: APIs Ascend does not support and that have no migration path (the line lists
  them): no amount of migrating makes the branch train on the NPU. An unsupported API a rule's
  finding says how to migrate (NPU012: remove the TPU-only ``CrossShardOptimizer``) is work
  left (``needs-work``), not a block;
- ``not-verified``: ready by its sites, but ``verify`` ran and did not prove the branch
  equivalent; or ``verify`` ran alone (no file scanned, no finding, no API site: there is no
  migration data to judge the branch by, whatever verify said).

A repository that failed or was not started has none (``""``). Computed from the record only
(its findings, API sites and verify verdict), so ``run.json`` re-renders to the same verdicts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Optional

from .api_sites import ApiSites
from .sites import SiteCounts, SiteKey, site_key, site_map, site_states

VERDICTS = ("ready", "needs-work", "blocked", "not-verified")


@dataclass(frozen=True)
class MergeVerdict:
    verdict: str  # one of VERDICTS, "" for a repository that failed or was not started
    reason: str = ""  # what keeps it from ``ready``, in one line


#: (rule id, status, level, path, line) of one finding.
FindingKey = tuple[str, str, str, str, int]


#: The reason of a repository ``verify`` ran alone over.
NO_MIGRATION_DATA = "no migration data (verify ran alone: run or scan gives the sites)"


def merge_verdict(status: str, findings: Iterable[FindingKey], api_sites: Iterable[ApiSites],
                  verify: Optional[str], scanned: int = 1) -> MergeVerdict:
    """The verdict of a repository whose run ended with ``status``, having run the rules over
    ``scanned`` files."""
    if status not in ("changed", "unchanged"):
        return MergeVerdict("")
    findings, api_sites = list(findings), list(api_sites)
    if verify is not None and not (scanned or findings or api_sites):
        return MergeVerdict("not-verified", f"{NO_MIGRATION_DATA}; verify: {verify}")
    unsupported = sorted({row.api or "an API" for row in api_sites if row.blocking})
    if unsupported:
        return MergeVerdict("blocked", "not supported on Ascend: " + ", ".join(unsupported))
    sites = SiteCounts.of_states(site_states((path, line, rule_id, state)
                                             for rule_id, state, _, path, line in findings))
    if sites.left or sites.errors:
        return MergeVerdict("needs-work", _work(findings, sites))
    waiting = sum(row.sites for row in api_sites if row.known and not row.ready)
    if waiting:  # API sites no finding names (a record of a run without the audit's findings)
        return MergeVerdict("needs-work", f"{waiting} API site(s) not ready")
    if verify is not None and verify != "equivalent":
        return MergeVerdict("not-verified", f"verify: {verify}")
    return MergeVerdict("ready")


def _work(findings: list[FindingKey], sites: SiteCounts) -> str:
    """``3 site(s) left: 2 to change (NPU010 1, NPU100 1), 1 to check (NPU100 1); 1 error(s)``.

    In sites, as the figures count them: a line left is one site ``to change`` when a finding on
    it is no note, else ``to check`` (so the two add up to the sites left); a rule is counted
    once per line it has findings on (two APIs of one line are one site of NPU100's)."""
    states = site_map((path, line, rule_id, state) for rule_id, state, _, path, line in findings)
    left = {key for key, state in states.items() if state == "unmigrated"}
    rules: dict[SiteKey, set[str]] = {}
    change: set[SiteKey] = set()
    for rule_id, state, level, path, line in findings:
        key = site_key(path, line, rule_id)
        if state == "unmigrated" and key in left:
            rules.setdefault(key, set()).add(rule_id)
            if level != "note":
                change.add(key)
    parts = []
    for verb, keys in (("change", change), ("check", left - change)):
        if keys:
            per_rule = Counter(rule_id for key in keys for rule_id in rules[key])
            parts.append(f"{len(keys)} to {verb} ({', '.join(f'{r} {n}' for r, n in sorted(per_rule.items()))})")
    text = f"{sites.left} site(s) left: {', '.join(parts)}" if sites.left else ""
    errors = f"{sites.errors} error(s)" if sites.errors else ""
    return "; ".join(part for part in (text, errors) if part)
