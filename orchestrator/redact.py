"""Masking credentials (``https://user:token@host``) wherever a URL is shown or stored."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")


def mask_secrets(text: str) -> str:
    """Replace the userinfo of every URL in ``text`` with ``***``."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}***@", text)
