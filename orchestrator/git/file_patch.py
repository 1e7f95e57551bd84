"""The ``--dry-run`` diff of one file, exactly as ``git apply`` needs it to recreate the bytes.

A UTF-8 file (BOM, CRLF and all) gets a readable unified diff: lines split at ``\\n`` only, as
git splits them, and git's ``\\ No newline at end of file`` marker where the last line has
none. A file in another encoding (latin-1, GBK) cannot be carried in a UTF-8 patch text, so it
gets a git binary patch (zlib + base85, as ``git diff --binary`` writes) that applies exactly.
"""

from __future__ import annotations

import base64
import difflib
import re
import zlib

from npu_codemod.orchestrator.git import repository as gitrepo

_NO_NEWLINE = "\\ No newline at end of file\n"


def file_patch(path: str, mode: str, old: bytes, new: bytes) -> str:
    """A ``git apply``-able diff turning ``old`` into ``new`` at ``path``."""
    try:
        old_text, new_text = old.decode("utf-8"), new.decode("utf-8")
    except UnicodeDecodeError:
        return _binary_patch(path, mode, old, new)
    diff = difflib.unified_diff(_lines(old_text), _lines(new_text), quote_path(f"a/{path}"),
                                quote_path(f"b/{path}"))
    return "".join(line if line.endswith("\n") else line + "\n" + _NO_NEWLINE for line in diff)


#: The C escapes git writes in a quoted path; other control bytes and bytes from 0x80 are octal.
_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0a: "\\n", 0x0b: "\\v", 0x0c: "\\f",
            0x0d: "\\r", 0x22: '\\"', 0x5c: "\\\\"}


def quote_path(name: str) -> str:
    """``name`` as git writes it in a patch header (``core.quotePath``, the default): as it is,
    or in double quotes with C escapes when it holds a control byte, ``"``, ``\\`` or a byte
    from 0x80 (a path with a tab or a newline would otherwise break the header)."""
    raw = name.encode("utf-8", "surrogateescape")
    if not any(byte < 0x20 or byte >= 0x7f or byte in (0x22, 0x5c) for byte in raw):
        return name
    return '"' + "".join(_ESCAPES.get(byte) or (f"\\{byte:03o}" if byte < 0x20 or byte >= 0x7f else chr(byte))
                         for byte in raw) + '"'


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def _binary_patch(path: str, mode: str, old: bytes, new: bytes) -> str:
    return (f"diff --git {quote_path('a/' + path)} {quote_path('b/' + path)}\n"
            f"index {gitrepo.blob_id(old)}..{gitrepo.blob_id(new)} {mode}\n"
            f"GIT binary patch\n{_literal(new)}\n{_literal(old)}\n")


def _literal(data: bytes) -> str:
    """One ``literal`` hunk: zlib data in base85 lines of at most 52 bytes, each prefixed by
    its length (``A``-``Z`` for 1-26, ``a``-``z`` for 27-52)."""
    packed = zlib.compress(data, 9)
    lines = [f"literal {len(data)}\n"]
    for start in range(0, len(packed), 52):
        chunk = packed[start:start + 52]
        size = chr(ord("A") + len(chunk) - 1) if len(chunk) <= 26 else chr(ord("a") + len(chunk) - 27)
        lines.append(size + base64.b85encode(chunk, pad=True).decode("ascii") + "\n")
    return "".join(lines)
