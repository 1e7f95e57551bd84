"""JSON text a person can still read, written at the speed of the C encoder.

``json.dumps(indent=2)`` falls back to the pure-Python encoder: for a run over many
repositories that was most of the time the parent spent on its reports. Here containers are
indented down to a depth, and deeper ones, or ones holding no container, are written on one
line by the C encoder: a finding or a SARIF result per line, which also greps and diffs well.

The text goes out piece by piece, so a file is written as its value is read: a lazy
sequence (an iterable that is not a list or tuple, such as a batch's repos read back from
disk, or a SARIF log's runs made one at a time) is a list written item by item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Callable

_ONE_LINE = json.JSONEncoder(ensure_ascii=False).encode
#: Containers this deep (the top one is 0) are written on one line: a run record's findings,
#: a SARIF log's results.
ONE_LINE_DEPTH = 4


def readable_json(value: Any) -> str:
    """``value`` as JSON text (with a final newline): outer levels indented by two spaces."""
    parts: list[str] = []
    write_readable_json(value, parts.append)
    return "".join(parts)


def write_readable_json(value: Any, out: Callable[[str], Any]) -> None:
    """:func:`readable_json`, handed to ``out`` in pieces (``stream.write``); the items of a
    lazy sequence are read one at a time and written on lines of their own."""
    _write(value, 0, out)
    out("\n")


def _write(value: Any, depth: int, out: Callable[[str], Any]) -> None:
    if _lazy(value):
        _write_items(value, depth, out)
    elif depth >= ONE_LINE_DEPTH or not _holds_containers(value):
        out(_ONE_LINE(value))
    elif isinstance(value, dict):
        inner = "\n" + "  " * (depth + 1)
        out("{")
        for number, (key, item) in enumerate(value.items()):
            out(("," if number else "") + inner + _ONE_LINE(key) + ": ")
            _write(item, depth + 1, out)
        out("\n" + "  " * depth + "}")
    else:
        _write_items(value, depth, out)


def _write_items(items: Iterable[Any], depth: int, out: Callable[[str], Any]) -> None:
    inner = "\n" + "  " * (depth + 1)
    out("[")
    number = -1
    for number, item in enumerate(items):
        out(("," if number else "") + inner)
        _write(item, depth + 1, out)
    out("\n" + "  " * depth + "]" if number >= 0 else "]")


def _lazy(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict, list, tuple))


def _holds_containers(value: Any) -> bool:
    """A non-empty dict (with str keys only) or list holding a dict, list or lazy sequence."""
    if isinstance(value, dict):
        return any(_container(item) for item in value.values()) and all(isinstance(key, str) for key in value)
    if isinstance(value, (list, tuple)):
        return any(_container(item) for item in value)
    return False


def _container(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple)) or _lazy(value)
