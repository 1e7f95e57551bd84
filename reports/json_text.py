"""JSON text a person can still read, written at the speed of the C encoder.

``json.dumps(indent=2)`` falls back to the pure-Python encoder: for a run over many
repositories that was most of the time the parent spent on its reports. Here containers are
indented down to a depth, and deeper ones, or ones holding no container, are written on one
line by the C encoder: a finding or a SARIF result per line, which also greps and diffs well.
"""

from __future__ import annotations

import json
from typing import Any, Callable

_ONE_LINE = json.JSONEncoder(ensure_ascii=False).encode
#: Containers this deep (the top one is 0) are written on one line: a run record's findings,
#: a SARIF log's results.
ONE_LINE_DEPTH = 4


def readable_json(value: Any) -> str:
    """``value`` as JSON text (with a final newline): outer levels indented by two spaces."""
    parts: list[str] = []
    _write(value, 0, parts.append)
    parts.append("\n")
    return "".join(parts)


def _write(value: Any, depth: int, out: Callable[[str], Any]) -> None:
    if depth >= ONE_LINE_DEPTH or not _holds_containers(value):
        out(_ONE_LINE(value))
        return
    inner = "\n" + "  " * (depth + 1)
    if isinstance(value, dict):
        out("{")
        for number, (key, item) in enumerate(value.items()):
            out(("," if number else "") + inner + _ONE_LINE(key) + ": ")
            _write(item, depth + 1, out)
        out("\n" + "  " * depth + "}")
    else:
        out("[")
        for number, item in enumerate(value):
            out(("," if number else "") + inner)
            _write(item, depth + 1, out)
        out("\n" + "  " * depth + "]")


def _holds_containers(value: Any) -> bool:
    """A non-empty dict (with str keys only) or list holding a dict or list."""
    if isinstance(value, dict):
        return any(isinstance(item, (dict, list, tuple)) for item in value.values()) \
            and all(isinstance(key, str) for key in value)
    if isinstance(value, (list, tuple)):
        return any(isinstance(item, (dict, list, tuple)) for item in value)
    return False
