"""Credentials in a repository URL, kept out of every file: git gets them in its environment.

A repo list may name ``https://user:token@host/org/repo.git``. Stored as the clone cache's
remote, the token would sit in plain text in ``<workspace>/clones/<repo>/config`` for as long as
the cache lives. Instead the cache's remote is the URL without them, and each git command that
talks to that remote (clone, fetch, push) gets an ``Authorization`` header, scoped to that URL,
through ``GIT_CONFIG_*`` environment variables (git >= 2.31): in no file, and not in the
command line that ``ps`` shows other users. Only http(s) userinfo is moved: an ``ssh://git@``
user name is no secret, and ssh keys never were in the URL.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Mapping
from urllib.parse import unquote

#: http(s) userinfo runs to the last ``@`` before the path (``user:P@ss@host``: one password).
_HTTP_USERINFO = re.compile(r"^(?P<scheme>https?)://(?P<userinfo>[^/?#]*)@(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its http(s) userinfo, and the environment that gives git the same access.

    Read as text, not with ``urlsplit``: a URL git cannot use (a bad port, an unclosed
    ``[``) still loses its credentials, and git names its error with the public URL.
    """
    match = _HTTP_USERINFO.match(url)
    if match is None:
        return url, {}
    user, _, password = match.group("userinfo").partition(":")
    public = f"{match.group('scheme')}://{match.group('rest')}"
    secret = f"{unquote(user)}:{unquote(password)}"
    header = "Authorization: Basic " + base64.b64encode(secret.encode()).decode()
    return public, _git_config({f"http.{public}.extraHeader": header})


def _git_config(settings: Mapping[str, str]) -> dict[str, str]:
    """``GIT_CONFIG_*`` variables adding ``settings`` after any the caller's environment has."""
    first = int(os.environ.get("GIT_CONFIG_COUNT", "0") or 0)
    env = {"GIT_CONFIG_COUNT": str(first + len(settings))}
    for index, (key, value) in enumerate(settings.items(), start=first):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env
