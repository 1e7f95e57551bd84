"""The per-user cache folder: the default workspace, and what start-up keeps between runs."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache() -> Path:
    """``$XDG_CACHE_HOME/npu-codemod`` (else ``~/.cache/npu-codemod``), wherever the command
    runs; a relative ``XDG_CACHE_HOME`` is ignored, as the XDG specification says."""
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return root / "npu-codemod"
