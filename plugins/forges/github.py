"""GitHub and GitHub Enterprise pull requests (REST v3)."""

from __future__ import annotations

import urllib.parse
from dataclasses import replace
from typing import Any, Optional, Sequence

from npu_codemod.orchestrator.prs.forge import (
    PrDetails,
    PrState,
    PullRequest,
    RepoInfo,
    forge_host,
    overall_checks,
    reviewer_kind,
)
from npu_codemod.orchestrator.prs.http import ApiClient, ForgeError, Response
from npu_codemod.plugins.hookspecs import hookimpl

_FAILED = frozenset({"failure", "timed_out", "cancelled", "action_required", "startup_failure"})


@hookimpl
def npu_codemod_forge(name: Optional[str], remote_url: str, api_url: Optional[str],
                      token: Optional[str], slug: str) -> Optional["GitHub"]:
    host = forge_host(remote_url)
    if name != "github" and not (name is None and "github" in host):
        return None
    return GitHub(api_url or default_api_url(host), token, slug)


def default_api_url(host: str) -> str:
    """api.github.com for github.com; ``https://HOST/api/v3`` for GitHub Enterprise Server."""
    return "https://api.github.com" if host in ("github.com", "") else f"https://{host}/api/v3"


class GitHub:
    name = "github"

    def __init__(self, api_url: str, token: Optional[str], slug: str) -> None:
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.api = ApiClient(api_url, headers)
        self.owner = slug.split("/")[0]
        self._repo = "/repos/" + urllib.parse.quote(slug)
        self._info: Optional[RepoInfo] = None

    def repository(self) -> RepoInfo:
        if self._info is None:
            data = self.api.request("GET", self._repo).object("default_branch", "html_url")
            self._info = RepoInfo(str(data["default_branch"]), str(data["html_url"]))
        return self._info

    def blob_url(self, branch: str, path: str, line: int) -> str:
        return f"{self.repository().web_url}/blob/{urllib.parse.quote(branch)}/{urllib.parse.quote(path)}#L{line}"

    def find_open_pr(self, head: str) -> Optional[PullRequest]:
        found = self.api.request("GET", f"{self._repo}/pulls",
                                 {"state": "open", "head": f"{self.owner}:{head}"})
        return _pull(replace(found, data=found.objects()[0])) if found.objects() else None

    def create_pr(self, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        data = {"head": head, "base": base, "title": title, "body": body, "draft": draft}
        return _pull(self.api.request("POST", f"{self._repo}/pulls", body=data))

    def update_pr(self, number: int, title: str, body: str, draft: bool) -> PullRequest:
        data = {"title": title, "body": body}
        return _pull(self.api.request("PATCH", f"{self._repo}/pulls/{number}", body=data))

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        self.api.request("POST", f"{self._repo}/issues/{number}/labels", body={"labels": list(labels)})

    def request_reviewers(self, number: int, reviewers: Sequence[str]) -> list[str]:
        users, teams, skipped = [], [], []
        for reviewer in reviewers:
            kind, name = reviewer_kind(reviewer)
            if kind == "team" and name.split("/")[0].lower() == self.owner.lower():
                teams.append(name.split("/", 1)[1])
            elif kind == "user":
                users.append(name)
            else:  # an email, or a team of another organisation: GitHub cannot ask them
                skipped.append(reviewer)
        if users or teams:
            self.api.request("POST", f"{self._repo}/pulls/{number}/requested_reviewers",
                             body={"reviewers": users, "team_reviewers": teams})
        return skipped

    def pr_state(self, number: int) -> PrState:
        data = self.api.request("GET", f"{self._repo}/pulls/{number}").object("state", "head")
        state = "merged" if data.get("merged") else str(data["state"])
        sha = _head(data)["sha"]
        runs = self.api.request("GET", f"{self._repo}/commits/{sha}/check-runs").object()
        return PrState(state, _checks(_listed(runs, "check_runs")))


    def pr_details(self, number: int) -> PrDetails:
        data = self.api.request("GET", f"{self._repo}/pulls/{number}").data
        sha = data["head"]["sha"]
        runs = self.api.request("GET", f"{self._repo}/commits/{sha}/check-runs").data.get("check_runs", ())
        statuses = self.api.request("GET", f"{self._repo}/commits/{sha}/status").data.get("statuses", ())
        reviews = self.api.request("GET", f"{self._repo}/pulls/{number}/reviews", {"per_page": 100}).data
        latest = {r["user"]["login"]: r["state"] for r in reviews
                  if r.get("user") and r.get("state") in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")}
        mergeable = data.get("mergeable")
        return PrDetails(
            number=number, url=data["html_url"],
            state="merged" if data.get("merged") else data["state"],
            head=data["head"]["ref"], head_sha=sha, base=data["base"]["ref"],
            approvals=sum(1 for state in latest.values() if state == "APPROVED"),
            changes_requested="CHANGES_REQUESTED" in latest.values(),
            checks=overall_checks([_run_outcome(run) for run in runs] +
                                  [_STATUS_OUTCOMES.get(st.get("state"), "pending") for st in statuses]),
            conflicts=None if mergeable is None else not mergeable,
            labels=tuple(label["name"] for label in data.get("labels", ())),
            draft=bool(data.get("draft")), created_at=data.get("created_at") or "")

    def comments(self, number: int) -> list[str]:
        data = self.api.request("GET", f"{self._repo}/issues/{number}/comments", {"per_page": 100}).data
        return [comment.get("body") or "" for comment in data]

    def comment(self, number: int, body: str) -> None:
        self.api.request("POST", f"{self._repo}/issues/{number}/comments", body={"body": body})

    def close_pr(self, number: int) -> None:
        self.api.request("PATCH", f"{self._repo}/pulls/{number}", body={"state": "closed"})

    def merge_pr(self, number: int, method: str, sha: str) -> None:
        self.api.request("PUT", f"{self._repo}/pulls/{number}/merge", body={"merge_method": method, "sha": sha})

    def delete_branch(self, branch: str) -> None:
        self.api.request("DELETE", f"{self._repo}/git/refs/heads/{urllib.parse.quote(branch)}")


_STATUS_OUTCOMES = {"success": "passed", "failure": "failed", "error": "failed", "pending": "pending"}


def _run_outcome(run: dict[str, Any]) -> str:
    if run.get("status") != "completed":
        return "pending"
    if run.get("conclusion") in _FAILED:
        return "failed"
    return "passed" if run.get("conclusion") == "success" else "skipped"


def _pull(response: Response) -> PullRequest:
    data = response.object("number", "html_url")
    if not isinstance(data["number"], int):
        raise response.unexpected("a pull request with a number")
    return PullRequest(data["number"], str(data["html_url"]), str(data.get("title") or ""),
                       str(data.get("body") or ""), bool(data.get("draft")))


def _head(data: dict[str, Any]) -> dict[str, Any]:
    head = data.get("head")
    if not isinstance(head, dict) or not isinstance(head.get("sha"), str):
        raise ForgeError("the forge's pull request has no head commit")
    return head


def _listed(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = data.get(key) or []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _checks(runs: Sequence[dict[str, Any]]) -> str:
    """``2 passed, 1 failed, 1 pending`` from check runs (``none`` without any)."""
    counts: dict[str, int] = {}
    for run in runs:
        outcome = _run_outcome(run)
        counts[outcome] = counts.get(outcome, 0) + 1
    return ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "none"
