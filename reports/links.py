"""Web links to a repo's branch, commit and pull request, when its location is a forge URL.

Only ``https``/``http`` links are ever produced: autoescaping stops markup, not a
``javascript:`` URL in an ``href``, so anything else is shown as text instead.
"""

from __future__ import annotations

import re
from typing import Optional
from urllib.parse import quote, urlsplit

from npu_codemod.orchestrator.results import RepoResult

_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!//)[^\s]+)$")  # git@host:o/r.git


def web_url(location: str) -> Optional[str]:
    """``https://host/owner/repo`` for a clone URL of a web forge, else None (local paths)."""
    parts = urlsplit(location)
    if parts.scheme in ("https", "http", "ssh", "git") and parts.hostname:
        host, path = parts.hostname, parts.path
    else:
        match = _SCP.match(location)
        if not match or "/" in match.group("host") or location.startswith(("/", ".")):
            return None
        host, path = match.group("host"), match.group("path")
    path = path.strip("/").removesuffix(".git")
    if not path or "/" not in path:
        return None
    scheme = parts.scheme if parts.scheme in ("https", "http") else "https"
    return f"{scheme}://{host}/{path}"


def safe_http(url: Optional[str]) -> Optional[str]:
    """``url`` if it is an http(s) URL (safe in an ``href``), else None."""
    return url if url and urlsplit(url).scheme in ("https", "http") else None


def repo_links(repo: RepoResult) -> dict[str, Optional[str]]:
    """Links for the ``branch``, ``commit`` and ``pr`` of one repo result (None: unknown)."""
    base = web_url(repo.location or "")
    sep = "/-/" if base and "gitlab" in (urlsplit(base).hostname or "") else "/"
    branch, commit = repo.branch, repo.commit
    return {
        "branch": f"{base}{sep}tree/{quote(branch, safe='/')}" if base and branch else None,
        "commit": f"{base}{sep}commit/{quote(commit)}" if base and commit else None,
        "pr": safe_http(repo.pr_url),
    }


def pull_request_links(repo: RepoResult) -> list[tuple[str, Optional[str]]]:
    """(label, link) of each pull request of a repo: the group's name for a split change."""
    return [(pr.group or pr.url or pr.branch, safe_http(pr.url)) for pr in repo.pull_requests]
