"""``npu-codemod status RUN_JSON``: where each pull request of a run stands now, and the
campaign view (:mod:`.campaign`): counts, per team, the PRs waiting longest, the burndown
(``campaign.jsonl`` and ``campaign.html`` in the run's report dir)."""

from __future__ import annotations

import datetime as _dt
import sys
from pathlib import Path
from typing import Any, Mapping, Optional, TextIO

from npu_codemod.codemods.merge_verdict import VERDICTS
from npu_codemod.orchestrator.prs.campaign import (
    CampaignPr,
    add_point,
    campaign_counts,
    days_since,
    team_counts,
    team_of,
    waiting_longest,
)
from npu_codemod.orchestrator.prs.forge import ForgeError, find_token, forge_of
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.run_record import RunRecord


def print_status(run: Mapping[str, Any], hook: Any, stream: TextIO,
                 forge_url: Optional[str] = None, report_dir: Optional[Path] = None) -> int:
    """One row per pull request (repo, branch, number, state, checks, url), then the campaign;
    1 if a lookup failed. With ``report_dir``, the campaign's point and page are written there."""
    record = RunRecord.of(run)
    rows, prs, failures = _look_up(record, hook, forge_url)
    if len(rows) == 1:
        print("no pull requests in this run", file=stream)
    else:
        widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
        for row in rows:
            print("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)) + "  " + row[-1], file=stream)
    now = _dt.datetime.now(_dt.timezone.utc)
    counts = campaign_counts(record, prs)
    print_campaign(counts, prs, stream, now)
    if report_dir is not None:
        _write_page(report_dir, record, counts, prs, now)
    return 1 if failures else 0


def _look_up(run: RunRecord, hook: Any, forge_url: Optional[str]):
    token = find_token()
    rows = [("repo", "branch", "pr", "state", "checks", "url")]
    prs: list[CampaignPr] = []
    failures = 0
    for repo in run.repos:
        for pr in repo.pull_requests:
            if pr.number is None:
                rows.append((repo.repo, pr.branch, "-", "no PR", pr.error or "", ""))
                continue
            approvals, created = 0, ""
            try:
                forge = forge_of(hook, pr, token, forge_url)
                state = forge.pr_state(pr.number)
                cells = (state.state, state.checks)
                if hasattr(forge, "pr_details"):  # the campaign view's numbers
                    details = forge.pr_details(pr.number)
                    approvals, created = details.approvals, details.created_at
            except (ForgeError, KeyError, TypeError, ValueError, IndexError) as exc:  # refused, or wrong shape
                failures += 1
                why = str(exc) if isinstance(exc, ForgeError) else f"unexpected answer: {type(exc).__name__}: {exc}"
                cells = ("unknown", mask_secrets(why))
            rows.append((repo.repo, pr.branch or "?", f"#{pr.number}", *cells, pr.url or ""))
            prs.append(CampaignPr(repo.repo, pr.branch or "?", pr.number, pr.url or "",
                                  cells[0], team_of(pr), approvals, cells[1], created))
    return rows, prs, failures


def print_campaign(counts: Mapping[str, int], prs: list[CampaignPr], stream: TextIO,
                   now: _dt.datetime) -> None:
    print("", file=stream)
    print(f"campaign: {counts['repos']} repositories: {counts['merged']} merged, {counts['open']} PR "
          f"open, {counts['closed']} PR closed, {counts['migrated']} migrated without a PR, "
          f"{counts['failed']} failed, {counts['waiting']} waiting for a later run", file=stream)
    print("merge verdicts: " + ", ".join(f"{counts.get(name, 0)} {name}" for name in VERDICTS),
          file=stream)
    teams = team_counts(prs)
    if teams:
        width = max(len("team"), *(len(team) for team in teams))
        print(f"{'team':<{width}}  {'open':>5}  {'merged':>6}  {'closed':>6}", file=stream)
        for team, states in teams.items():
            print(f"{team:<{width}}  {states['open']:>5}  {states['merged']:>6}  {states['closed']:>6}",
                  file=stream)
    waiting = waiting_longest(prs)
    if waiting:
        print("waiting longest for review:", file=stream)
        for pr in waiting:
            days = days_since(pr.created_at, now)
            print(f"  {pr.repo} #{pr.number}: {days} day(s), no approval, checks {pr.checks}  {pr.url}",
                  file=stream)


def _write_page(report_dir: Path, run: RunRecord, counts: Mapping[str, int],
                prs: list[CampaignPr], now: _dt.datetime) -> None:
    from npu_codemod.reports.campaign_page import write_campaign_page

    try:
        points = add_point(report_dir, run, counts, now.isoformat(timespec="seconds"))
        page = write_campaign_page(report_dir, counts, points, prs, now)
    except OSError as exc:
        print(f"npu-codemod: warning: cannot write the campaign page in {report_dir}: {exc.strerror}",
              file=sys.stderr)
        return
    print(f"campaign page: {page} ({len(points)} point(s) in the burndown)", file=sys.stderr)
