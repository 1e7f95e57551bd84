"""The comment a rerun leaves on a pull request whose content it changed: which sites are
newly left for a person, which were fixed, how many are migrated, and the verify verdict when
the run has one. Once per change: the comment carries a marker naming the new commit, and a
comment already holding it is not posted again (a rerun after an interrupted one).

What "before" means: the findings of the same branch in the run record the report dir held
when this run started (the previous state of the campaign). Sites are compared by file, rule
and message, not by line: a base that moved shifts lines without changing what is left.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable, Mapping, Optional

from npu_codemod.codemods.findings import Finding

Key = tuple[str, str, str, str]  # path, rule id, status, message
#: Per (repo, branch) of the earlier run: its sites.
Previous = Mapping[tuple[str, str], Counter]
MAX_LISTED = 10


def marker(commit: str) -> str:
    return f"<!-- npu-codemod:change:{commit} -->"


def site_keys(findings: Iterable[Finding]) -> Counter:
    """The sites of ``findings`` by :data:`Key`."""
    return Counter((f.path, f.rule_id, f.status, f.message) for f in findings)


def previous_sites(run_json: Path) -> dict[tuple[str, str], Counter]:
    """The sites of each branch of the run record at ``run_json`` (none when there is none)."""
    from npu_codemod.orchestrator.run_record import RunRecord
    from npu_codemod.reports.json_report import read_run_json

    try:
        run = RunRecord.of(read_run_json(run_json))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    previous: dict[tuple[str, str], Counter] = {}
    for repo in run.repos:
        groups = {group.branch: set(group.paths) for group in repo.groups if group.branch}
        if repo.branch and not groups:
            previous[(repo.repo, repo.branch)] = site_keys(repo.findings)
        for branch, paths in groups.items():
            previous[(repo.repo, branch)] = site_keys(f for f in repo.findings if f.path in paths)
    return previous


def change_comment(commit: str, after: Counter, before: Optional[Counter],
                   verdict: Optional[str] = None) -> str:
    """The comment's Markdown, ending with the change's :func:`marker`."""
    lines = [f"npu-codemod updated this branch (commit `{commit[:12]}`).", ""]
    migrated = sum(n for key, n in after.items() if key[2] == "migrated")
    if before is None:
        left = sum(n for key, n in after.items() if key[2] == "unmigrated")
        lines.append(f"- {migrated} site(s) migrated, {left} left for a person "
                     "(no earlier run record to compare with)")
    else:
        was = sum(n for key, n in before.items() if key[2] == "migrated")
        lines += _listed("fixed: no longer need a person", _unmigrated(before) - _unmigrated(after))
        lines += _listed("new: need a person", _unmigrated(after) - _unmigrated(before))
        lines.append(f"- migrated: {migrated} site(s)" + (f" (before: {was})" if was != migrated else ""))
    if verdict:
        lines.append(f"- verify: {verdict}")
    return "\n".join(lines + ["", marker(commit)]) + "\n"


def _unmigrated(sites: Counter) -> Counter:
    return Counter({key: n for key, n in sites.items() if key[2] == "unmigrated"})


def _listed(title: str, sites: Counter) -> list[str]:
    if not sites:
        return []
    lines = [f"- {title}: {sum(sites.values())} site(s)"]
    for (path, rule_id, _, message), count in sorted(sites.items())[:MAX_LISTED]:
        lines.append(f"  - `{path}` {rule_id}{f' (x{count})' if count > 1 else ''}: {message}")
    if len(sites) > MAX_LISTED:
        lines.append(f"  - ... and {len(sites) - MAX_LISTED} more (see the npu-codemod report)")
    return lines
