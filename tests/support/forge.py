"""A stand-in forge on 127.0.0.1: the subset of the GitHub v3 and GitLab v4 APIs npu-codemod uses.

State lives in memory; every request is recorded (method, path, query, JSON body, time) so a
test can assert exactly what the client asked. Knobs reproduce a forge's bad days: a 403 with
rate-limit headers, a 403 secondary rate limit (GitHub's message, ``Retry-After``), and a PR
opened by someone else between our lookup and our create (422 on GitHub, 409 on GitLab).

The PR lifecycle: each PR has ``reviews`` (``{"user", "state"}``), ``checks`` (check runs,
keyed by nothing: the head's), ``statuses``, ``mergeable`` (True/False/None), ``comments``
and ``created_at``; merging, closing, commenting and deleting a branch change that state and
``deleted_branches``. ``refuse_merge`` makes the next merges fail (405, as GitHub does for a
PR that cannot be merged).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

WEB = "https://forge.example"


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    at: float
    authorized: bool


@dataclass
class FakeForge:
    """Shared state of the fake; ``kind`` is ``github`` or ``gitlab``."""

    kind: str
    token: str
    calls: list[Call] = field(default_factory=list)
    prs: list[dict[str, Any]] = field(default_factory=list)
    rate_limit: dict[str, int] = field(default_factory=dict)  # "METHOD path-regex" -> times left
    race_on_create: int = 0  # the next N creates find a PR opened meanwhile
    secondary_limit: dict[str, int] = field(default_factory=dict)  # "METHOD path-regex" -> times left
    refuse_merge: set[int] = field(default_factory=set)  # PR numbers whose merge fails
    deleted_branches: list[tuple[str, str]] = field(default_factory=list)  # (slug, branch)
    users: dict[str, int] = field(default_factory=lambda: {"alice": 11, "bob": 12})
    url: str = ""

    def calls_to(self, method: str, pattern: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and re.fullmatch(pattern, c.path)]


class _Handler(BaseHTTPRequestHandler):
    forge: FakeForge

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _handle(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        query = dict(urllib.parse.parse_qsl(parsed.query))
        forge = self.forge
        secret = self.headers.get("Authorization", "") if forge.kind == "github" else self.headers.get("PRIVATE-TOKEN", "")
        authorized = forge.token in secret
        forge.calls.append(Call(self.command, parsed.path, query, body, time.monotonic(), authorized))
        if not authorized:
            return self._reply(401, {"message": "Bad credentials"})
        for key, left in forge.rate_limit.items():
            method, pattern = key.split(" ", 1)
            if left and method == self.command and re.fullmatch(pattern, parsed.path):
                forge.rate_limit[key] = left - 1
                return self._reply(403, {"message": "API rate limit exceeded"},
                                   {"Retry-After": "1", "x-ratelimit-remaining": "0",
                                    "x-ratelimit-reset": str(int(time.time()) + 1)})
        for key, left in forge.secondary_limit.items():
            method, pattern = key.split(" ", 1)
            if left and method == self.command and re.fullmatch(pattern, parsed.path):
                forge.secondary_limit[key] = left - 1
                return self._reply(403, {"message": "You have exceeded a secondary rate limit. Please "
                                         "wait a few minutes before you try again."}, {"Retry-After": "1"})
        routes = _GITHUB if forge.kind == "github" else _GITLAB
        for method, pattern, action in routes:
            match = re.fullmatch(pattern, parsed.path)
            if method == self.command and match:
                status, data = action(forge, query, body or {}, *match.groups())
                return self._reply(status, data)
        self._reply(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    def _reply(self, status: int, data: Any, headers: Optional[dict[str, str]] = None) -> None:
        raw = json.dumps(data).encode() if data is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)


# --- GitHub ----------------------------------------------------------------------------------

def _gh_repo(forge, query, body, owner, name):
    if name == "missing":
        return 404, {"message": "Not Found"}
    return 200, {"default_branch": "main", "html_url": f"{WEB}/{owner}/{name}"}


def _gh_list(forge, query, body, owner, name):
    head = query["head"].split(":", 1)[1]
    return 200, [pr for pr in forge.prs if pr["slug"] == f"{owner}/{name}" and pr["head"] == head
                 and pr["state"] == "open"]


def _open_exists(forge, slug: str, head: str, base: str) -> bool:
    """Whether an open PR of ``head`` exists; with ``race_on_create`` one is opened meanwhile."""
    exists = any(pr["slug"] == slug and pr["head"] == head and pr["state"] == "open" for pr in forge.prs)
    if forge.race_on_create and not exists:
        forge.race_on_create -= 1
        _new_pr(forge, slug, {"head": head, "base": base, "title": "theirs", "body": "opened by someone else"})
        exists = True
    return exists


def _gh_create(forge, query, body, owner, name):
    slug = f"{owner}/{name}"
    if _open_exists(forge, slug, body["head"], body["base"]):
        return 422, {"message": "Validation Failed", "errors": [
            {"resource": "PullRequest", "code": "custom",
             "message": f"A pull request already exists for {owner}:{body['head']}."}]}
    return 201, _new_pr(forge, slug, body)


def _new_pr(forge, slug, body):
    number = len(forge.prs) + 1
    pr = {"slug": slug, "number": number, "iid": number, "head": body["head"], "base": body["base"],
          "title": body["title"], "body": body["body"], "draft": body.get("draft", False),
          "state": "open", "merged": False, "labels": [], "reviewers": [], "team_reviewers": [],
          "html_url": f"{WEB}/{slug}/pull/{number}", "head_sha": f"c0ffee{number:02d}",
          "reviews": [], "checks": list(_DEFAULT_CHECKS), "statuses": [], "mergeable": True,
          "comments": [], "created_at": f"2026-01-{number:02d}T10:00:00Z"}
    forge.prs.append(pr)
    return pr


_DEFAULT_CHECKS = ({"name": "tests", "status": "completed", "conclusion": "success"},
                   {"name": "lint", "status": "in_progress", "conclusion": None})


def _gh_pr(forge, number, slug):
    return next(pr for pr in forge.prs if pr["number"] == int(number) and pr["slug"] == slug)


def _gh_update(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    pr.update({k: v for k, v in body.items() if k in ("title", "body", "state")})
    return 200, pr


def _gh_get(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    return 200, {**pr, "head": {"sha": pr["head_sha"], "ref": pr["head"]}, "base": {"ref": pr["base"]},
                 "labels": [{"name": label} for label in pr["labels"]]}


def _gh_reviews(forge, query, body, owner, name, number):
    reviews = _gh_pr(forge, number, f"{owner}/{name}")["reviews"]
    return 200, [{"user": {"login": r["user"]}, "state": r["state"]} for r in reviews]


def _gh_comments(forge, query, body, owner, name, number):
    return 200, [{"body": text} for text in _gh_pr(forge, number, f"{owner}/{name}")["comments"]]


def _gh_comment(forge, query, body, owner, name, number):
    _gh_pr(forge, number, f"{owner}/{name}")["comments"].append(body["body"])
    return 201, {"body": body["body"]}


def _merge(forge, pr, sha):
    if pr["number"] in forge.refuse_merge or pr["state"] != "open":
        return 405, {"message": "Pull Request is not mergeable"}
    if sha and sha != pr["head_sha"]:
        return 409, {"message": "Head branch was modified. Review and try the merge again."}
    pr.update(state="merged", merged=True)
    return 200, {"merged": True, "message": "Pull Request successfully merged"}


def _gh_merge(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    pr["merge_method"] = body.get("merge_method")
    return _merge(forge, pr, body.get("sha"))


def _delete_branch(forge, slug, branch):
    forge.deleted_branches.append((slug, urllib.parse.unquote(branch)))
    return 204, None


def _gh_delete_ref(forge, query, body, owner, name, branch):
    return _delete_branch(forge, f"{owner}/{name}", branch)


def _gh_status(forge, query, body, owner, name, sha):
    statuses = next((pr["statuses"] for pr in forge.prs if pr["head_sha"] == sha), [])
    return 200, {"state": "pending", "total_count": len(statuses), "statuses": statuses}


def _gh_labels(forge, query, body, owner, name, number):
    _gh_pr(forge, number, f"{owner}/{name}")["labels"] += body["labels"]
    return 200, [{"name": label} for label in body["labels"]]


def _gh_reviewers(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    pr["reviewers"] += body.get("reviewers", [])
    pr["team_reviewers"] += body.get("team_reviewers", [])
    return 201, pr


def _gh_checks(forge, query, body, owner, name, sha):
    pr = next((pr for pr in forge.prs if pr["head_sha"] == sha), None)
    runs = pr["checks"] if pr else list(_DEFAULT_CHECKS)
    return 200, {"total_count": len(runs), "check_runs": runs}


_R = r"/repos/([^/]+)/([^/]+)"
_GITHUB = [
    ("GET", _R, _gh_repo),
    ("GET", _R + "/pulls", _gh_list),
    ("POST", _R + "/pulls", _gh_create),
    ("PATCH", _R + r"/pulls/(\d+)", _gh_update),
    ("GET", _R + r"/pulls/(\d+)", _gh_get),
    ("POST", _R + r"/issues/(\d+)/labels", _gh_labels),
    ("POST", _R + r"/pulls/(\d+)/requested_reviewers", _gh_reviewers),
    ("GET", _R + r"/commits/(\w+)/check-runs", _gh_checks),
    ("GET", _R + r"/commits/(\w+)/status", _gh_status),
    ("GET", _R + r"/pulls/(\d+)/reviews", _gh_reviews),
    ("GET", _R + r"/issues/(\d+)/comments", _gh_comments),
    ("POST", _R + r"/issues/(\d+)/comments", _gh_comment),
    ("PUT", _R + r"/pulls/(\d+)/merge", _gh_merge),
    ("DELETE", _R + r"/git/refs/heads/(.+)", _gh_delete_ref),
]


# --- GitLab ----------------------------------------------------------------------------------

def _slug(project_id: str) -> str:
    return urllib.parse.unquote(project_id)


def _mr(pr):
    return {"iid": pr["number"], "web_url": pr["html_url"].replace("/pull/", "/-/merge_requests/"),
            "title": pr["title"], "description": pr["body"], "source_branch": pr["head"],
            "target_branch": pr["base"], "labels": pr["labels"], "reviewers": pr["reviewers"],
            "state": "opened" if pr["state"] == "open" else pr["state"],
            "head_pipeline": {"status": pr.get("pipeline", "success")} if pr.get("pipeline", "success") else None,
            "sha": pr["head_sha"], "draft": pr["draft"], "created_at": pr["created_at"],
            **({"has_conflicts": not pr["mergeable"]} if pr["mergeable"] is not None else {})}


def _gl_project(forge, query, body, project):
    return 200, {"default_branch": "main", "web_url": f"{WEB}/{_slug(project)}"}


def _gl_list(forge, query, body, project):
    return 200, [_mr(pr) for pr in forge.prs if pr["slug"] == _slug(project)
                 and pr["head"] == query["source_branch"] and pr["state"] == "open"]


def _gl_create(forge, query, body, project):
    slug = _slug(project)
    if _open_exists(forge, slug, body["source_branch"], body["target_branch"]):
        return 409, {"message": ["Another open merge request already exists for this source branch: !1"]}
    pr = _new_pr(forge, slug, {"head": body["source_branch"], "base": body["target_branch"],
                               "title": body["title"], "body": body["description"]})
    return 201, _mr(pr)


def _gl_update(forge, query, body, project, iid):
    pr = _gh_pr(forge, iid, _slug(project))
    if "title" in body:
        pr["title"] = body["title"]
    if "description" in body:
        pr["body"] = body["description"]
    if "add_labels" in body:
        pr["labels"] += body["add_labels"].split(",")
    if "reviewer_ids" in body:
        pr["reviewers"] = body["reviewer_ids"]
    if body.get("state_event") == "close":
        pr["state"] = "closed"
    return 200, _mr(pr)


def _gl_approvals(forge, query, body, project, iid):
    pr = _gh_pr(forge, iid, _slug(project))
    return 200, {"approved_by": [{"user": {"username": r["user"]}} for r in pr["reviews"]
                                 if r["state"] == "APPROVED"]}


def _gl_notes(forge, query, body, project, iid):
    return 200, [{"body": text, "system": False} for text in _gh_pr(forge, iid, _slug(project))["comments"]]


def _gl_note(forge, query, body, project, iid):
    _gh_pr(forge, iid, _slug(project))["comments"].append(body["body"])
    return 201, {"body": body["body"]}


def _gl_merge(forge, query, body, project, iid):
    pr = _gh_pr(forge, iid, _slug(project))
    pr["merge_method"] = "squash" if body.get("squash") else "merge"
    status, data = _merge(forge, pr, body.get("sha"))
    return status, (_mr(pr) if status == 200 else data)


def _gl_delete_branch(forge, query, body, project, branch):
    return _delete_branch(forge, _slug(project), branch)


def _gl_get(forge, query, body, project, iid):
    return 200, _mr(_gh_pr(forge, iid, _slug(project)))


def _gl_users(forge, query, body):
    user_id = forge.users.get(query["username"])
    return 200, [{"id": user_id, "username": query["username"]}] if user_id else []


_P = r"/api/v4/projects/([^/]+)"
_GITLAB = [
    ("GET", _P, _gl_project),
    ("GET", _P + "/merge_requests", _gl_list),
    ("POST", _P + "/merge_requests", _gl_create),
    ("PUT", _P + r"/merge_requests/(\d+)", _gl_update),
    ("GET", _P + r"/merge_requests/(\d+)", _gl_get),
    ("GET", r"/api/v4/users", _gl_users),
    ("GET", _P + r"/merge_requests/(\d+)/approvals", _gl_approvals),
    ("GET", _P + r"/merge_requests/(\d+)/notes", _gl_notes),
    ("POST", _P + r"/merge_requests/(\d+)/notes", _gl_note),
    ("PUT", _P + r"/merge_requests/(\d+)/merge", _gl_merge),
    ("DELETE", _P + r"/repository/branches/(.+)", _gl_delete_branch),
]


def serve(kind: str, token: str) -> tuple[FakeForge, ThreadingHTTPServer]:
    """Start a fake ``kind`` forge on an ephemeral loopback port; stop it with ``shutdown()``."""
    forge = FakeForge(kind, token)
    handler = type("Handler", (_Handler,), {"forge": forge})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    forge.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return forge, server
