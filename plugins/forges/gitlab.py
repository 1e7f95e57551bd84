"""GitLab merge requests (REST v4), gitlab.com and self-managed instances."""

from __future__ import annotations

import urllib.parse
from typing import Any, Optional, Sequence

from npu_codemod.orchestrator.prs.forge import (
    PrDetails,
    PrState,
    PullRequest,
    RepoInfo,
    forge_host,
    reviewer_kind,
)
from npu_codemod.orchestrator.prs.http import ApiClient, ForgeError
from npu_codemod.plugins.hookspecs import hookimpl

DRAFT = "Draft: "
_STATES = {"opened": "open", "locked": "open"}
_PIPELINE_CHECKS = {"success": "passed", "failed": "failed", "canceled": "failed", "skipped": "none"}


@hookimpl
def npu_codemod_forge(name: Optional[str], remote_url: str, api_url: Optional[str],
                      token: Optional[str], slug: str) -> Optional["GitLab"]:
    host = forge_host(remote_url)
    if name != "gitlab" and not (name is None and "gitlab" in host):
        return None
    return GitLab(api_root(api_url or f"https://{host or 'gitlab.com'}"), token, slug)


def api_root(url: str) -> str:
    """The v4 API root of an instance given by its base URL (or by the API root itself)."""
    url = url.rstrip("/")
    return url if url.endswith("/api/v4") else url + "/api/v4"


class GitLab:
    name = "gitlab"

    def __init__(self, api_url: str, token: Optional[str], slug: str) -> None:
        self.api = ApiClient(api_url, {"PRIVATE-TOKEN": token} if token else {})
        self._project = "/projects/" + urllib.parse.quote(slug, safe="")
        self._info: Optional[RepoInfo] = None

    def repository(self) -> RepoInfo:
        if self._info is None:
            data = self.api.request("GET", self._project).data
            self._info = RepoInfo(data["default_branch"], data["web_url"])
        return self._info

    def blob_url(self, branch: str, path: str, line: int) -> str:
        return f"{self.repository().web_url}/-/blob/{urllib.parse.quote(branch)}/{urllib.parse.quote(path)}#L{line}"

    def find_open_pr(self, head: str) -> Optional[PullRequest]:
        found = self.api.request("GET", f"{self._project}/merge_requests",
                                 {"state": "opened", "source_branch": head}).data
        return _merge_request(found[0]) if found else None

    def create_pr(self, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        data = {"source_branch": head, "target_branch": base, "title": _title(title, draft),
                "description": body, "remove_source_branch": True}
        return _merge_request(self.api.request("POST", f"{self._project}/merge_requests", body=data).data)

    def update_pr(self, number: int, title: str, body: str, draft: bool) -> PullRequest:
        return self._put(number, {"title": _title(title, draft), "description": body})

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        self._put(number, {"add_labels": ",".join(labels)})

    def request_reviewers(self, number: int, reviewers: Sequence[str]) -> list[str]:
        ids, skipped = [], []
        for reviewer in reviewers:
            kind, name = reviewer_kind(reviewer)
            users = self.api.request("GET", "/users", {"username": name}).data if kind == "user" else []
            if users:
                ids.append(users[0]["id"])
            else:  # groups review through CODEOWNERS approval rules; emails cannot be asked
                skipped.append(reviewer)
        if ids:
            self._put(number, {"reviewer_ids": ids})
        return skipped

    def pr_state(self, number: int) -> PrState:
        data = self.api.request("GET", f"{self._project}/merge_requests/{number}").data
        pipeline = data.get("head_pipeline") or {}
        checks = f"pipeline {pipeline['status']}" if pipeline.get("status") else "none"
        return PrState(_STATES.get(data["state"], data["state"]), checks)

    def pr_details(self, number: int) -> PrDetails:
        data = self.api.request("GET", f"{self._mr(number)}").data
        approvals = self.api.request("GET", f"{self._mr(number)}/approvals").data
        pipeline = (data.get("head_pipeline") or {}).get("status")
        return PrDetails(
            number=number, url=data["web_url"], state=_STATES.get(data["state"], data["state"]),
            head=data["source_branch"], head_sha=data.get("sha") or "", base=data["target_branch"],
            approvals=len(approvals.get("approved_by") or ()),
            checks=_PIPELINE_CHECKS.get(pipeline, "pending") if pipeline else "none",
            conflicts=bool(data["has_conflicts"]) if "has_conflicts" in data else None,
            labels=tuple(data.get("labels") or ()),
            draft=bool(data.get("draft")) or (data.get("title") or "").startswith(DRAFT),
            created_at=data.get("created_at") or "")

    def comments(self, number: int) -> list[str]:
        notes = self.api.request("GET", f"{self._mr(number)}/notes", {"sort": "asc", "per_page": 100}).data
        return [note.get("body") or "" for note in notes if not note.get("system")]

    def comment(self, number: int, body: str) -> None:
        self.api.request("POST", f"{self._mr(number)}/notes", body={"body": body})

    def close_pr(self, number: int) -> None:
        self._put(number, {"state_event": "close"})

    def merge_pr(self, number: int, method: str, sha: str) -> None:
        if method == "rebase":
            raise ForgeError("GitLab merges by the project's merge method: use --merge-method merge or squash")
        self.api.request("PUT", f"{self._mr(number)}/merge", body={"squash": method == "squash", "sha": sha})

    def delete_branch(self, branch: str) -> None:
        self.api.request("DELETE", f"{self._project}/repository/branches/{urllib.parse.quote(branch, safe='')}")

    def _mr(self, number: int) -> str:
        return f"{self._project}/merge_requests/{number}"

    def _put(self, number: int, data: dict[str, Any]) -> PullRequest:
        return _merge_request(self.api.request("PUT", f"{self._project}/merge_requests/{number}", body=data).data)


def _title(title: str, draft: bool) -> str:
    return DRAFT + title if draft and not title.startswith(DRAFT) else title


def _merge_request(data: dict[str, Any]) -> PullRequest:
    title = data.get("title") or ""
    return PullRequest(data["iid"], data["web_url"], title, data.get("description") or "",
                       bool(data.get("draft")) or title.startswith(DRAFT))
