"""GitLab merge requests (REST v4), gitlab.com and self-managed instances."""

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
    reviewer_kind,
)
from npu_codemod.orchestrator.prs.http import ApiClient, ForgeError, Response
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
            data = self.api.request("GET", self._project).object("default_branch", "web_url")
            self._info = RepoInfo(str(data["default_branch"]), str(data["web_url"]))
        return self._info

    def blob_url(self, branch: str, path: str, line: int) -> str:
        return f"{self.repository().web_url}/-/blob/{urllib.parse.quote(branch)}/{urllib.parse.quote(path)}#L{line}"

    def find_open_pr(self, head: str) -> Optional[PullRequest]:
        found = self.api.request("GET", f"{self._project}/merge_requests",
                                 {"state": "opened", "source_branch": head})
        return _merge_request(replace(found, data=found.objects()[0])) if found.objects() else None

    def create_pr(self, head: str, base: str, title: str, body: str, draft: bool) -> PullRequest:
        data = {"source_branch": head, "target_branch": base, "title": _title(title, draft),
                "description": body, "remove_source_branch": True}
        return _merge_request(self.api.request("POST", f"{self._project}/merge_requests", body=data))

    def update_pr(self, number: int, title: str, body: str, draft: bool) -> PullRequest:
        return self._put(number, {"title": _title(title, draft), "description": body})

    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        self._put(number, {"add_labels": ",".join(labels)})

    def request_reviewers(self, number: int, reviewers: Sequence[str]) -> list[str]:
        ids, skipped = [], []
        for reviewer in reviewers:
            kind, name = reviewer_kind(reviewer)
            users = self.api.request("GET", "/users", {"username": name}).objects() if kind == "user" else []
            if users and users[0].get("id") is not None:
                ids.append(users[0]["id"])
            else:  # groups review through CODEOWNERS approval rules; emails cannot be asked
                skipped.append(reviewer)
        if ids:
            self._put(number, {"reviewer_ids": ids})
        return skipped

    def pr_state(self, number: int) -> PrState:
        data = self.api.request("GET", f"{self._project}/merge_requests/{number}").object("state")
        pipeline = data.get("head_pipeline")
        status = pipeline.get("status") if isinstance(pipeline, dict) else None
        checks = f"pipeline {status}" if status else "none"
        return PrState(_STATES.get(str(data["state"]), str(data["state"])), checks)

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
        return _merge_request(self.api.request("PUT", f"{self._project}/merge_requests/{number}", body=data))


def _title(title: str, draft: bool) -> str:
    return DRAFT + title if draft and not title.startswith(DRAFT) else title


def _merge_request(response: Response) -> PullRequest:
    data = response.object("iid", "web_url")
    if not isinstance(data["iid"], int):
        raise response.unexpected("a merge request with an iid")
    title = str(data.get("title") or "")
    return PullRequest(data["iid"], str(data["web_url"]), title, str(data.get("description") or ""),
                       bool(data.get("draft")) or title.startswith(DRAFT))
