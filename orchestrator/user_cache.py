"""The per-user cache folder: the default workspace, and what start-up keeps between runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def user_cache() -> Path:
    """``$XDG_CACHE_HOME/npu-codemod`` (else ``~/.cache/npu-codemod``), wherever the command
    runs; a relative ``XDG_CACHE_HOME`` is ignored, as the XDG specification says."""
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return root / "npu-codemod"


def start_up_cache(name: str) -> Optional[Path]:
    """The folder ``name`` of the per-user cache, for what start-up keeps between runs (the
    page's compiled template, the parser's checked canary); None where the user has no home
    folder to put it in (no ``HOME`` nor account entry): such a cache is never a reason to fail."""
    try:
        return user_cache() / name
    except RuntimeError:  # Path.home(): "Could not determine home directory."
        return None
