"""The campaign view: where a migration over many repositories stands, for ``npu-codemod
status`` and its page ``campaign.html``.

From the latest run record and what the forge says of each of its pull requests now: how many
repositories are migrated, have a PR open, merged or closed, failed, or wait for a later run;
the same counts per team (the CODEOWNERS group of a split change, else the team asked for
review, else ``unowned``); and the open PRs waiting longest for an approval. Each ``status``
adds one point to ``campaign.jsonl`` in the report dir when the state differs from the last
point there, so the burndown has one point per state of the campaign.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from npu_codemod.codemods.merge_verdict import VERDICTS
from npu_codemod.orchestrator.results import PullRequestRecord
from npu_codemod.orchestrator.run_record import RunRecord

CAMPAIGN_FILE = "campaign.jsonl"
#: The series of the burndown, in the order they are drawn.
SERIES = ("migrated", "open", "merged", "closed", "failed", "waiting")


@dataclass(frozen=True)
class CampaignPr:
    """One pull request as the forge reports it now."""

    repo: str
    branch: str
    number: int
    url: str
    state: str  # open, merged, closed, unknown
    team: str
    approvals: int = 0
    checks: str = ""
    created_at: str = ""


def team_of(pr: PullRequestRecord) -> str:
    """The team a PR record belongs to: its CODEOWNERS group, else a team asked for review,
    else ``unowned``."""
    if pr.group:
        return pr.group
    teams = [r.lstrip("@") for r in pr.reviewers if "/" in r]
    return teams[0] if teams else "unowned"


def campaign_counts(run: RunRecord, prs: Sequence[CampaignPr]) -> dict[str, int]:
    """Repositories by where they stand: a repository with several PRs counts once, by its
    most advanced PR (merged, then open, then closed); and by merge verdict (``ready``...)."""
    states: dict[str, set[str]] = {}
    for pr in prs:
        states.setdefault(pr.repo, set()).add(pr.state)
    counts = dict.fromkeys(("repos", *SERIES, *VERDICTS), 0)
    for repo in run.repos:
        counts["repos"] += 1
        verdict = repo.merge.verdict
        if verdict:
            counts[verdict] += 1
        mine = states.get(repo.repo, set())
        if repo.status == "failed":
            counts["failed"] += 1
        elif repo.status == "deferred":
            counts["waiting"] += 1
        elif mine & {"merged", "open", "closed"}:
            counts[next(s for s in ("merged", "open", "closed") if s in mine)] += 1
        elif mine:  # the forge could not be asked: it has a PR, at least migrated
            counts["migrated"] += 1
        elif repo.branch and repo.commit and repo.commit != repo.base:
            counts["migrated"] += 1  # a branch, no PR (yet)
    return counts


def team_counts(prs: Iterable[CampaignPr]) -> dict[str, Counter]:
    teams: dict[str, Counter] = {}
    for pr in prs:
        teams.setdefault(pr.team, Counter())[pr.state] += 1
    return dict(sorted(teams.items()))


def waiting_longest(prs: Iterable[CampaignPr], limit: int = 10) -> list[CampaignPr]:
    """Open PRs without an approval, the longest waiting first."""
    waiting = [pr for pr in prs if pr.state == "open" and pr.approvals == 0 and pr.created_at]
    return sorted(waiting, key=lambda pr: pr.created_at)[:limit]


def days_since(stamp: str, now: _dt.datetime) -> Optional[int]:
    try:
        then = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=_dt.timezone.utc)
    return max(0, (now - then).days)


def read_points(report_dir: Path) -> list[dict[str, Any]]:
    try:
        lines = (report_dir / CAMPAIGN_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    points = []
    for line in lines:
        try:
            point = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(point, dict) and "counts" in point:
            points.append(point)
    return points


def add_point(report_dir: Path, run: RunRecord, counts: Mapping[str, int], at: str) -> list[dict]:
    """Append this state (unless it is the last point's) and return every point, oldest first."""
    from npu_codemod.reports.atomic import write_atomic

    points = read_points(report_dir)
    point = {"at": at, "run": run.id, "counts": dict(counts)}
    if points and points[-1]["counts"] == point["counts"] and points[-1].get("run") == point["run"]:
        return points
    old = "".join(json.dumps(p, sort_keys=True) + "\n" for p in points)
    write_atomic(report_dir / CAMPAIGN_FILE, old + json.dumps(point, sort_keys=True) + "\n")
    return points + [point]
