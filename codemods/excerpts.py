"""Code excerpts for findings that need a person: the lines around the site, numbered.

Reports show them next to the instruction, so a reader sees the code without opening the
repository. They come from the *original* bytes (where the finding's line points) and are
bounded: a few lines, each cut to a fixed width, whatever the file looks like.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from .findings import Finding
from .source import UndecodableSource, decode_source

#: Lines shown before and after the site.
CONTEXT_LINES = 2
#: Longer lines are cut (minified or generated code must not blow up the report).
MAX_LINE_CHARS = 160
NEEDS_PERSON = ("unmigrated", "error")


def excerpt(text: str, line: int, context: int = CONTEXT_LINES) -> str:
    """Lines ``line - context .. line + context`` of ``text``, numbered, the site marked ``>``.

    ``"  9 | x = 1\\n> 10 | ds.batch(32)\\n"``; empty when ``line`` is outside the text.
    """
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    first, last = max(1, line - context), min(len(lines), line + context)
    width = len(str(last))
    rows = []
    for number in range(first, last + 1):
        code = lines[number - 1].rstrip()
        if len(code) > MAX_LINE_CHARS:
            code = code[:MAX_LINE_CHARS - 1] + "\u2026"
        marker = ">" if number == line else " "
        rows.append(f"{marker} {number:>{width}} | {code}".rstrip() + "\n")
    return "".join(rows)


def with_snippets(findings: Iterable[Finding], data: bytes) -> list[Finding]:
    """``findings`` of one file, those that need a person carrying an excerpt of ``data``."""
    findings = list(findings)
    if not any(f.status in NEEDS_PERSON for f in findings):
        return findings
    text = source_text(data)
    return [dataclasses.replace(f, snippet=excerpt(text, f.line)) if f.status in NEEDS_PERSON else f
            for f in findings]


def source_text(data: bytes) -> str:
    """The decoded text of a file's bytes; undecodable bytes become U+FFFD, never an error."""
    try:
        return decode_source(data).text
    except UndecodableSource:
        return data.decode("utf-8", errors="replace")
