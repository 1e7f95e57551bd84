"""Masking credentials wherever text is shown or stored: URL userinfo (to the last ``@``
before the host), token query parameters (``access_token=``, ``private_token=``...), known
tokens and token-shaped strings.

A token read in this process (a forge API token) is registered with :func:`add_secret`, and
from then on :func:`mask_secrets` replaces it in any text, whatever carried it there. The
values of the token environment variables are masked too, in every process (workers included).
:func:`mask_record` masks a whole run record, from which every report is written.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: Tokens known by their shape (GitHub, GitLab, Slack, AWS key ids, JWTs): masked wherever
#: they appear, whoever printed them (the code ``verify`` runs, say).
_TOKEN_SHAPES = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|"
                           r"xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|"
                           r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,})")
#: Where a token shape can start, without the ``\b``: ``re`` tries a pattern that opens with a
#: ``\b`` at every character, one that opens with these letters only where one of them stands
#: (a run record's strings: 12 -> 5 ms for twelve repositories). No match of it, no token.
_TOKEN_STARTS = re.compile(r"gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|eyJ")
#: A URL's userinfo runs to the *last* ``@`` before the path: ``user:P@ss@host`` is one.
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/?#\s]*)@")
#: Query parameters that carry a token (GitHub, GitLab, OAuth).
_TOKEN_PARAMS = re.compile(r"(?i)(?P<name>[?&;](?:access_token|private_token|job_token|oauth_token|token)=)"
                           r"(?P<value>[^&#;\s'\"]+)")
_SECRETS: set[str] = set()
#: Environment variables that hold tokens: their values never appear in output or reports.
SECRET_ENV_VARS = ("NPU_CODEMOD_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN")
#: Shorter values in those variables are not tokens (masking "x" everywhere garbles text).
MIN_ENV_SECRET = 8


def add_secret(value: str) -> None:
    """Mask ``value`` in everything :func:`mask_secrets` sees from now on (this process)."""
    if value:
        _SECRETS.add(value)


def mask_secrets(text: str) -> str:
    """Replace the userinfo of every URL and every known secret in ``text`` with ``***``."""
    return _mask(text, _secrets())


def mask_record(value: Any) -> Any:
    """A copy of JSON-like ``value`` (dicts, lists, tuples, strings) with every string masked."""
    secrets = _secrets()

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _mask(item, secrets)
        if isinstance(item, dict):
            return {key: walk(inner) for key, inner in item.items()}
        if isinstance(item, (list, tuple)):
            return type(item)(walk(inner) for inner in item)
        return item

    return walk(value)


def _secrets() -> list[str]:
    values = set(_SECRETS)
    values.update(value for value in (os.environ.get(name, "").strip() for name in SECRET_ENV_VARS)
                  if len(value) >= MIN_ENV_SECRET)
    return sorted(values, key=len, reverse=True)


def _mask(text: str, secrets: list[str]) -> str:
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
    if "token=" in text.lower():
        text = _TOKEN_PARAMS.sub(lambda m: f"{m.group('name')}***", text)
    if _TOKEN_STARTS.search(text) is not None:
        text = _TOKEN_SHAPES.sub("***", text)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "***")
    return text
