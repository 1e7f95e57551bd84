"""A stand-in forge on 127.0.0.1: the subset of the GitHub v3 and GitLab v4 APIs npu-codemod uses.

State lives in memory; every request is recorded (method, path, query, JSON body, time) so a
test can assert exactly what the client asked. Knobs reproduce a forge's bad days: a 403 with
rate-limit headers, and a PR opened by someone else between our lookup and our create (422 on
GitHub, 409 on GitLab).
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
        routes = _GITHUB if forge.kind == "github" else _GITLAB
        for method, pattern, action in routes:
            match = re.fullmatch(pattern, parsed.path)
            if method == self.command and match:
                status, data = action(forge, query, body or {}, *match.groups())
                return self._reply(status, data)
        self._reply(404, {"message": "Not Found"})

    do_GET = do_POST = do_PATCH = do_PUT = _handle

    def _reply(self, status: int, data: Any, headers: Optional[dict[str, str]] = None) -> None:
        raw = json.dumps(data).encode()
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
          "html_url": f"{WEB}/{slug}/pull/{number}", "head_sha": "c0ffee"}
    forge.prs.append(pr)
    return pr


def _gh_pr(forge, number, slug):
    return next(pr for pr in forge.prs if pr["number"] == int(number) and pr["slug"] == slug)


def _gh_update(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    pr.update({k: v for k, v in body.items() if k in ("title", "body")})
    return 200, pr


def _gh_get(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    return 200, {**pr, "head": {"sha": pr["head_sha"], "ref": pr["head"]}}


def _gh_labels(forge, query, body, owner, name, number):
    _gh_pr(forge, number, f"{owner}/{name}")["labels"] += body["labels"]
    return 200, [{"name": label} for label in body["labels"]]


def _gh_reviewers(forge, query, body, owner, name, number):
    pr = _gh_pr(forge, number, f"{owner}/{name}")
    pr["reviewers"] += body.get("reviewers", [])
    pr["team_reviewers"] += body.get("team_reviewers", [])
    return 201, pr


def _gh_checks(forge, query, body, owner, name, sha):
    return 200, {"total_count": 2, "check_runs": [
        {"name": "tests", "status": "completed", "conclusion": "success"},
        {"name": "lint", "status": "in_progress", "conclusion": None}]}


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
]


# --- GitLab ----------------------------------------------------------------------------------

def _slug(project_id: str) -> str:
    return urllib.parse.unquote(project_id)


def _mr(pr):
    return {"iid": pr["number"], "web_url": pr["html_url"].replace("/pull/", "/-/merge_requests/"),
            "title": pr["title"], "description": pr["body"], "source_branch": pr["head"],
            "target_branch": pr["base"], "labels": pr["labels"], "reviewers": pr["reviewers"],
            "state": "opened" if pr["state"] == "open" else pr["state"],
            "head_pipeline": {"status": "success"}}


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
    return 200, _mr(pr)


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
]


def serve(kind: str, token: str) -> tuple[FakeForge, ThreadingHTTPServer]:
    """Start a fake ``kind`` forge on an ephemeral loopback port; stop it with ``shutdown()``."""
    forge = FakeForge(kind, token)
    handler = type("Handler", (_Handler,), {"forge": forge})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    forge.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return forge, server
