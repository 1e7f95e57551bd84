"""Masking credentials wherever text is shown or stored: URL userinfo and known tokens.

A token read in this process (a forge API token) is registered with :func:`add_secret`, and
from then on :func:`mask_secrets` replaces it in any text, whatever carried it there.
"""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_SECRETS: set[str] = set()


def add_secret(value: str) -> None:
    """Mask ``value`` in everything :func:`mask_secrets` sees from now on (this process)."""
    if value:
        _SECRETS.add(value)


def mask_secrets(text: str) -> str:
    """Replace the userinfo of every URL and every registered secret in ``text`` with ``***``."""
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
