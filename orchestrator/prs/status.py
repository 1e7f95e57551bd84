"""``npu-codemod status RUN_JSON``: where each pull request of a run stands now."""

from __future__ import annotations

from typing import Any, Mapping, Optional, TextIO

from npu_codemod.orchestrator.prs.forge import ForgeError, find_token
from npu_codemod.orchestrator.prs.lifecycle import forge_of
from npu_codemod.orchestrator.redact import mask_secrets


def print_status(run: Mapping[str, Any], hook: Any, stream: TextIO,
                 forge_url: Optional[str] = None) -> int:
    """One row per pull request (repo, branch, number, state, checks, url); 1 if a lookup failed."""
    token = find_token()
    rows = [("repo", "branch", "pr", "state", "checks", "url")]
    failures = 0
    for repo in run["repos"]:
        for pr in repo.get("pull_requests", ()):
            if pr.get("number") is None:
                rows.append((repo["repo"], pr["branch"], "-", "no PR", pr.get("error") or "", ""))
                continue
            try:
                forge = forge_of(hook, pr, token, forge_url)
                state = forge.pr_state(pr["number"])
                cells = (state.state, state.checks)
            except ForgeError as exc:
                failures += 1
                cells = ("unknown", mask_secrets(str(exc)))
            rows.append((repo["repo"], pr.get("branch", "?"), f"#{pr['number']}", *cells, pr.get("url") or ""))
    if len(rows) == 1:
        print("no pull requests in this run", file=stream)
        return 0
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)) + "  " + row[-1], file=stream)
    return 1 if failures else 0
